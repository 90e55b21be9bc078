// SPDX-License-Identifier: Apache-2.0
// The reclaimer: one core thread that finishes releases without making the
// caller wait. It takes:
//   - memory to free once an event (recorded on the memory's owner stream
//     after its last use) has completed;
//   - backend streams to destroy once their work has completed (it records
//     an event on the stream first, when the stream's device is known;
//     destroying the stream then no longer waits).
// Releases that wait on different streams are independent: the reclaimer
// polls the pending events (event_query) and finishes whichever is ready,
// in any order, so one slow stream delays no other release. While nothing
// is ready it sleeps, from 50 us doubling to 2 ms, or until a new request
// arrives. A backend without event_query is waited for in order.
//
// What waits is bounded too: past a number of releases (or bytes) handed
// over and not yet finished, a releasing thread waits a little for the
// reclaimer to finish some, so that rapid churn on a slow device cannot
// pile up thousands of streams and gigabytes waiting (backpressure, as for
// requests not yet taken; bounded waits, so never a deadlock).
//
// It starts on first use. When its thread cannot start (the thread limit) or
// a request cannot be queued (out of memory), the request is done at once on
// the caller's thread instead: a release never throws or aborts, it only
// degrades to a synchronous one (logged once). At exit (atexit) it finishes
// what is queued and stops; later requests run inline. In a forked child
// nothing is queued: the parent's memory and streams are left alone (they
// belong to the parent). Thread-safe.
//
// Events. A finished release gives its event back to the event pool it came
// from (event_pool.h) instead of destroying it (an event whose wait failed
// is destroyed), so in steady state releases create no events; the events
// recorded before destroying a stream come from that pool too.
#ifndef ANYDEV_SRC_MEMORY_STREAM_ORDERED_RELEASE_H_
#define ANYDEV_SRC_MEMORY_STREAM_ORDERED_RELEASE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "anydev/backend.h"

namespace anydev::core {

struct Backend;
class EventPool;
struct SharedEvent;

// Memory handed to the reclaimer and not freed yet, for one pool's
// statistics (anydev_pool_stats_t): counted up when a release is handed
// over, down once it is freed. Owned by the pool; lock-free.
struct WaitingReleases {
  std::atomic<std::size_t> bytes{0};
  std::atomic<std::uint64_t> blocks{0};
};

// Takes back memory in place of the backend's memory_free: a caching pool's
// carved blocks (pool/block_carver.h). Called on the reclaimer thread once
// the memory's event has completed. Implementations are thread-safe and
// outlive every release handed over with them.
class MemoryReturn {
 public:
  // True when `handle` was taken back; false: memory_free it as usual.
  virtual bool take_back(void* handle) noexcept = 0;

 protected:
  MemoryReturn() = default;
  ~MemoryReturn() = default;
  MemoryReturn(const MemoryReturn&) = default;
  MemoryReturn& operator=(const MemoryReturn&) = default;
};

// Frees `handle` (of `kind`, on `device`, `bytes` long) after `event`
// completes, then gives the event back to `events` (destroys it when
// `events` is null). Counted in `waiting` (when not null) until freed.
// Takes ownership of the event. Never throws.
void release_after_event(const Backend* backend, int device, anydev_bk_event_t event,
                         anydev_bk_memory_kind_t kind, void* handle, EventPool* events = nullptr,
                         std::size_t bytes = 0, WaitingReleases* waiting = nullptr) noexcept;

// One block of a batch (release_after_events): its memory handle, its size
// and the event its release waits for (null: none): a backend event of its
// own (`event`, given back to the batch's event pool), or one reference to a
// shared release event (`shared`, release_event.h; dropped once freed).
struct EventRelease {
  anydev_bk_event_t event = nullptr;
  void* handle = nullptr;
  std::size_t bytes = 0;
  SharedEvent* shared = nullptr;
};

// release_after_event for a block waiting on a shared release event
// (release_event.h), whose reference it takes; offered to `returns` (when
// not null) before memory_free. Never throws.
void release_after_shared_event(const Backend* backend, int device, SharedEvent* shared,
                                anydev_bk_memory_kind_t kind, void* handle, std::size_t bytes,
                                WaitingReleases* waiting, MemoryReturn* returns = nullptr) noexcept;

// release_after_event for each of `releases` (all of `kind`, on `device`),
// handed over as one request: one lock round trip and at most one wake-up
// for the whole batch (a caching pool's trim). Each block is still freed as
// soon as its own event completes, offered to `returns` (when not null)
// before memory_free. Never throws.
void release_after_events(const Backend* backend, int device, anydev_bk_memory_kind_t kind,
                          std::vector<EventRelease>&& releases, EventPool* events = nullptr,
                          WaitingReleases* waiting = nullptr,
                          MemoryReturn* returns = nullptr) noexcept;

// Runs `callback` (on the reclaimer thread) after `event` completes (at once
// when `event` is null), then gives the event back to `events` (destroys it
// when `events` is null). Takes ownership of the event. For memory the core
// does not own (foreign_memory.h) and the caching pools' trimming. Never
// throws.
void run_after_event(const Backend* backend, anydev_bk_event_t event,
                     std::function<void()> callback, EventPool* events = nullptr) noexcept;

// Destroys a backend stream off the caller's thread, after its work; with
// `device` >= 0 (the stream's device) without blocking the reclaimer while
// the work runs (an event from `events`, the device's pool, given back
// afterwards; made and destroyed when `events` is null). Never throws.
void release_stream(const Backend* backend, anydev_bk_stream_t stream, int device = -1,
                    EventPool* events = nullptr) noexcept;

// Waits until everything queued so far has been done (tests, exit).
void drain_releases();

// How many times a request woke the reclaimer's thread so far (tests): a
// request wakes it only when it sleeps; while it works, requests queue
// behind its batch without a wake-up.
std::uint64_t reclaimer_wakeups();

// Backpressure (tests): past reclaimer_backlog_bound() requests not yet
// taken by the thread, a request from another thread wakes it and waits
// (10 ms at most) for it to take them; how many requests waited so far.
std::uint64_t reclaimer_backlog_waits();
std::size_t reclaimer_backlog_bound();

// Backpressure on what waits for its event (tests): past
// reclaimer_waiting_bound() releases (blocks and streams) or
// reclaimer_waiting_bytes_bound() bytes handed over and not yet finished, a
// release from another thread waits (100 ms at most) for the reclaimer to
// finish some; how many releases waited so far.
std::uint64_t reclaimer_waiting_waits();
std::size_t reclaimer_waiting_bound();
std::size_t reclaimer_waiting_bytes_bound();
// Releases the reclaimer's thread holds waiting for their events, as of its
// last pass (tests).
std::size_t reclaimer_held_releases();

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_STREAM_ORDERED_RELEASE_H_
