// SPDX-License-Identifier: Apache-2.0
// CachingPool: the caching allocator of one (backend, device, memory kind).
// Freed blocks stay allocated in the backend and serve later requests of the
// same size class (size_classes.h), so that a hot allocate/release loop never
// reaches the backend (no syscall, no driver call).
//
// When a block may be reused. A block comes back with the stream that owns it
// (every other stream that used it has already been made to wait for, so the
// owner's work covers every use) and, if any stream work touched it, an event
// recorded on that owner stream after its last use (shared by the blocks
// released in a row there, release_event.h). It is handed out again:
//   - at once, when no stream work ever touched it;
//   - at once, for device memory requested on its owner stream: the new
//     user's work is queued behind the old user's on that stream (device
//     memory is only touched through stream-ordered work, see anydev.hpp);
//   - otherwise only once its event has completed (queried, never waited
//     for). Host memory always takes this path: a new host buffer may be
//     written by the CPU at once, so its stream work must really be finished.
// Release never synchronizes.
//
// Cost. Each size class keeps two lists: `ready` (no event: reusable by
// anyone at once, newest first) and `pending` (an event not yet seen
// complete, oldest first). A request takes the newest ready block, else the
// newest pending one when it is device memory on the caller's stream, else
// queries at most kQueriesPerRequest of the oldest pending events. So taking
// and giving back are O(1), whatever the number of cached blocks. A backend
// that answers event_query from memory (ANYDEV_BK_FLAG_CHEAP_EVENT_QUERY:
// the cpu) is asked at once whether the release event has completed; if so
// the block goes to `ready` and the event straight back to the event pool,
// so a block released on an idle stream holds no event and its trim hands
// the reclaimer only a free: with many live buffers, an event per cached
// block (made, destroyed and given back under the releasing thread's lock)
// made a release cost grow with their number (docs/performance.md).
//
// Trimming. The pool keeps at most release_threshold() + bytes_in_use / 4
// bytes cached (the block given back last is always kept, so that a loop
// that reuses one size stays on the fast path). When a give_back takes it
// past that limit, the oldest cached blocks are handed to the reclaimer
// thread until the cache is an eighth below the limit (kTrimSlackDivisor;
// setting the threshold trims to the limit itself), as one batch in which
// each block is freed once its own event has completed (a block that a slow
// stream still uses holds up no other): the caller never calls memory_free.
// The slack matters: trimmed to the limit exactly, every release past it
// would trim one block, a request and a reclaimer wake-up per release.
//
// Out of memory. When the backend fails an allocation with OUT_OF_MEMORY and
// the pool held cached blocks, it frees them all -- waiting for the events of
// those still in use by a stream, since the caller is about to fail anyway --
// and tries once more.
//
// Small device blocks. A pool made with `carve` takes its blocks of the
// smaller size classes from a BlockCarver (block_carver.h) instead of one
// driver allocation each; whatever frees a block (a trim, release_cached,
// the out-of-memory retry) hands it back to the carver, which frees a
// segment with its last block.
//
// With caching off (ANYDEV_POOL=0) the pool only keeps statistics: every
// request goes to the backend and give_back() hands the block to the usual
// stream-ordered release.
//
// Release paths never throw, and the only thing they allocate is a trim's
// batch list (without memory for it, each block is handed over on its own):
// the bookkeeping node of a block (PoolNode) is made when the backend
// allocates the block and travels with it. Events come from, and go back
// to, the event pool of the device (event_pool.h; bounded, never allocating
// on give-back), shared with cross-stream ordering and the reclaimer.
//
// Ownership: the pool owns the cached blocks and one reference each to their
// release events, and frees them through the backend table (an event goes
// back to the event pool with its last reference). The
// event pool is the process's (pool_registry.h passes it), or the pool's own
// when none is given (pools that unit tests make). Blocks handed out belong to their
// Allocation until given back. Every node's storage belongs to the pool
// (chunks, freed when the pool is destroyed -- only tests destroy pools);
// a handed-out node is lent to the block's Allocation.
// Thread-safe: one mutex, held only for bookkeeping (backend calls are made
// outside it, except at most kQueriesPerRequest event_query calls per
// request).
#ifndef ANYDEV_SRC_MEMORY_POOL_CACHING_POOL_H_
#define ANYDEV_SRC_MEMORY_POOL_CACHING_POOL_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "anydev/backend.h"
#include "memory/pool/block_carver.h"
#include "memory/release_event.h"
#include "memory/stream_ordered_release.h"
#include "support/core_mutex.h"

namespace anydev::core {

struct Backend;
struct Stream;
class CachingPool;
class EventPool;
struct PoolSizeClass;

struct PoolStats {
  std::size_t bytes_in_use = 0;        // blocks held by buffers (block sizes)
  std::size_t bytes_cached = 0;        // blocks kept for reuse
  std::size_t peak_bytes_in_use = 0;   // highest bytes_in_use so far
  std::uint64_t allocation_count = 0;  // successful allocations = hits + misses
  std::uint64_t cache_hits = 0;        // served from the cache
  std::uint64_t cache_misses = 0;      // served by the backend
  std::size_t bytes_waiting = 0;       // freed blocks whose stream work has not finished yet
  std::uint64_t blocks_waiting = 0;    // (held by the reclaimer, stream_ordered_release.h)
};

// The bookkeeping of one cached block of a caching pool, taken from the
// pool's spare nodes when the block is given back and returned to them when
// the block is handed out again or freed: a block in use has no node (its
// Allocation holds its handle, address and size class), so the pool adds no
// host memory per live buffer. Storage owned by the pool; guarded by the
// pool's mutex (linked into its class's list and the pool's age list).
struct PoolNode {
  PoolSizeClass* size_class = nullptr;  // the class of the block it holds
  void* handle = nullptr;
  void* address = nullptr;
  std::weak_ptr<Stream> owner;   // identity only: never locked
  SharedEvent* event = nullptr;  // one reference; null: reusable by anyone at once
  PoolNode* prev = nullptr;      // in the class's ready or pending list
  PoolNode* next = nullptr;
  PoolNode* older = nullptr;  // in the pool's age list (also links detached lists)
  PoolNode* newer = nullptr;
};

// A doubly linked list of PoolNodes through the links Prev/Next; front is
// the oldest. Never allocates. Not thread-safe (the pool's mutex guards it).
template <PoolNode* PoolNode::*Prev, PoolNode* PoolNode::*Next>
struct PoolNodeList {
  PoolNode* front = nullptr;
  PoolNode* back = nullptr;

  bool empty() const noexcept { return front == nullptr; }
  void push_back(PoolNode* node) noexcept {
    node->*Prev = back;
    node->*Next = nullptr;
    (back != nullptr ? back->*Next : front) = node;
    back = node;
  }
  void remove(PoolNode* node) noexcept {
    (node->*Prev != nullptr ? (node->*Prev)->*Next : front) = node->*Next;
    (node->*Next != nullptr ? (node->*Next)->*Prev : back) = node->*Prev;
    node->*Prev = nullptr;
    node->*Next = nullptr;
  }
};

using PoolClassList = PoolNodeList<&PoolNode::prev, &PoolNode::next>;
using PoolAgeList = PoolNodeList<&PoolNode::older, &PoolNode::newer>;

// The cached blocks of one block size. Owned by its pool (never removed
// while the pool lives, so a PoolNode may point at it); guarded by the
// pool's mutex.
struct PoolSizeClass {
  std::size_t bytes = 0;  // set once when the class is made: read without the lock
  PoolClassList ready;    // no event: reusable by anyone at once
  PoolClassList pending;  // event not yet seen complete: oldest at front
};

// One block handed out by a pool.
struct PoolBlock {
  CachingPool* pool = nullptr;          // where it goes back
  void* handle = nullptr;               // backend memory handle
  void* address = nullptr;              // host-visible address at offset 0
  std::size_t bytes = 0;                // block size: the size class (the request when not caching)
  PoolSizeClass* size_class = nullptr;  // where it is cached (null when not caching)
};

// A trim past the limit goes down to limit - limit / kTrimSlackDivisor.
inline constexpr std::size_t kTrimSlackDivisor = 8;

// "Never trim": the release threshold of pools made directly (tests).
inline constexpr std::size_t kPoolNoTrim = std::numeric_limits<std::size_t>::max();

// Requests above this are refused (out_of_memory) without asking the
// backend: no machine has half of a 64-bit address space.
inline constexpr std::size_t kPoolLargestRequest = std::numeric_limits<std::size_t>::max() / 2;

class CachingPool {
 public:
  // Event queries per request at most (see Cost above).
  static constexpr int kQueriesPerRequest = 2;

  // `events`: the event pool of (backend, device); null: the pool makes its own.
  // `carve`: how small blocks come from a BlockCarver (device memory of a
  // caching pool only; ignored otherwise).
  CachingPool(const Backend* backend, int device, anydev_bk_memory_kind_t kind, bool caching,
              std::size_t release_threshold = kPoolNoTrim, EventPool* events = nullptr,
              CarveMode carve = CarveMode::kNone);
  ~CachingPool();  // frees the cached blocks (only tests destroy pools)
  CachingPool(const CachingPool&) = delete;
  CachingPool& operator=(const CachingPool&) = delete;

  // A block of at least `bytes` (> 0) for use by `stream` (device memory is
  // allocated in order on it). On failure returns the backend's status with
  // its last error set (OUT_OF_MEMORY naming `bytes` for a request above
  // kPoolLargestRequest); the pool is unchanged.
  anydev_status_t allocate(const std::shared_ptr<Stream>& stream, std::size_t bytes,
                           PoolBlock* out);

  // Takes back a block. `owner` has already been made to wait for every
  // other stream that used it; `used_by_streams` is false when no stream work
  // ever touched it. `in_use` is false for a block that left the accounting
  // (forget_in_use). `use_epoch`: the owner's release epoch at the block's
  // last use there (Allocation::use_epoch), so that the block may share the
  // release event of an earlier release (release_event.h); nullopt: it gets
  // an event of its own. Returns false when the pool did not keep the block
  // (caching off, the release event could not be recorded, or no memory for
  // its node): the caller then frees it itself. Never throws; allocates
  // only a chunk of nodes now and then, and a release event's record (nothrow).
  bool give_back(const PoolBlock& block, const std::shared_ptr<Stream>& owner, bool used_by_streams,
                 bool in_use, std::optional<std::uint16_t> use_epoch = std::nullopt) noexcept;

  // A block from allocate() that no buffer came to use (its Allocation
  // could not be made): cached, else freed once `owner`, the stream it was
  // allocated for, has reached it. Never throws.
  void return_unused(const PoolBlock& block, const std::shared_ptr<Stream>& owner) noexcept;

  // A block handed to the user (take_ptr) no longer counts as in use.
  void forget_in_use(std::size_t bytes) noexcept;

  // Frees every cached block. wait == false: the blocks go to the reclaimer
  // thread, which waits for their events and frees them (the caller neither
  // blocks nor calls memory_free). wait == true: waits for those events and
  // frees here. Returns the bytes that were cached.
  std::size_t release_cached(bool wait) noexcept;

  // Cached bytes kept beyond a quarter of bytes_in_use (see Trimming).
  // Setting it trims at once (on the reclaimer).
  void set_release_threshold(std::size_t bytes) noexcept;
  std::size_t release_threshold() const noexcept;

  PoolStats stats() const;
  // The segments behind carved blocks (all zero when the pool does not carve).
  CarverStats carver_stats() const { return carver_ != nullptr ? carver_->stats() : CarverStats{}; }
  bool carves() const noexcept { return carver_ != nullptr; }
  // Whether a block with handle != address is carved out of a backend
  // object (Allocation::object_block).
  bool carves_objects() const noexcept {
    return carver_ != nullptr && carver_->mode() == CarveMode::kObjectOffsets;
  }
  bool caching() const { return caching_; }
  // Where a release of this pool's memory that bypasses the cache (a pool
  // that does not cache, a block it refused) is counted while it waits.
  WaitingReleases* waiting_releases() noexcept { return &waiting_; }
  anydev_bk_memory_kind_t kind() const { return kind_; }

 private:
  // Under mutex_: removes and returns a reusable block of `size_class` for
  // `stream`, or null; sets *event_done when its event is known complete.
  PoolNode* take_cached_locked(PoolSizeClass& size_class, const std::shared_ptr<Stream>& stream,
                               bool* event_done);
  void unlink_locked(PoolNode* node) noexcept;
  // Under mutex_: when the cache exceeds its limit, unlinks the oldest
  // blocks until it fits (an eighth below the limit `with_slack`), keeping
  // the newest; returns them linked through `newer`, their number in *count.
  PoolNode* trim_locked(bool with_slack, std::size_t* count) noexcept;
  // Frees a detached list (linked through `newer`) of `count` blocks (0:
  // not counted yet) on the reclaimer thread, each block after its own
  // event; here when it cannot be queued. A trim's list is cold by now
  // (10^4 blocks and more), so it is walked once, not twice.
  void hand_to_reclaimer(PoolNode* list, std::size_t count) noexcept;
  // Waits for each block's event, frees it and deletes its node.
  void free_list(PoolNode* list) noexcept;
  anydev_status_t backend_allocate(const std::shared_ptr<Stream>& stream, std::size_t bytes,
                                   void** handle, void** address);
  // Nodes come from chunks the pool owns (freed with the pool) and go back
  // to its spare list; a node is never returned to the heap while the pool
  // lives. Under mutex_; null when no memory.
  PoolNode* new_node_locked() noexcept;  // null without memory
  void recycle_node(PoolNode* node) noexcept;
  // Clears what a node held (all but its `newer` link), as a spare has it.
  static void clear_node(PoolNode* node) noexcept;
  // What a block is handed to the carver and the reclaimer as (BlockCarver::return_key).
  void* return_key(void* handle, void* address) const noexcept {
    return carver_ != nullptr ? carver_->return_key(handle, address) : handle;
  }
  void free_now(void* key, const char* why) noexcept;
  // give_back could not cache a carved block: waits for its owner stream
  // and hands it back to the carver (it cannot go to memory_free); false
  // when the block is not carved.
  bool return_carved_now(const PoolBlock& block, const std::shared_ptr<Stream>& owner) noexcept;
  // stream_synchronize of `owner` before a block of `bytes` is freed
  // outside stream order (`before` names that step in the log line on failure).
  void wait_for_owner(const std::shared_ptr<Stream>& owner, const char* before,
                      std::size_t bytes) noexcept;
  // Where a stream without an event pool takes its shared release events
  // (release_event.h): the process's pool, never the pool's own, which dies
  // with the pool while a stream may keep its latest release event longer.
  EventPool* shared_events() noexcept { return own_events_ != nullptr ? nullptr : &events_; }

  const Backend* const backend_;
  const anydev_backend_table_t* const table_;
  const int device_;
  const anydev_bk_memory_kind_t kind_;
  const bool caching_;
  const std::unique_ptr<EventPool> own_events_;  // when no event pool was given
  EventPool& events_;
  const std::unique_ptr<BlockCarver> carver_;  // null: every block is a driver allocation

  mutable CoreMutex mutex_;
  std::unordered_map<std::size_t, PoolSizeClass> classes_;  // by block size; never erased
  PoolAgeList age_;                                         // every cached block, oldest first
  std::vector<std::unique_ptr<PoolNode[]>> node_chunks_;    // every node's storage
  PoolNode* spare_nodes_ = nullptr;                         // linked through `newer`
  std::size_t release_threshold_;
  PoolStats stats_;
  WaitingReleases waiting_;  // this pool's blocks the reclaimer has not freed yet
};

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_POOL_CACHING_POOL_H_
