// CachingPool: the caching allocator of one (backend, device, memory kind).
// Freed blocks stay allocated in the backend and serve later requests of the
// same size class (size_classes.h), so that a hot allocate/release loop never
// reaches the backend (no syscall, no driver call).
//
// When a block may be reused. A block comes back with the stream that owns it
// (every other stream that used it has already been made to wait for, so the
// owner's work covers every use) and, if any stream work touched it, an event
// recorded on that owner stream at release time. It is handed out again:
//   - at once, when no stream work ever touched it;
//   - at once, for device memory requested on its owner stream: the new
//     user's work is queued behind the old user's on that stream (device
//     memory is only touched through stream-ordered work, see anydev.hpp);
//   - otherwise only once its event has completed (queried, never waited
//     for). Host memory always takes this path: a new host buffer may be
//     written by the CPU at once, so its stream work must really be finished.
// Release never synchronizes.
//
// Out of memory. When the backend fails an allocation with OUT_OF_MEMORY and
// the pool held cached blocks, it frees them all -- waiting for the events of
// those still in use by a stream, since the caller is about to fail anyway --
// and tries once more.
//
// With caching off (ANYDEV_POOL=0) the pool only keeps statistics: every
// request goes to the backend and give_back() hands the block to the usual
// stream-ordered release.
//
// Ownership: the pool owns the cached blocks and their events, and frees them
// through the backend table. Blocks handed out belong to their Allocation.
// Thread-safe: one mutex, held only for bookkeeping (backend calls are made
// outside it, except event_query while looking for a reusable block).
#ifndef ANYDEV_SRC_POOL_CACHING_POOL_H_
#define ANYDEV_SRC_POOL_CACHING_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "anydev/backend.h"

namespace anydev::core {

struct Backend;
struct Stream;
class CachingPool;

struct PoolStats {
  std::size_t bytes_in_use = 0;        // blocks held by buffers (block sizes)
  std::size_t bytes_cached = 0;        // blocks kept for reuse
  std::size_t peak_bytes_in_use = 0;   // highest bytes_in_use so far
  std::uint64_t allocation_count = 0;  // successful allocations = hits + misses
  std::uint64_t cache_hits = 0;        // served from the cache
  std::uint64_t cache_misses = 0;      // served by the backend
};

// One block handed out by a pool.
struct PoolBlock {
  CachingPool* pool = nullptr;  // where it goes back
  void* handle = nullptr;       // backend memory handle
  void* address = nullptr;      // host-visible address at offset 0
  std::size_t bytes = 0;        // block size: the size class (the request when not caching)
};

class CachingPool {
 public:
  CachingPool(const Backend* backend, int device, anydev_bk_memory_kind_t kind, bool caching);
  ~CachingPool();  // frees the cached blocks (only tests destroy pools)
  CachingPool(const CachingPool&) = delete;
  CachingPool& operator=(const CachingPool&) = delete;

  // A block of at least `bytes` (> 0) for use by `stream` (device memory is
  // allocated in order on it). On failure returns the backend's status with
  // its last error set; the pool is unchanged.
  anydev_status_t allocate(const std::shared_ptr<Stream>& stream, std::size_t bytes,
                           PoolBlock* out);

  // Takes back a block. `owner` has already been made to wait for every
  // other stream that used it; `used_by_streams` is false when no stream work
  // ever touched it. `in_use` is false for a block that left the accounting
  // (forget_in_use). Returns false when the pool did not keep the block
  // (caching off, or the release event could not be recorded): the caller
  // then frees it as before.
  bool give_back(const PoolBlock& block, const std::shared_ptr<Stream>& owner, bool used_by_streams,
                 bool in_use);

  // A block handed to the user (take_ptr) no longer counts as in use.
  void forget_in_use(std::size_t bytes);

  // Frees every cached block. wait == false: blocks whose stream work is
  // done are freed now, the others by the reclaimer thread once their event
  // completes (the caller never blocks). wait == true: waits for those events
  // here. Returns the bytes that were cached.
  std::size_t release_cached(bool wait);

  PoolStats stats() const;
  bool caching() const { return caching_; }
  anydev_bk_memory_kind_t kind() const { return kind_; }

 private:
  struct Cached {
    void* handle;
    void* address;
    std::weak_ptr<Stream> owner;  // identity only: never locked
    anydev_bk_event_t event;      // null: reusable by anyone at once
  };

  // Under mutex_: removes and returns a reusable block of class `bytes` for
  // `stream`; sets *event_done when its event is known to be complete.
  bool take_cached_locked(std::size_t bytes, const std::shared_ptr<Stream>& stream, Cached* out,
                          bool* event_done);
  anydev_status_t backend_allocate(const std::shared_ptr<Stream>& stream, std::size_t bytes,
                                   void** handle, void** address);
  anydev_bk_event_t acquire_event();
  void recycle_event(anydev_bk_event_t event, bool known_complete);
  void free_now(void* handle, const char* why);

  const Backend* const backend_;
  const anydev_backend_table_t* const table_;
  const int device_;
  const anydev_bk_memory_kind_t kind_;
  const bool caching_;

  mutable std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<Cached>> cached_;  // by block size
  std::vector<anydev_bk_event_t> idle_events_;                   // recorded and complete, or fresh
  PoolStats stats_;
};

}  // namespace anydev::core

#endif  // ANYDEV_SRC_POOL_CACHING_POOL_H_
