// SPDX-License-Identifier: Apache-2.0
#include "memory/foreign_memory.h"

#include "memory/event_pool.h"
#include "memory/stream_ordered_release.h"
#include "runtime/registry.h"
#include "support/backend_calls.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core {
namespace {

// The foreign release strategy: the producer's callback. Lives beside its
// Allocation (make_allocation); run once, from ~Allocation.
class ForeignRelease final : public ReleaseStrategy {
 public:
  explicit ForeignRelease(std::function<void()> callback) : callback_(std::move(callback)) {}

  bool foreign() const noexcept override { return true; }

  // Runs the callback now when no anydev work used the memory, else after
  // that work (see foreign_memory.h).
  void release(Allocation& allocation) noexcept override {
    std::function<void()> release = std::move(callback_);
    std::shared_ptr<Stream> last;
    {
      std::lock_guard lock(allocation.mutex);
      last = allocation.last_stream;
    }
    if (!last) {
      run(release);  // anydev never enqueued work on it
      return;
    }
    const anydev_backend_table_t* table = last->backend->table;
    EventPool* const events = last->events;
    anydev_bk_event_t event = nullptr;
    const anydev_status_t taken =
        events != nullptr ? events->take(&event) : bk(table).event_create(last->device, &event);
    if (taken == ANYDEV_SUCCESS && bk(table).event_record(event, last->native) == ANYDEV_SUCCESS) {
      try {
        // A copy: `release` stays usable if queueing fails. The reclaimer
        // gives the event back to `events` afterwards.
        run_after_event(last->backend, event, release, events);
        return;
      } catch (...) {  // std::bad_alloc copying the callback: wait here instead
      }
      bk(table).event_synchronize(event);
      give_back_or_destroy(events, table, event);
    } else {
      try {  // a release never throws: without memory for the message, none
        log(ANYDEV_LOG_ERROR,
            cat(last->backend->name,
                ": releasing foreign memory: recording the release event failed: ",
                last_error_message(), "; waiting for the stream instead"));
      } catch (...) {
      }
      if (event != nullptr) bk(table).event_destroy(event);  // a failed event is not reused
      bk(table).stream_synchronize(last->native);
    }
    run(release);
  }

 private:
  static void run(std::function<void()>& release) noexcept {
    try {
      release();
    } catch (...) {  // the producer's deleter is C; nothing may escape a release
    }
  }

  std::function<void()> callback_;
};

}  // namespace

std::shared_ptr<Allocation> make_foreign_allocation(const Backend* backend, int device,
                                                    anydev_bk_memory_kind_t kind, void* address,
                                                    std::size_t bytes,
                                                    std::shared_ptr<Stream> owner,
                                                    std::function<void()> release) {
  return make_allocation(ForeignRelease(std::move(release)), backend, device, kind, address,
                         address, bytes, std::move(owner));
}

}  // namespace anydev::core
