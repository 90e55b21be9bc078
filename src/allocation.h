// Allocation: one block of backend memory, shared by every buffer handle and
// view onto it, and the stream-ordered bookkeeping that keeps it safe.
//
// Ordering. Each allocation remembers the stream of the last operation that
// used it (`last_stream`). An operation on stream S that touches it while
// last_stream is another stream T first makes S wait for an event recorded on
// T; then last_stream becomes S. So the uses of one allocation form a chain
// of stream-ordered operations: a copy never reads what an earlier operation
// on another stream is still writing (and vice versa), and waiting for the
// last user's stream implies every earlier use has finished.
//
// Release. When the last reference goes, the owner stream (the context that
// allocated it, or the one it was reassigned to) is made to wait for
// last_stream, and the memory is freed after the owner stream's work:
// through the backend's memory_free_async if it has one (device memory), else
// by the reclaimer thread once an event recorded on the owner stream has
// completed. The caller never blocks. Memory from a caching pool goes back
// to its pool instead, tagged with such an event (pool/caching_pool.h).
//
// Thread safety: `mutex` guards last_stream and owner_stream; hold it from
// the ordering decision until the operation is enqueued (use_allocations).
#ifndef ANYDEV_SRC_ALLOCATION_H_
#define ANYDEV_SRC_ALLOCATION_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>

#include "anydev/backend.h"

namespace anydev::core {

struct Backend;
struct Stream;
class CachingPool;
struct PoolNode;

struct Allocation {
  Allocation(const Backend* backend, int device, anydev_bk_memory_kind_t kind, void* handle,
             void* address, std::size_t bytes, std::shared_ptr<Stream> owner);
  ~Allocation();  // stream-ordered release (see above)
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  const Backend* const backend;
  const int device;
  const anydev_bk_memory_kind_t kind;  // HOST or DEVICE
  void* const handle;                  // what the backend's copy/fill take
  void* const address;                 // unsafe_ptr() at offset 0
  const std::size_t bytes;

  std::mutex mutex;
  std::shared_ptr<Stream> owner_stream;  // guarded by mutex
  std::shared_ptr<Stream> last_stream;   // guarded by mutex

  // Set for memory from a caching pool (pool/pooled_allocation.h): the
  // destructor gives the block back to `pool` instead of freeing it.
  // pool_bytes is the block size; pool_in_use is cleared (under mutex) when
  // take_ptr hands the memory to the user.
  CachingPool* pool = nullptr;
  std::size_t pool_bytes = 0;
  bool pool_in_use = false;
  PoolNode* pool_node = nullptr;  // the block's bookkeeping, reserved with it

  // Non-empty for memory the core does not own (foreign_memory.h): the
  // destructor frees nothing and runs this once the last use has finished.
  // Set before the allocation is shared; never changed afterwards.
  std::function<void()> foreign_release;

 private:
  const std::uint64_t fork_generation_;
};

// The stream an operation runs on: the object, and a shared_ptr to it that
// outlives the call (read only when an allocation's last_stream changes, so
// the common case touches no reference count).
struct StreamUse {
  Stream* stream;
  const std::shared_ptr<Stream>* shared;
};

// Orders the stream after the last use of each allocation (see above) and,
// while holding their locks, calls `enqueue()`; on success the allocations'
// last_stream becomes the stream. At most two entries (a copy's); null
// entries are ignored, duplicates are fine. Returns the first failing status (last error set).
template <class Enqueue>
anydev_status_t use_allocations(const StreamUse& use, std::span<Allocation* const> allocations,
                                Enqueue&& enqueue);

// Makes `waiter` wait for the work enqueued so far on `signaler` (an event
// recorded on signaler, waited on by waiter). No-op when they are the same.
anydev_status_t order_after(Stream& waiter, Stream& signaler);

}  // namespace anydev::core

#include "allocation_inl.h"

#endif  // ANYDEV_SRC_ALLOCATION_H_
