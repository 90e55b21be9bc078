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
// Threads: one progress thread per communicator makes every UCX call that
// touches requests (posting, progress, cancel); callers' threads take
// `ucx_mutex` for the few calls they make themselves (connect, expose,
// import). All public members are thread-safe. Destruction waits for the
// transfers in flight, each bounded by the timeout (parked ones are not
// waited for: the worker's destruction ends them, then their memory is
// freed).
#ifndef ANYDEV_SRC_TRANSPORT_COMMUNICATOR_H_
#define ANYDEV_SRC_TRANSPORT_COMMUNICATOR_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "api/objects.h"
#include "transport/put_flush.h"
#include "transport/ucx_library.h"

namespace anydev::core::transport {

struct Transfer;
struct Chunk;

// What a transfer does.
enum class TransferKind { send, recv, put, get };

// One connected peer. `ep` is used under ucx_mutex; `failed` (guarded by
// ucx_mutex) is set once, by UCX's error callback or a timed-out send;
// `puts` (progress thread) holds the puts waiting for remote completion.
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
// Owns the mapping and holds the buffer and communicator. Immutable.
struct ExposedRegion {
  std::shared_ptr<class Communicator> comm;
  std::shared_ptr<Allocation> allocation;
  ucp_mem_h memh = nullptr;
  std::vector<std::uint8_t> key;  // what a peer imports
  ~ExposedRegion();
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

class Communicator : public std::enable_shared_from_this<Communicator> {
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
  anydev_status_t import(int peer, const void* bytes, std::size_t size,
                         std::shared_ptr<RemoteRegion>* out);
  // "host" or "host,cuda": the memory types UCX reaches directly.
  std::string memory_types() const;

  // Called from UCX's endpoint error callback (progress thread).
  void peer_failed(Peer& peer, ucs_status_t status);
  // Called from the callback of a peer's put flush (progress thread).
  void put_flush_ended(Peer& peer, ucs_status_t status);
  // Destroys an imported remote key, or, while a parked transfer may still
  // use it, keeps it until that ends (any thread; takes ucx_mutex).
  void release_rkey(ucp_rkey_h rkey);

  const UcxLibrary& ucx() const { return *ucx_; }
  ucp_context_h ucp() const { return ucp_; }
  std::mutex ucx_mutex;  // every UCX call outside the progress thread's loop

 private:
  Communicator() = default;
  void run();
  void idle_wait();
  void wake();
  bool advance(Transfer& t);
  void post_chunk(Transfer& t, Chunk& c);
  void finish(Transfer& t, anydev_status_t status, std::string message);
  void start_flush(Peer& peer);
  void settle_flushes();
  void park(Transfer& t);
  bool parked_touched(Transfer* raw);
  void release_unparked();
  void free_parked(Transfer& t);
  bool direct(const Allocation& allocation, const anydev_buffer_s& handle,
              ucs_memory_type_t* type) const;
  anydev_status_t ensure_staging();

  std::shared_ptr<const ContextState> context_;
  const UcxLibrary* ucx_ = nullptr;
  ucp_context_h ucp_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::uint64_t memory_types_ = 0;  // UCP_ATTR_FIELD_MEMORY_TYPES
  std::uint32_t key_ = 0;
  std::uint32_t timeout_ms_ = 30000;
  std::vector<std::uint8_t> address_;
  std::vector<std::unique_ptr<Peer>> peers_;  // guarded by ucx_mutex

  // Staging: a private stream and pinned bounce buffers of chunk_bytes_.
  // Made on first use, under ucx_mutex; used by the progress thread only.
  std::size_t chunk_bytes_ = 4u << 20;
  bool force_staging_ = false;  // ANYDEV_UCX_FORCE_STAGING=1: stage all device memory (tests)
  int bounce_count_ = 8;        // half outbound, half inbound
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
  std::size_t in_flight_ = 0;                        // guarded by queue_mutex_
  bool stopping_ = false;                            // guarded by queue_mutex_
  bool sleeping_ = false;  // guarded by queue_mutex_: the progress thread waits on the fds
  // The transfers UCX's callbacks touched since the last pass (progress
  // thread only; callbacks run inside progress on that thread).
  std::vector<Transfer*> work_;
  // The peers whose put flush has ended and awaits settling (progress thread).
  std::vector<Peer*> flushed_;
  // Parked transfers (see above), and those UCX has let go of, to free
  // outside ucx_mutex: the progress thread's until it exits, then the
  // destructor's. Their remote keys, and those whose RemoteRegion is gone
  // meanwhile, are guarded by ucx_mutex.
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
