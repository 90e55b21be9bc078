// SPDX-License-Identifier: Apache-2.0
// Release events shared by the blocks released in a row on one stream.
//
// A cached block of a caching pool (pool/caching_pool.h) waits for an event
// recorded on its owner stream after its last use. Recording one per release
// kept one backend event alive per cached block (10^6 driver events with 10^6
// buffers released, docs/performance.md). Instead, each stream keeps the
// event recorded at its latest release (ReleaseSlot), and a later release on
// that stream shares it when the block's last use there was enqueued before
// that event was recorded.
//
// Knowing "before" without counting every enqueue: the slot has an epoch,
// raised (seq_cst) just before each record. An operation that uses an
// allocation reads the epoch of its stream after it was enqueued and keeps it
// in the allocation (Allocation::use_epoch). At release, a use epoch that
// differs from the slot's current epoch was read before the current event's
// epoch was published, so the use was enqueued before that event was recorded
// (the backend orders the calls on one stream, so the record, made after the
// epoch was raised, cannot precede in stream order an enqueue that returned
// before the raise was visible); an equal one may not have been, and the
// release records a fresh event. 16 bits suffice: the epochs only grow, so a
// wrapped value that compares equal only costs a fresh event.
//
// Ownership: a SharedEvent is reference counted (the slot that recorded it,
// and every cached block or reclaimer request waiting on it); the last
// reference gives the backend event back to its event pool (destroys it when
// a wait on it failed, or there is no pool). Thread-safe.
#ifndef ANYDEV_SRC_MEMORY_RELEASE_EVENT_H_
#define ANYDEV_SRC_MEMORY_RELEASE_EVENT_H_

#include <atomic>
#include <cstdint>
#include <optional>

#include "anydev/backend.h"
#include "support/small_mutex.h"

namespace anydev::core {

struct Backend;
class EventPool;

// One backend event recorded on a stream, shared by reference count.
struct SharedEvent {
  const anydev_backend_table_t* table = nullptr;
  EventPool* events = nullptr;         // where the event goes back (null: destroyed)
  anydev_bk_event_t event = nullptr;   // null once given back early (seen complete at record)
  std::uint64_t fork_generation = 0;   // a forked child leaves the parent's event alone
  std::atomic<std::uint32_t> refs{1};  // holders
  std::atomic<bool> complete{false};   // seen complete: never queried again
  std::atomic<bool> failed{false};     // a wait failed: destroyed, not reused
};

// Adds a holder.
void shared_event_ref(SharedEvent* shared) noexcept;
// Drops a holder; the last one gives the event back (see above). Null is ignored.
void shared_event_unref(SharedEvent* shared) noexcept;
// Whether the event has completed: one event_query until it is seen complete,
// none after. A failed query reads as not complete.
bool shared_event_complete(SharedEvent* shared) noexcept;
// Waits for the event (event_synchronize, unless seen complete); false when
// the wait failed (the event is then destroyed by its last holder).
bool shared_event_wait(SharedEvent* shared) noexcept;

// The release event of one stream (see above). Part of Stream; the epoch
// is read without the lock on every enqueue that uses an allocation, the
// rest is guarded by the slot's mutex.
class ReleaseSlot {
  // First: shares a cache line with what an enqueue reads anyway.
  std::atomic<std::uint16_t> epoch_{0};

 public:
  ReleaseSlot() = default;
  // Streams are moved only while they are made: the new slot starts empty.
  ReleaseSlot(ReleaseSlot&&) noexcept {}
  ReleaseSlot& operator=(ReleaseSlot&&) = delete;
  ReleaseSlot(const ReleaseSlot&) = delete;
  ReleaseSlot& operator=(const ReleaseSlot&) = delete;
  ~ReleaseSlot();  // drops its event

  // Read after an operation was enqueued on the stream (Allocation::use_epoch).
  std::uint16_t epoch() const noexcept { return epoch_.load(std::memory_order_seq_cst); }

  // The event a release of a block last used on `native` (this slot's
  // stream, of `device`) must wait for, with a reference for the caller;
  // *out null when the block needs none (the shared event was already seen
  // complete). `use_epoch`: the block's use epoch, or nullopt when the
  // release itself just enqueued work on the stream (a wait for another
  // stream) or the epoch is unknown: a fresh event then, from `events`
  // (null: created). On failure the backend's status (its last error set
  // when there was memory for it), the slot holding no event. Never throws.
  anydev_status_t event_for_release(const Backend* backend, int device, anydev_bk_stream_t native,
                                    EventPool* events, std::optional<std::uint16_t> use_epoch,
                                    SharedEvent** out) noexcept;

 private:
  SmallMutex mutex_;
  SharedEvent* current_ = nullptr;  // recorded at epoch_; guarded by mutex_
};

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_RELEASE_EVENT_H_
