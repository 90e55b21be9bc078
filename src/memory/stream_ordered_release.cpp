// SPDX-License-Identifier: Apache-2.0
#include "memory/stream_ordered_release.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "memory/event_pool.h"
#include "memory/host_memory_locks.h"
#include "memory/release_event.h"
#include "runtime/registry.h"
#include "support/backend_calls.h"
#include "support/core_mutex.h"
#include "support/fork_guard.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core {
namespace {

struct Item {
  const Backend* backend = nullptr;
  int device = -1;
  anydev_bk_event_t event = nullptr;  // what the release waits for (may be null)
  SharedEvent* shared = nullptr;      // or this shared one (release_event.h), one reference
  anydev_bk_memory_kind_t kind = ANYDEV_BK_MEMORY_HOST;
  void* handle = nullptr;               // memory handle
  anydev_bk_stream_t stream = nullptr;  // stream to destroy (null for memory)
  std::function<void()> callback = {};  // run instead of memory_free when set
  EventPool* events = nullptr;          // where the event goes back (null: destroyed)
  std::size_t bytes = 0;                // the memory's size (0: a stream or callback)
  WaitingReleases* waiting = nullptr;   // where the memory is counted until freed
  MemoryReturn* returns = nullptr;      // offered the memory before memory_free
  // A batch (release_after_events): memory blocks of `kind`, each freed
  // after its own event; `event` and `handle` are then unused.
  std::vector<EventRelease> batch = {};
};

// Sleeps between polls of pending events: from kFirstPoll doubling to kLastPoll.
constexpr std::chrono::microseconds kFirstPoll{50};
constexpr std::chrono::microseconds kLastPoll{2000};
// Requests waiting to be taken by the thread past which a request waits for
// it (at most kBacklogWait each). A releasing thread that never sleeps
// starves the reclaimer's thread of CPU on a busy machine (SCHED_BATCH, or
// just two cores and other load): the soak test under load queued 71,000
// requests and 180 MB of memory not yet freed. The wait is bounded, so a
// releaser holding a lock that a callback on the reclaimer needs is only
// delayed, never deadlocked.
constexpr std::size_t kBacklog = 4096;
constexpr std::chrono::milliseconds kBacklogWait{10};
// Releases (blocks, streams, callbacks) or bytes the reclaimer holds
// waiting for their events past which a release from another thread waits,
// kWaitingWait at most, for it to finish some. (Requests it has not taken
// yet are bounded by kBacklog.)
constexpr std::size_t kWaitingBound = 1024;
constexpr std::size_t kWaitingBytesBound = std::size_t{1} << 30;
constexpr std::chrono::milliseconds kWaitingWait{100};

// Counts a finished release out of its pool's statistics.
void finish(const Item& item) noexcept {
  if (item.bytes == 0 || item.waiting == nullptr) return;
  item.waiting->bytes.fetch_sub(item.bytes, std::memory_order_relaxed);
  item.waiting->blocks.fetch_sub(1, std::memory_order_relaxed);
}

// Counts a release into its pool's statistics (a batch: each block).
void count_in(const Item& item) noexcept {
  if (item.waiting == nullptr) return;
  const auto one = [&](std::size_t bytes) {
    if (bytes == 0) return;
    item.waiting->bytes.fetch_add(bytes, std::memory_order_relaxed);
    item.waiting->blocks.fetch_add(1, std::memory_order_relaxed);
  };
  if (item.batch.empty()) {
    one(item.bytes);
    return;
  }
  for (const EventRelease& release : item.batch) one(release.bytes);
}
// How long exit() waits for the releases queued before it (docs/reliability.md).
constexpr std::chrono::seconds kExitDrainLimit{5};

void report(const Backend* backend, const char* what, anydev_status_t status) noexcept {
  if (status == ANYDEV_SUCCESS) return;
  try {
    log(ANYDEV_LOG_ERROR, cat(backend->name, ": deferred release: ", what, " failed (",
                              anydev_status_name(status), "): ", last_error_message()));
  } catch (...) {
    // Out of memory for the message: the failure itself is all we can drop.
  }
}

// Logs (once per process) that releases run on the caller's thread.
// Takes C strings: building a std::string argument could throw before the
// try below (the callers are noexcept and may be out of memory).
// Not std::call_once: with GCC 12 an exception thrown out of its function
// (bad_alloc while building the message) terminates the process (GCC bug
// 66146), whatever catches it outside.
void report_synchronous(const char* why, const char* detail = "") noexcept {
  static constinit std::atomic<bool> reported{false};
  if (reported.exchange(true, std::memory_order_relaxed)) return;
  try {
    log(ANYDEV_LOG_WARN,
        cat("deferred releases run on the releasing thread instead: ", why, detail));
  } catch (...) {
    // Out of memory for the message: the warning is all we can drop.
  }
}

// Logs that exit() left `left` releases undone.
void report_abandoned(std::size_t left) noexcept {
  try {
    log(ANYDEV_LOG_WARN,
        cat("exit: ", left, " deferred releases did not finish within ", kExitDrainLimit.count(),
            " s (work still running on a device?); the process ends without them"));
  } catch (...) {
    // Out of memory for the message: the warning is all we can drop.
  }
}

// For a stream with a known device: records an event after its work, so that
// the stream is destroyed once that completes, without blocking meanwhile.
// Leaves item.event null when that fails (the destroy then waits itself).
void prepare_stream(Item& item) noexcept {
  if (item.stream == nullptr || item.device < 0 || item.event != nullptr) return;
  const anydev_backend_table_t* table = item.backend->table;
  if (table->event_query == nullptr) return;
  anydev_bk_event_t event = nullptr;
  const anydev_status_t taken = item.events != nullptr
                                    ? item.events->take(&event)
                                    : bk(table).event_create(item.device, &event);
  if (taken != ANYDEV_SUCCESS) return;
  if (bk(table).event_record(event, item.stream) != ANYDEV_SUCCESS) {
    bk(table).event_destroy(event);  // a failed event is not reused
    return;
  }
  item.event = event;
}

// True when the item's release would not wait: no event, or the event has
// completed (or cannot be queried: run() then reports the failure).
// `not_done`: a shared event a query of this pass found running (the blocks
// of a trim share a few events: each is queried once per pass).
bool ready(const Item& item, SharedEvent** not_done = nullptr) noexcept {
  if (item.shared != nullptr) {
    if (not_done != nullptr && item.shared == *not_done) return false;
    if (shared_event_complete(item.shared)) return true;
    if (not_done != nullptr) *not_done = item.shared;
    return false;
  }
  if (item.event == nullptr) return true;
  const anydev_backend_table_t* table = item.backend->table;
  if (table->event_query == nullptr) return true;  // run() waits in order
  int complete = 0;
  if (bk(table).event_query(item.event, &complete) != ANYDEV_SUCCESS) return true;
  return complete != 0;
}

void run_release(Item& item) noexcept {
  const anydev_backend_table_t* table = item.backend->table;
  bool event_done = true;
  if (item.shared != nullptr && !shared_event_wait(item.shared)) {
    report(item.backend, "event_synchronize", ANYDEV_ERROR_DEVICE);
    event_done = false;
  }
  if (item.event != nullptr) {
    const anydev_status_t waited = bk(table).event_synchronize(item.event);
    report(item.backend, "event_synchronize", waited);
    event_done = waited == ANYDEV_SUCCESS;
  }
  if (item.stream != nullptr) {
    report(item.backend, "stream_destroy", bk(table).stream_destroy(item.stream));
  } else if (item.callback) {
    try {
      item.callback();
    } catch (...) {
      report(item.backend, "release callback", ANYDEV_ERROR_INTERNAL);
    }
  } else if (item.returns == nullptr || !item.returns->take_back(item.handle)) {
    note_host_free(item.backend, item.device, item.kind, item.handle);
    report(item.backend, "memory_free", bk(table).memory_free(item.device, item.kind, item.handle));
  }
  shared_event_unref(item.shared);  // destroyed by its last holder when the wait failed
  if (item.event == nullptr) return;
  if (item.events != nullptr && event_done) {
    item.events->give_back(item.event);  // complete: idle for the next taker
  } else {
    report(item.backend, "event_destroy", bk(table).event_destroy(item.event));
  }
}

// Runs a release and counts it out.
void run(Item& item) noexcept {
  run_release(item);
  finish(item);
}

// The release of one block of a batch, as a request of its own.
Item block_of(const Item& batch, const EventRelease& release) noexcept {
  Item one;
  one.backend = batch.backend;
  one.device = batch.device;
  one.kind = batch.kind;
  one.events = batch.events;
  one.event = release.event;
  one.shared = release.shared;
  one.handle = release.handle;
  one.bytes = release.bytes;
  one.waiting = batch.waiting;
  one.returns = batch.returns;
  return one;
}

// run() for a request that may be a batch: every block, in order, here.
void run_request(Item& item) noexcept {
  if (item.batch.empty()) {
    run(item);
    return;
  }
  for (const EventRelease& release : item.batch) {
    Item one = block_of(item, release);
    run(one);
  }
}

// Never destroyed: releases may arrive during exit.
class Reclaimer {
 public:
  // A ProcessObject, not a guarded static (fork-safe, fork_guard.h); made
  // when the library is loaded (below).
  static Reclaimer& instance() {
    static ProcessObject<Reclaimer> reclaimer;
    return reclaimer.get([] { return new Reclaimer(); },
                         [](Reclaimer&) {
                           // A forked child has no reclaimer thread and must not
                           // inherit a locked mutex or the parent's queue: it
                           // starts afresh on first use.
                           pthread_atfork([] { instance().mutex_.lock(); },
                                          [] { instance().mutex_.unlock(); },
                                          [] {
                                            Reclaimer& r = instance();
                                            r.queue_.clear();
                                            r.pending_.clear();
                                            // The parent's thread does not exist
                                            // here: forget it without joining or
                                            // detaching.
                                            new (&r.thread_) std::thread();
                                            // Nor its waits: a condition variable the
                                            // parent's thread waited on at the fork
                                            // would block the child's next notify
                                            // (glibc waits for that waiter to leave).
                                            new (&r.wake_) std::condition_variable();
                                            new (&r.idle_) std::condition_variable();
                                            new (&r.taken_) std::condition_variable();
                                            r.started_ = false;
                                            r.stopped_ = false;
                                            r.exited_ = false;
                                            r.abandoned_ = false;
                                            r.pending_size_ = 0;
                                            r.progress_waiters_ = 0;
                                            new (&r.progress_) std::condition_variable();
                                            r.pending_bytes_ = 0;
                                            r.thread_pending_bytes_ = 0;
                                            r.busy_ = false;
                                            r.sleeping_ = false;
                                            r.mutex_.unlock();
                                          });
                           std::atexit([] { instance().stop(); });
                         });
  }

  void push(Item&& item) noexcept {
    count_in(item);
    {
      std::unique_lock lock(mutex_);
      if (!stopped_ && (started_ || start_locked())) {
        try {
          queue_.push_back(std::move(item));
          // Only a sleeping thread needs waking: a working one takes the
          // queue when it finishes its batch. Waking it anyway makes a burst
          // of releases (streams destroyed in a row) hand the core back and
          // forth between the two threads once per release, a context
          // switch each (docs/performance.md).
          const bool backlog =
              queue_.size() >= kBacklog && std::this_thread::get_id() != thread_.get_id();
          const bool wake = sleeping_ || backlog;
          if (wake) {
            sleeping_ = false;  // one wake-up is enough until it sleeps again
            ++wakeups_;
          }
          lock.unlock();
          if (wake) wake_.notify_one();
          if (backlog) {
            lock.lock();
            ++backlog_waits_;
            wait_for(taken_, lock, kBacklogWait,
                     [&] { return queue_.size() < kBacklog / 2 || stopped_; });
          }
          if (std::this_thread::get_id() != thread_.get_id()) {
            if (!lock.owns_lock()) lock.lock();
            if (past_waiting_bound(kWaitingBound, kWaitingBytesBound)) wait_for_progress(lock);
          }
          return;
        } catch (const std::bad_alloc&) {
          lock.unlock();
          report_synchronous("out of memory for the reclaimer's queue");
        }
      }
    }
    run_request(item);  // after exit began, or no thread: do it here
  }

  std::uint64_t wakeups() {
    std::lock_guard lock(mutex_);
    return wakeups_;
  }

  std::uint64_t backlog_waits() {
    std::lock_guard lock(mutex_);
    return backlog_waits_;
  }

  std::uint64_t waiting_waits() {
    std::lock_guard lock(mutex_);
    return waiting_waits_;
  }

  std::size_t held() {
    std::lock_guard lock(mutex_);
    return pending_size_;
  }

  void drain() {
    std::unique_lock lock(mutex_);
    wait(idle_, lock, [&] { return (queue_.empty() && !busy_) || abandoned_; });
  }

 private:
  // Whether the thread holds more releases waiting for their events than
  // `items` or `bytes`. Lock held.
  bool past_waiting_bound(std::size_t items, std::size_t bytes) const noexcept {
    return pending_size_ > items || pending_bytes_ > bytes;
  }

  // Past the waiting bound: waits (kWaitingWait at most) until the thread
  // has finished enough to be a quarter below it. Lock held.
  void wait_for_progress(std::unique_lock<CoreMutex>& lock) noexcept {
    ++waiting_waits_;
    ++progress_waiters_;
    if (sleeping_) {
      sleeping_ = false;
      ++wakeups_;
      wake_.notify_one();  // polls at once, and fast while anyone waits
    }
    wait_for(progress_, lock, kWaitingWait, [&] {
      return stopped_ || !past_waiting_bound(kWaitingBound * 3 / 4, kWaitingBytesBound / 4 * 3);
    });
    --progress_waiters_;
  }

  // Starts the thread; false (the caller releases synchronously) when it
  // cannot start. Lock held.
  bool start_locked() noexcept {
    try {
      thread_ = std::thread([this] { loop(); });
      started_ = true;
      return true;
    } catch (const std::system_error& e) {
      report_synchronous(
          "cannot start the reclaimer thread (see RLIMIT_NPROC and "
          "kernel.threads-max): ",
          e.what());
    } catch (...) {
      report_synchronous("cannot start the reclaimer thread");
    }
    return false;
  }

  // At exit: stop taking requests first (later ones run on their caller's
  // thread), so that threads which keep releasing while exit() runs on
  // another thread cannot keep the queue from emptying; then let the thread
  // finish what was queued, for kExitDrainLimit at most. Past that, the
  // process ends with those releases undone (the system takes the memory
  // back) rather than waiting on work that may never complete.
  void stop() {
    std::unique_lock lock(mutex_);
    stopped_ = true;
    wake_.notify_one();
    taken_.notify_all();
    const bool drained = wait_for(idle_, lock, kExitDrainLimit, [&] {
      return (queue_.empty() && !busy_) || !started_ || exited_;
    });
    if (!drained) {
      abandoned_ = true;
      const std::size_t left = queue_.size() + pending_size_;
      lock.unlock();
      idle_.notify_all();
      report_abandoned(left);
      return;  // the thread may still be inside a backend call: no join
    }
    lock.unlock();
    if (thread_.joinable()) thread_.join();
  }

  // Takes the new requests (lock held), then, unlocked, finishes every
  // request that is ready, keeping the others in pending_.
  void loop() {
    // SCHED_BATCH: waking the thread never preempts the releasing thread
    // (as the cpu backend's stream workers, backends/cpu/cpu_workers.cpp).
    // Under the default policy the scheduler ran the freshly woken thread
    // on the releaser's own core at once, so a burst of releases paid two
    // context switches per release. Needs no privilege; failure is harmless.
    sched_param param{};
    param.sched_priority = 0;
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
    std::unique_lock lock(mutex_);
    std::chrono::microseconds sleep = kFirstPoll;
    while (true) {
      if (queue_.empty()) {
        sleeping_ = true;
        if (pending_.empty()) {
          wait(wake_, lock, [&] { return !queue_.empty() || stopped_; });
          sleeping_ = false;
          if (queue_.empty()) {  // stopped, and nothing left
            exited_ = true;
            idle_.notify_all();
            return;
          }
        } else {
          wait_for(wake_, lock, sleep, [&] { return !queue_.empty(); });
          sleeping_ = false;
        }
      }
      std::vector<Item> arrived;
      arrived.swap(queue_);
      taken_.notify_all();  // producers held at the backlog bound
      busy_ = true;
      lock.unlock();
      const bool progressed = work(arrived);
      lock.lock();
      // Releasers held at the waiting bound want the events polled often.
      sleep = progressed || progress_waiters_ > 0 ? kFirstPoll : std::min(sleep * 2, kLastPoll);
      if (progressed && progress_waiters_ > 0) progress_.notify_all();
      pending_size_ = pending_.size();
      pending_bytes_ = thread_pending_bytes_;
      busy_ = !pending_.empty();
      if (queue_.empty() && !busy_) idle_.notify_all();
    }
  }

  // Finishes what is ready among `arrived` and pending_; true when anything
  // was finished.
  bool work(std::vector<Item>& arrived) noexcept {
    bool progressed = false;
    for (Item& item : arrived) {
      if (!item.batch.empty()) {
        progressed |= work_batch(item);
        continue;
      }
      prepare_stream(item);
      progressed |= finish_or_keep(item);
    }
    SharedEvent* not_done = nullptr;
    const auto done = std::partition(pending_.begin(), pending_.end(),
                                     [&](const Item& item) { return !ready(item, &not_done); });
    for (auto it = done; it != pending_.end(); ++it) {
      thread_pending_bytes_ -= it->bytes;
      run(*it);
      progressed = true;
    }
    pending_.erase(done, pending_.end());
    return progressed;
  }

  // Runs `item` when it is ready, else keeps it in pending_ (runs it here,
  // waiting, when there is no memory to keep it); true when it ran.
  bool finish_or_keep(Item& item, SharedEvent** not_done = nullptr) noexcept {
    if (ready(item, not_done)) {
      run(item);
      return true;
    }
    try {
      const std::size_t bytes = item.bytes;
      pending_.push_back(std::move(item));
      thread_pending_bytes_ += bytes;
      return false;
    } catch (const std::bad_alloc&) {
      run(item);  // waits here instead
      return true;
    }
  }

  // One request per block of a batch, each finished or kept on its own.
  bool work_batch(const Item& batch) noexcept {
    bool progressed = false;
    SharedEvent* not_done = nullptr;
    for (const EventRelease& release : batch.batch) {
      Item item = block_of(batch, release);
      progressed |= finish_or_keep(item, &not_done);
    }
    return progressed;
  }

  CoreMutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::vector<Item> queue_;
  std::vector<Item> pending_;  // the thread's own: requests waiting for their event
  std::thread thread_;
  bool started_ = false;
  bool busy_ = false;                     // the thread works, or holds pending requests
  bool stopped_ = false;                  // exit began: requests run on their caller's thread
  bool exited_ = false;                   // the thread returned after stopped_
  bool abandoned_ = false;                // exit stopped waiting for it (kExitDrainLimit)
  std::size_t pending_size_ = 0;          // pending_.size() as of the thread's last batch
  std::size_t pending_bytes_ = 0;         // their bytes, likewise
  std::size_t thread_pending_bytes_ = 0;  // the thread's own running count of pending_'s bytes
  bool sleeping_ = false;                 // the thread waits on wake_ (a push must wake it)
  std::uint64_t wakeups_ = 0;             // wake-ups pushes issued (reclaimer_wakeups)
  std::condition_variable taken_;         // the thread took the queue (backlog waits)
  std::uint64_t backlog_waits_ = 0;       // pushes that waited at kBacklog
  std::condition_variable progress_;      // the thread finished releases (waiting bound)
  std::size_t progress_waiters_ = 0;      // pushes waiting on progress_
  std::uint64_t waiting_waits_ = 0;       // pushes that waited at the waiting bound
};

// Made when libanydev.so is loaded, before any thread can use it.
[[maybe_unused]] const bool g_reclaimer_made_at_load = (Reclaimer::instance(), true);

}  // namespace

void release_after_event(const Backend* backend, int device, anydev_bk_event_t event,
                         anydev_bk_memory_kind_t kind, void* handle, EventPool* events,
                         std::size_t bytes, WaitingReleases* waiting) noexcept {
  Item item;
  item.bytes = bytes;
  item.waiting = waiting;
  item.events = events;
  item.backend = backend;
  item.device = device;
  item.event = event;
  item.kind = kind;
  item.handle = handle;
  Reclaimer::instance().push(std::move(item));
}

void release_after_shared_event(const Backend* backend, int device, SharedEvent* shared,
                                anydev_bk_memory_kind_t kind, void* handle, std::size_t bytes,
                                WaitingReleases* waiting, MemoryReturn* returns) noexcept {
  Item item;
  item.returns = returns;
  item.bytes = bytes;
  item.waiting = waiting;
  item.backend = backend;
  item.device = device;
  item.shared = shared;
  item.kind = kind;
  item.handle = handle;
  Reclaimer::instance().push(std::move(item));
}

void release_after_events(const Backend* backend, int device, anydev_bk_memory_kind_t kind,
                          std::vector<EventRelease>&& releases, EventPool* events,
                          WaitingReleases* waiting, MemoryReturn* returns) noexcept {
  if (releases.empty()) return;
  Item item;
  item.returns = returns;
  item.waiting = waiting;
  item.events = events;
  item.backend = backend;
  item.device = device;
  item.kind = kind;
  item.batch = std::move(releases);
  Reclaimer::instance().push(std::move(item));
}

void run_after_event(const Backend* backend, anydev_bk_event_t event,
                     std::function<void()> callback, EventPool* events) noexcept {
  Item item;
  item.events = events;
  item.backend = backend;
  item.event = event;
  item.callback = std::move(callback);
  Reclaimer::instance().push(std::move(item));
}

void release_stream(const Backend* backend, anydev_bk_stream_t stream, int device,
                    EventPool* events) noexcept {
  Item item;
  item.events = events;
  item.backend = backend;
  item.device = device;
  item.stream = stream;
  Reclaimer::instance().push(std::move(item));
}

void drain_releases() { Reclaimer::instance().drain(); }

std::uint64_t reclaimer_wakeups() { return Reclaimer::instance().wakeups(); }

std::uint64_t reclaimer_backlog_waits() { return Reclaimer::instance().backlog_waits(); }

std::size_t reclaimer_backlog_bound() { return kBacklog; }

std::uint64_t reclaimer_waiting_waits() { return Reclaimer::instance().waiting_waits(); }

std::size_t reclaimer_waiting_bound() { return kWaitingBound; }

std::size_t reclaimer_waiting_bytes_bound() { return kWaitingBytesBound; }

std::size_t reclaimer_held_releases() { return Reclaimer::instance().held(); }

}  // namespace anydev::core
