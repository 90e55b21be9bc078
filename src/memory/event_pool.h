// SPDX-License-Identifier: Apache-2.0
// EventPool: the idle backend events of one (backend, device), for reuse.
// Cross-stream ordering (allocation.h: order_after), stream-ordered release
// (allocation.h, foreign_memory.h, stream_ordered_release.h) and the caching
// pools (pool/caching_pool.h) take their events here and give them back when
// nothing waits on them any more, so that in steady state no event is
// created or destroyed per ordering or per release.
//
// An idle event may still carry recorded work that has not finished (an
// event that a stream_wait_event used): the backend ABI lets the core
// re-record or destroy such an event at once (backend.h, stream_wait_event),
// and whoever takes it records it again before anyone waits on it.
//
// Bounded: at most capacity() idle events, in a vector reserved up front;
// an event given back to a full pool is destroyed. give_back() never
// throws and never allocates.
//
// Ownership: the pool owns its idle events and destroys them when it is
// destroyed; an event taken from it belongs to the taker until given back.
// The pools of the process (event_pool_for) are never destroyed (releases
// may arrive during exit); a child of fork() starts with fresh, empty ones
// (the parent's events are left alone). Thread-safe: one mutex, held only
// for the list (backend calls are made outside it).
#ifndef ANYDEV_SRC_MEMORY_EVENT_POOL_H_
#define ANYDEV_SRC_MEMORY_EVENT_POOL_H_

#include <cstddef>
#include <mutex>
#include <vector>

#include "anydev/backend.h"
#include "support/core_mutex.h"

namespace anydev::core {

struct Backend;

class EventPool {
 public:
  // Idle events kept per pool by default; more are destroyed.
  static constexpr std::size_t kDefaultCapacity = 64;

  EventPool(const anydev_backend_table_t* table, int device,
            std::size_t capacity = kDefaultCapacity);
  ~EventPool();  // destroys the idle events
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // An event of the pool's device: an idle one, else a new one
  // (event_create). On failure the backend's status, with its last error
  // set; *out is left null.
  anydev_status_t take(anydev_bk_event_t* out) noexcept;

  // Takes back an event nothing waits on any more (its recorded work may
  // still run). Kept when there is room, else destroyed. Null is ignored.
  // Never throws, never allocates.
  void give_back(anydev_bk_event_t event) noexcept;

  std::size_t idle() const;
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  const anydev_backend_table_t* const table_;
  const int device_;
  const std::size_t capacity_;
  mutable CoreMutex mutex_;
  std::vector<anydev_bk_event_t> idle_;  // capacity_ reserved
};

// The event pool of (backend, device); made on first use, never destroyed.
// Throws std::bad_alloc when it cannot be made (callers on release paths
// use event_pool_or_null).
EventPool& event_pool_for(const Backend* backend, int device);

// Same, but null instead of throwing (the caller then makes and destroys its
// own event).
EventPool* event_pool_or_null(const Backend* backend, int device) noexcept;

// Gives back `event`, which nothing waits on any more, to `events`; destroys
// it when there is no pool (streams made without one). Never throws.
void give_back_or_destroy(EventPool* events, const anydev_backend_table_t* table,
                          anydev_bk_event_t event) noexcept;

// True when `backend` answers event_query from memory
// (ANYDEV_BK_FLAG_CHEAP_EVENT_QUERY) and `event`, just recorded, has already
// completed: a release on an idle stream then needs no event and no
// reclaimer (caching_pool.h, allocation.h). False, without a backend call,
// for a backend whose query is a driver call (a release stays one
// event_record there, no query), and when the query fails. Never throws.
bool completed_at_once(const Backend* backend, anydev_bk_event_t event) noexcept;

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_EVENT_POOL_H_
