// SPDX-License-Identifier: Apache-2.0
#include "stream_ordered_release.h"

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

#include "backend_calls.h"
#include "event_pool.h"
#include "fork_guard.h"
#include "host_memory_locks.h"
#include "logging.h"
#include "registry.h"
#include "status.h"

namespace anydev::core {
namespace {

struct Item {
  const Backend* backend = nullptr;
  int device = -1;
  anydev_bk_event_t event = nullptr;  // what the release waits for (may be null)
  anydev_bk_memory_kind_t kind = ANYDEV_BK_MEMORY_HOST;
  void* handle = nullptr;               // memory handle
  anydev_bk_stream_t stream = nullptr;  // stream to destroy (null for memory)
  std::function<void()> callback = {};  // run instead of memory_free when set
  EventPool* events = nullptr;          // where the event goes back (null: destroyed)
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
bool ready(const Item& item) noexcept {
  if (item.event == nullptr) return true;
  const anydev_backend_table_t* table = item.backend->table;
  if (table->event_query == nullptr) return true;  // run() waits in order
  int complete = 0;
  if (bk(table).event_query(item.event, &complete) != ANYDEV_SUCCESS) return true;
  return complete != 0;
}

void run(Item& item) noexcept {
  const anydev_backend_table_t* table = item.backend->table;
  bool event_done = true;
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
  } else {
    note_host_free(item.backend, item.device, item.kind, item.handle);
    report(item.backend, "memory_free", bk(table).memory_free(item.device, item.kind, item.handle));
  }
  if (item.event == nullptr) return;
  if (item.events != nullptr && event_done) {
    item.events->give_back(item.event);  // complete: idle for the next taker
  } else {
    report(item.backend, "event_destroy", bk(table).event_destroy(item.event));
  }
}

// The release of one block of a batch, as a request of its own.
Item block_of(const Item& batch, const EventRelease& release) noexcept {
  Item one;
  one.backend = batch.backend;
  one.device = batch.device;
  one.kind = batch.kind;
  one.events = batch.events;
  one.event = release.event;
  one.handle = release.handle;
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
                                            r.busy_ = false;
                                            r.sleeping_ = false;
                                            r.mutex_.unlock();
                                          });
                           std::atexit([] { instance().stop(); });
                         });
  }

  void push(Item&& item) noexcept {
    {
      std::unique_lock lock(mutex_);
      if (!stopped_ && (started_ || start_locked())) {
        try {
          queue_.push_back(std::move(item));
          // Only a sleeping thread needs waking: a working one takes the
          // queue when it finishes its batch. Waking it anyway made a burst
          // of releases (1,000 streams destroyed in a row) hand the core
          // back and forth between the two threads once per release, 10-15
          // us each on the 2-core VM instead of 0.2-0.3 us.
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
            taken_.wait_for(lock, kBacklogWait,
                            [&] { return queue_.size() < kBacklog / 2 || stopped_; });
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

  void drain() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
  }

 private:
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

  // At exit: finish what is queued, then end the thread.
  void stop() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return (queue_.empty() && !busy_) || !started_; });
    stopped_ = true;
    wake_.notify_one();
    taken_.notify_all();
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
          wake_.wait(lock, [&] { return !queue_.empty() || stopped_; });
          sleeping_ = false;
          if (queue_.empty()) return;  // stopped
        } else {
          wake_.wait_for(lock, sleep, [&] { return !queue_.empty(); });
          sleeping_ = false;
        }
      }
      std::vector<Item> arrived;
      arrived.swap(queue_);
      taken_.notify_all();  // producers held at the backlog bound
      busy_ = true;
      lock.unlock();
      const bool progressed = work(arrived);
      sleep = progressed ? kFirstPoll : std::min(sleep * 2, kLastPoll);
      lock.lock();
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
    const auto done = std::partition(pending_.begin(), pending_.end(),
                                     [](const Item& item) { return !ready(item); });
    for (auto it = done; it != pending_.end(); ++it) {
      run(*it);
      progressed = true;
    }
    pending_.erase(done, pending_.end());
    return progressed;
  }

  // Runs `item` when it is ready, else keeps it in pending_ (runs it here,
  // waiting, when there is no memory to keep it); true when it ran.
  bool finish_or_keep(Item& item) noexcept {
    if (ready(item)) {
      run(item);
      return true;
    }
    try {
      pending_.push_back(std::move(item));
      return false;
    } catch (const std::bad_alloc&) {
      run(item);  // waits here instead
      return true;
    }
  }

  // One request per block of a batch, each finished or kept on its own.
  bool work_batch(const Item& batch) noexcept {
    bool progressed = false;
    for (const EventRelease& release : batch.batch) {
      Item item = block_of(batch, release);
      progressed |= finish_or_keep(item);
    }
    return progressed;
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::vector<Item> queue_;
  std::vector<Item> pending_;  // the thread's own: requests waiting for their event
  std::thread thread_;
  bool started_ = false;
  bool busy_ = false;  // the thread works, or holds pending requests
  bool stopped_ = false;
  bool sleeping_ = false;            // the thread waits on wake_ (a push must wake it)
  std::uint64_t wakeups_ = 0;        // wake-ups pushes issued (reclaimer_wakeups)
  std::condition_variable taken_;    // the thread took the queue (backlog waits)
  std::uint64_t backlog_waits_ = 0;  // pushes that waited at kBacklog
};

// Made when libanydev.so is loaded, before any thread can use it.
[[maybe_unused]] const bool g_reclaimer_made_at_load = (Reclaimer::instance(), true);

}  // namespace

void release_after_event(const Backend* backend, int device, anydev_bk_event_t event,
                         anydev_bk_memory_kind_t kind, void* handle, EventPool* events) noexcept {
  Item item;
  item.events = events;
  item.backend = backend;
  item.device = device;
  item.event = event;
  item.kind = kind;
  item.handle = handle;
  Reclaimer::instance().push(std::move(item));
}

void release_after_events(const Backend* backend, int device, anydev_bk_memory_kind_t kind,
                          std::vector<EventRelease>&& releases, EventPool* events) noexcept {
  if (releases.empty()) return;
  Item item;
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

}  // namespace anydev::core
