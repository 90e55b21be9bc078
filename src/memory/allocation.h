// SPDX-License-Identifier: Apache-2.0
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
// Release. When the last reference goes, the allocation's release strategy
// (ReleaseStrategy, below) decides what becomes of the memory:
//   - plain (allocation.cpp): the owner stream (the context that allocated
//     it, or the one it was reassigned to) is made to wait for last_stream,
//     and the memory is freed after the owner stream's work: through the
//     backend's memory_free_async if it has one (device memory), else by the
//     reclaimer thread once an event recorded on the owner stream has
//     completed;
//   - pooled (pool/pooled_allocation.h): ordered the same way, then given
//     back to its caching pool, tagged with such an event
//     (pool/caching_pool.h), or freed as plain when the pool does not keep it;
//   - foreign (foreign_memory.h): memory the core does not own; the
//     producer's release callback runs after the last use;
//   - registered (registered_memory.h): the caller's host memory; the
//     backend's host_unregister runs after the last use.
// The caller never blocks. The events come from the device's event pool
// (event_pool.h): none is created per ordering or per release in steady
// state.
//
// Thread safety: `mutex` guards last_stream and owner_stream; hold it from
// the ordering decision until the operation is enqueued (use_allocations).
#ifndef ANYDEV_SRC_MEMORY_ALLOCATION_H_
#define ANYDEV_SRC_MEMORY_ALLOCATION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <utility>

#include "anydev/backend.h"
#include "memory/stream.h"
#include "support/small_mutex.h"

namespace anydev::core {

struct Backend;
struct WaitingReleases;

// The size of a caching pool's segments of carved blocks
// (pool/block_carver.h): a large page on every GPU. The tokens of blocks
// carved out of backend objects are aligned to it, so a token's low bits
// are the block's offset in its segment.
inline constexpr std::size_t kCarveSegmentBytes = std::size_t{2} << 20;
struct Allocation;
class ShareState;

// What becomes of an allocation's memory when its last reference goes (see
// Release above). One per Allocation, set when it is made and never changed;
// it lives beside the Allocation (make_allocation) or, for the stateless
// plain strategy, for the process. Its state is guarded by the
// allocation's mutex where a member says so.
class ReleaseStrategy {
 public:
  // From ~Allocation (never in a forked child, whose memory is the parent's).
  // Never throws, never blocks on the device unless ordering fails.
  virtual void release(Allocation& allocation) noexcept = 0;
  // Memory a producer outside anydev owns (foreign_memory.h).
  virtual bool foreign() const noexcept { return false; }
  // Memory shared between processes (shared_memory.h): its share state.
  virtual ShareState* share() noexcept { return nullptr; }
  // The caller's host memory, registered (registered_memory.h).
  virtual bool registered() const noexcept { return false; }
  // take_ptr handed the memory to the user: it leaves the pool's
  // accounting (once: allocation.taken says it has). Called with the
  // allocation's mutex held.
  virtual void forget_in_use(Allocation& allocation) noexcept;

 protected:
  ReleaseStrategy() = default;
  ~ReleaseStrategy() = default;  // destroyed as its own type only
  ReleaseStrategy(const ReleaseStrategy&) = default;
  ReleaseStrategy& operator=(const ReleaseStrategy&) = default;
};

// The plain strategy: the core frees the memory after its last use (a
// process-lifetime object, stateless).
ReleaseStrategy& plain_release() noexcept;

struct Allocation {
  Allocation(ReleaseStrategy& strategy, const Backend* backend, int device,
             anydev_bk_memory_kind_t kind, void* handle, void* address, std::size_t bytes,
             std::shared_ptr<Stream> owner);
  ~Allocation();  // hands the memory to its release strategy (see above)
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  const Backend* const backend;
  const int device;
  const anydev_bk_memory_kind_t kind;  // HOST or DEVICE (USER_HOST: foreign host memory)
  void* const handle;                  // what the backend's copy/fill take
  void* const address;                 // unsafe_ptr() at offset 0
  const std::size_t bytes;

  SmallMutex mutex;    // 4 bytes: one per live allocation (small_mutex.h)
  bool taken = false;  // guarded by mutex: take_ptr handed the memory out
  // Set once before the Allocation is shared: a block the caching pool
  // carved out of a backend object (ANYDEV_BK_FLAG_DEVICE_OBJECT_OFFSETS):
  // `handle` is the whole object and `address` a token of the core's whose
  // low bits are the block's offset in it (object_offset()).
  bool object_block = false;  // beside `taken`, in what was padding
  // Guarded by mutex: last_stream's release epoch read after the last use
  // was enqueued there (release_event.h), so that its pooled release may
  // share the event of an earlier one.
  std::uint16_t use_epoch = 0;
  std::shared_ptr<Stream> owner_stream;  // guarded by mutex
  std::shared_ptr<Stream> last_stream;   // guarded by mutex

  // Where this allocation starts in `handle`: the block's offset for an
  // object_block, else 0. Memory references and native offsets add it.
  std::size_t object_offset() const noexcept {
    return object_block ? reinterpret_cast<std::uintptr_t>(address) & (kCarveSegmentBytes - 1) : 0;
  }

  ReleaseStrategy& strategy() const noexcept { return strategy_; }
  // Memory a producer outside anydev owns (foreign_memory.h).
  bool foreign() const noexcept { return strategy_.foreign(); }
  // The caller's host memory, registered (registered_memory.h).
  bool registered() const noexcept { return strategy_.registered(); }

 private:
  ReleaseStrategy& strategy_;
  const std::uint64_t fork_generation_;
};

// One per live buffer (with the handle and the pool's node), so its size is
// host memory per handle; pinned like anydev_buffer_s (objects.h).
static_assert(sizeof(Allocation) <= 96, "Allocation grew: see docs/reliability.md");

// Defined after Allocation (it marks it taken).
inline void ReleaseStrategy::forget_in_use(Allocation& allocation) noexcept {
  allocation.taken = true;
}

// An Allocation with the plain strategy.
std::shared_ptr<Allocation> make_plain_allocation(const Backend* backend, int device,
                                                  anydev_bk_memory_kind_t kind, void* handle,
                                                  void* address, std::size_t bytes,
                                                  std::shared_ptr<Stream> owner);

// An Allocation holding `strategy`, both in one block of memory with the
// shared_ptr control block (one record from the record slab, as make_shared
// makes one heap block): the strategy is destroyed after the Allocation.
// `args` are the Allocation's constructor arguments after the strategy.
template <class Strategy, class... Args>
std::shared_ptr<Allocation> make_allocation(Strategy strategy, Args&&... args);

// The release steps the strategies share. Never throw.
// Makes the owner stream wait for last_stream; when that fails, waits for
// last_stream here (logged) rather than free memory still in use.
void order_release_after_last_use(Allocation& allocation) noexcept;
// Frees the memory after the owner stream's work (memory_free_async, else
// the reclaimer after an event; here, at once, when the backend's query is
// cheap and the event has already completed; synchronously, logged, when
// none can be arranged).
void free_after_owner_stream(Allocation& allocation, WaitingReleases* waiting = nullptr) noexcept;

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

// Notes that an operation using `allocation` was just enqueued on `stream`
// (its last user from now on). With the allocation's mutex held.
inline void note_use(Allocation& allocation, Stream& stream,
                     const std::shared_ptr<Stream>& shared) noexcept {
  // Assigned only when it changes: a shared_ptr copy is two atomic
  // operations on the stream's reference count.
  if (allocation.last_stream.get() != &stream) allocation.last_stream = shared;
  allocation.use_epoch = stream.release.epoch();  // after the enqueue: release_event.h
}

// Makes `waiter` wait for the work enqueued so far on `signaler` (an event
// recorded on signaler, waited on by waiter). No-op when they are the same.
anydev_status_t order_after(Stream& waiter, Stream& signaler);

}  // namespace anydev::core

#include "memory/allocation_inl.h"

#endif  // ANYDEV_SRC_MEMORY_ALLOCATION_H_
