// SPDX-License-Identifier: Apache-2.0
// Communicator: one UCP context and worker for one anydev context, the
// endpoints to its peers, and the transfers in flight (docs/distributed.md).
//
// Ownership: the C handle (anydev_comm_s) owns the Communicator; every
// transfer holds the buffer it reads or writes (its Allocation) until UCX
// and the staging copies are done with it, so no memory is freed while UCX
// uses it. Exposed regions and imported remote keys hold the Communicator.
// A transfer that ends (timeout, failed peer) while UCX still holds requests
// it may never end (shared memory to a stalled peer) is *parked*: the
// communicator keeps its memory, bounce buffers and remote key (not the
// RemoteRegion, which would hold the communicator) until UCX ends them or
// the worker is destroyed.
//
// Threads: every UCX call is made under `ucx_mutex`. Transfers move in
// passes (pass()), made by the communicator's progress thread or, while a
// caller's thread waits at the transfer gate for one of them, by that
// thread (drive(); the progress thread stands aside meanwhile), so that a
// round trip costs no thread hand-over. All public members are thread-safe.
// Destruction waits for the transfers in flight, each bounded by the
// timeout (parked ones are not waited for: the worker's destruction ends
// them, then their memory is freed).
#ifndef ANYDEV_SRC_TRANSPORT_COMMUNICATOR_H_
#define ANYDEV_SRC_TRANSPORT_COMMUNICATOR_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "api/objects.h"
#include "transport/put_flush.h"
#include "transport/transfer_gate.h"
#include "transport/ucx_library.h"

namespace anydev::core::transport {

struct Transfer;
struct Chunk;

// What a transfer does.
enum class TransferKind { send, recv, put, get };

// One connected peer. `ep` is used under ucx_mutex; `failed` (guarded by
// ucx_mutex) is set once, by UCX's error callback or a timed-out send;
// `puts` (inside passes) holds the puts waiting for remote completion.
struct Peer {
  ucp_ep_h ep = nullptr;
  std::uint32_t key = 0;        // the peer's sender key (in its address bytes)
  bool detects_failure = true;  // UCX reports its death (else only the timeout does)
  anydev_status_t failed = ANYDEV_SUCCESS;
  std::string why;
  std::chrono::steady_clock::time_point failed_at{};
  class Communicator* owner = nullptr;
  int index = 0;
  PutFlush puts;
};

// A region of this process's memory that peers may put to and get from.
// Owns the mapping `memh` (null when the memory is an AllocatedMemory,
// which the buffer's allocation owns) and holds the buffer and
// communicator. Immutable.
struct ExposedRegion {
  std::shared_ptr<class Communicator> comm;
  std::shared_ptr<Allocation> allocation;
  ucp_mem_h memh = nullptr;
  std::vector<std::uint8_t> key;  // what a peer imports
  ~ExposedRegion();
};

// Memory UCX allocated and mapped for anydev_comm_expose_new (ucp_mem_map
// with UCP_MEM_MAP_ALLOCATE): UCX's shared-memory transports map such memory
// into peers, so their puts into it are plain stores. Owned by the release
// callback of the host buffer made over it (registered memory), whose
// allocation the region holds too: unmapped once both are released and the
// buffer's last use has completed. Holds the communicator. Immutable.
struct AllocatedMemory {
  std::shared_ptr<class Communicator> comm;
  ucp_mem_h memh = nullptr;
  void* address = nullptr;
  std::size_t bytes = 0;
  ~AllocatedMemory();
};

// A peer's exposed region, imported. Immutable.
struct RemoteRegion {
  std::shared_ptr<class Communicator> comm;
  int peer = 0;
  ucp_rkey_h rkey = nullptr;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  ~RemoteRegion();
};

class Communicator : public GateDriver, public std::enable_shared_from_this<Communicator> {
 public:
  // Creates UCP's context and worker and starts the progress thread.
  // `timeout_ms` 0: ANYDEV_UCX_TIMEOUT_MS, else the default (30000).
  static anydev_status_t create(std::shared_ptr<const ContextState> context,
                                std::uint32_t timeout_ms, std::shared_ptr<Communicator>* out);
  ~Communicator();

  const std::vector<std::uint8_t>& address() const { return address_; }
  std::uint32_t timeout_ms() const { return timeout_ms_; }
  anydev_status_t connect(const void* bytes, std::size_t size, int* peer);
  int peer_count();
  anydev_status_t enqueue(TransferKind kind, anydev_buffer_t buffer, int peer, std::uint32_t tag,
                          std::shared_ptr<RemoteRegion> remote, std::size_t remote_offset);
  anydev_status_t expose(anydev_buffer_t buffer, std::shared_ptr<ExposedRegion>* out);
  // Allocates `bytes` through UCX and exposes them (anydev_comm_expose_new):
  // *memory owns the mapping; *region carries its key and no allocation yet
  // (the caller sets the buffer's). Nothing is kept on failure.
  anydev_status_t allocate_exposed(const char* op, std::size_t bytes,
                                   std::shared_ptr<AllocatedMemory>* memory,
                                   std::shared_ptr<ExposedRegion>* region);
  anydev_status_t import(int peer, const void* bytes, std::size_t size,
                         std::shared_ptr<RemoteRegion>* out);
  // "host" or "host,cuda": the memory types UCX reaches directly.
  std::string memory_types() const;

  // Called from UCX's endpoint error callback (inside a pass).
  void peer_failed(Peer& peer, ucs_status_t status);
  // Called from the callback of a peer's put flush (inside a pass).
  void put_flush_ended(Peer& peer, ucs_status_t status);
  // GateDriver: passes on the calling thread until done(); false when
  // another thread drives already.
  bool drive(const std::function<bool()>& done) override;
  // Destroys an imported remote key, or, while a parked transfer may still
  // use it, keeps it until that ends (any thread; takes ucx_mutex).
  void release_rkey(ucp_rkey_h rkey);

  const std::shared_ptr<const ContextState>& context() const { return context_; }
  bool on_progress_thread() const { return std::this_thread::get_id() == progress_.get_id(); }
  const UcxLibrary& ucx() const { return *ucx_; }
  ucp_context_h ucp() const { return ucp_; }
  std::mutex ucx_mutex;  // every UCX call is made under it

 private:
  Communicator() = default;
  void run();
  // One pass: takes the submitted transfers, polls UCX, advances what can
  // move and ends what has ended. Returns UCX's progress count plus the
  // transfers ended. Any thread.
  int pass();
  void idle_wait();
  void wake();
  bool advance(Transfer& t);
  void post_chunk(Transfer& t, Chunk& c);
  void finish(Transfer& t, anydev_status_t status, std::string message);
  void start_flush(Peer& peer);
  void settle_flushes();
  void park(Transfer& t);
  bool parked_touched(Transfer* raw);
  void free_parked(Transfer& t);
  bool direct(const Allocation& allocation, const anydev_buffer_s& handle,
              ucs_memory_type_t* type) const;
  anydev_status_t ensure_staging();
  // A region's key: this communicator's key, the region's address and size,
  // and UCX's packed remote key of `memh`. Under ucx_mutex.
  anydev_status_t pack_key(const char* op, ucp_mem_h memh, const void* address, std::size_t bytes,
                           std::vector<std::uint8_t>* key);

  std::shared_ptr<const ContextState> context_;
  const UcxLibrary* ucx_ = nullptr;
  ucp_context_h ucp_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::uint64_t memory_types_ = 0;  // UCP_ATTR_FIELD_MEMORY_TYPES
  std::uint32_t key_ = 0;
  std::uint32_t timeout_ms_ = 30000;
  std::vector<std::uint8_t> address_;
  std::vector<std::unique_ptr<Peer>> peers_;  // guarded by ucx_mutex
  // peers_.size(), readable without ucx_mutex: an enqueue checks its peer
  // without waiting for a pass (which may be copying megabytes) to end.
  std::atomic<int> connected_{0};

  // Staging: a private stream and pinned bounce buffers of chunk_bytes_.
  // Made on first use, under ucx_mutex; used inside passes only.
  std::size_t chunk_bytes_ = 4u << 20;
  bool force_staging_ = false;  // ANYDEV_UCX_FORCE_STAGING=1: stage all device memory (tests)
  // ANYDEV_UCX_PEER_FAILURE (default 1): endpoints ask UCX for peer failure
  // detection; 0 trades it for UCX's zero-copy rendezvous over tcp.
  bool detect_peer_failure_ = true;
  int bounce_count_ = 8;  // half outbound, half inbound
  anydev_bk_stream_t staging_stream_ = nullptr;
  struct Bounce {
    void* handle = nullptr;
    void* address = nullptr;
    anydev_bk_event_t event = nullptr;
    bool busy = false;
  };
  std::vector<Bounce> bounces_;

  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<std::shared_ptr<Transfer>> submitted_;  // guarded by queue_mutex_
  // submitted_ is non-empty: a pass takes queue_mutex_ only then.
  std::atomic<bool> has_submitted_{false};
  std::size_t in_flight_ = 0;  // guarded by queue_mutex_
  bool stopping_ = false;      // guarded by queue_mutex_
  bool sleeping_ = false;      // guarded by queue_mutex_: the progress thread waits on the fds
  // The transfers UCX's callbacks touched since the last pass (callbacks
  // run inside progress). Guarded by ucx_mutex, like the rest of a pass's
  // state below.
  std::vector<Transfer*> work_;
  // The peers whose put flush has ended and awaits settling.
  std::vector<Peer*> flushed_;
  // The transfers taken from submitted_ and not yet ended; lanes order the
  // transfers with one (peer, tag, direction); `waiting_` holds, per stream
  // in enqueue order, those whose stream's earlier work may not have
  // completed (a stream's events complete in order, so only each queue's
  // oldest is queried); `staged_` the staged ones that have held a bounce
  // buffer (polled every pass); `bounce_waiters_` (outbound, inbound) those
  // that found none free, in the order they asked; `next_scan_` when
  // deadlines and failed peers are next checked.
  std::unordered_map<Transfer*, std::shared_ptr<Transfer>> active_;
  std::map<std::tuple<int, std::uint32_t, bool>, std::deque<Transfer*>> lanes_;
  std::map<anydev_bk_stream_t, std::deque<Transfer*>> waiting_;
  std::vector<Transfer*> staged_;
  std::deque<Transfer*> bounce_waiters_[2];
  std::vector<Transfer*> pass_work_;
  std::chrono::steady_clock::time_point next_scan_{};
  unsigned scan_tick_ = 0;  // passes since the clock was last read for the scan
  // 1 while a caller's thread drives; the progress thread then waits on
  // driver_cv_ (under queue_mutex_) instead of polling.
  std::atomic<int> driving_{0};
  std::condition_variable driver_cv_;
  // Parked transfers (see above), and those UCX has let go of, which the
  // pass that saw it frees outside ucx_mutex (the destructor frees what is
  // left). All guarded by ucx_mutex, with the remote keys of parked
  // transfers and those whose RemoteRegion is gone meanwhile.
  std::unordered_map<Transfer*, std::shared_ptr<Transfer>> parked_;
  std::vector<std::shared_ptr<Transfer>> unparked_;
  std::vector<ucp_rkey_h> parked_rkeys_;  // one entry per parked transfer using it
  std::vector<ucp_rkey_h> orphan_rkeys_;  // released by their RemoteRegion while parked

  int ucx_fd_ = -1;   // UCX's event fd (ucp_worker_get_efd)
  int wake_fd_ = -1;  // an eventfd: new work or shutdown wakes the idle thread
  std::thread progress_;
  friend struct Transfer;
};

}  // namespace anydev::core::transport

#endif  // ANYDEV_SRC_TRANSPORT_COMMUNICATOR_H_
