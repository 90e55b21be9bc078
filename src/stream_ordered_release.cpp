#include "stream_ordered_release.h"

#include <pthread.h>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <new>
#include <thread>

#include "host_memory_locks.h"
#include "fork_guard.h"
#include "logging.h"
#include "registry.h"
#include "status.h"

namespace anydev::core {
namespace {

struct Item {
  const Backend* backend;
  int device;
  anydev_bk_event_t event;  // null for a stream
  anydev_bk_memory_kind_t kind;
  void* handle;                         // memory handle
  anydev_bk_stream_t stream;            // stream to destroy (null for memory)
  std::function<void()> callback = {};  // run instead of memory_free when set
};

void report(const Backend* backend, const char* what, anydev_status_t status) {
  if (status == ANYDEV_SUCCESS) return;
  log(ANYDEV_LOG_ERROR, cat(backend->name, ": deferred release: ", what, " failed (",
                            anydev_status_name(status), "): ", last_error_message()));
}

void run(const Item& item) {
  const anydev_backend_table_t* table = item.backend->table;
  if (item.stream != nullptr) {
    report(item.backend, "stream_destroy", table->stream_destroy(item.stream));
    return;
  }
  report(item.backend, "event_synchronize", table->event_synchronize(item.event));
  if (item.callback) {
    item.callback();
    report(item.backend, "event_destroy", table->event_destroy(item.event));
    return;
  }
  note_host_free(item.backend, item.device, item.kind, item.handle);
  report(item.backend, "memory_free", table->memory_free(item.device, item.kind, item.handle));
  report(item.backend, "event_destroy", table->event_destroy(item.event));
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
                                            r.started_ = false;
                                            r.stopped_ = false;
                                            r.busy_ = false;
                                            r.mutex_.unlock();
                                          });
                         });
  }

  void push(const Item& item) {
    {
      std::unique_lock lock(mutex_);
      if (!stopped_) {
        if (!started_) start_locked();
        queue_.push_back(item);
        wake_.notify_one();
        return;
      }
    }
    run(item);  // after exit began: do it here
  }

  void drain() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
  }

 private:
  void start_locked() {
    started_ = true;
    thread_ = std::thread([this] { loop(); });
    std::atexit([] { instance().stop(); });
  }

  // At exit: finish what is queued, then end the thread.
  void stop() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
    stopped_ = true;
    wake_.notify_one();
    lock.unlock();
    if (thread_.joinable()) thread_.join();
  }

  void loop() {
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return !queue_.empty() || stopped_; });
      if (queue_.empty()) return;  // stopped
      const Item item = queue_.front();
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      run(item);
      lock.lock();
      busy_ = false;
      if (queue_.empty()) idle_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Item> queue_;
  std::thread thread_;
  bool started_ = false;
  bool busy_ = false;
  bool stopped_ = false;
};

// Made when libanydev.so is loaded, before any thread can use it.
[[maybe_unused]] const bool g_reclaimer_made_at_load = (Reclaimer::instance(), true);

}  // namespace

void release_after_event(const Backend* backend, int device, anydev_bk_event_t event,
                         anydev_bk_memory_kind_t kind, void* handle) {
  Reclaimer::instance().push({backend, device, event, kind, handle, nullptr});
}

void run_after_event(const Backend* backend, anydev_bk_event_t event,
                     std::function<void()> callback) {
  Reclaimer::instance().push(
      {backend, -1, event, ANYDEV_BK_MEMORY_HOST, nullptr, nullptr, std::move(callback)});
}

void release_stream(const Backend* backend, anydev_bk_stream_t stream) {
  Reclaimer::instance().push({backend, -1, nullptr, ANYDEV_BK_MEMORY_HOST, nullptr, stream});
}

void drain_releases() { Reclaimer::instance().drain(); }

}  // namespace anydev::core
