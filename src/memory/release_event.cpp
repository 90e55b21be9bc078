// SPDX-License-Identifier: Apache-2.0
#include "memory/release_event.h"

#include <mutex>
#include <new>
#include <utility>

#include "memory/event_pool.h"
#include "runtime/registry.h"
#include "support/backend_calls.h"
#include "support/fork_guard.h"
#include "support/status.h"

namespace anydev::core {

void shared_event_ref(SharedEvent* shared) noexcept {
  shared->refs.fetch_add(1, std::memory_order_relaxed);
}

void shared_event_unref(SharedEvent* shared) noexcept {
  if (shared == nullptr) return;
  if (shared->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // In a forked child the event (and the pool it came from) is the parent's.
  if (shared->event != nullptr && shared->fork_generation == fork_generation()) {
    if (shared->failed.load(std::memory_order_relaxed)) {
      bk(shared->table).event_destroy(shared->event);
    } else {
      give_back_or_destroy(shared->events, shared->table, shared->event);
    }
  }
  delete shared;
}

bool shared_event_complete(SharedEvent* shared) noexcept {
  if (shared->complete.load(std::memory_order_acquire)) return true;
  int complete = 0;
  if (bk(shared->table).event_query(shared->event, &complete) != ANYDEV_SUCCESS || complete == 0) {
    return false;
  }
  shared->complete.store(true, std::memory_order_release);
  return true;
}

bool shared_event_wait(SharedEvent* shared) noexcept {
  if (shared->complete.load(std::memory_order_acquire)) return true;
  if (bk(shared->table).event_synchronize(shared->event) != ANYDEV_SUCCESS) {
    shared->failed.store(true, std::memory_order_relaxed);
    return false;
  }
  shared->complete.store(true, std::memory_order_release);
  return true;
}

ReleaseSlot::~ReleaseSlot() { shared_event_unref(current_); }

anydev_status_t ReleaseSlot::event_for_release(const Backend* backend, int device,
                                               anydev_bk_stream_t native, EventPool* events,
                                               std::optional<std::uint16_t> use_epoch,
                                               SharedEvent** out) noexcept {
  *out = nullptr;
  SharedEvent* replaced = nullptr;  // a failed record's
  SharedEvent* previous = nullptr;  // the slot's event before this record
  anydev_status_t status = ANYDEV_SUCCESS;
  {
    std::lock_guard lock(mutex_);
    const std::uint16_t epoch = epoch_.load(std::memory_order_relaxed);
    if (current_ != nullptr && use_epoch.has_value() && *use_epoch != epoch) {
      // Last used before the current event was recorded: share it.
      if (!current_->complete.load(std::memory_order_acquire)) {
        shared_event_ref(current_);
        *out = current_;
      }
      return ANYDEV_SUCCESS;
    }
    const anydev_backend_table_t* table = backend->table;
    // Only the slot holds its event (the blocks behind it were reused or
    // freed): recorded again, without a trip through the event pool. No
    // one else can take a reference meanwhile: only the slot hands them out.
    SharedEvent* shared = nullptr;
    if (current_ != nullptr && current_->event != nullptr &&
        !current_->failed.load(std::memory_order_relaxed) &&
        current_->refs.load(std::memory_order_acquire) == 1) {
      shared = current_;
      current_ = nullptr;
      shared->complete.store(false, std::memory_order_relaxed);
    } else {
      anydev_bk_event_t event = nullptr;
      status = events != nullptr ? events->take(&event) : bk(table).event_create(device, &event);
      if (status == ANYDEV_SUCCESS) {
        shared = new (std::nothrow) SharedEvent();
        if (shared == nullptr) {
          give_back_or_destroy(events, table, event);
          status = ANYDEV_ERROR_OUT_OF_MEMORY;
          try {
            set_error(status, "no memory for a release event's record");
          } catch (...) {
            // No memory for the message either: the status says it.
          }
        } else {
          shared->table = table;
          shared->events = events;
          shared->event = event;
          shared->fork_generation = fork_generation();
        }
      }
    }
    if (shared != nullptr) {
      // Published before the record (see release_event.h): a use that reads
      // the old epoch was enqueued before this record.
      epoch_.store(static_cast<std::uint16_t>(epoch + 1), std::memory_order_seq_cst);
      status = bk(table).event_record(shared->event, native);
      if (status != ANYDEV_SUCCESS) {
        shared->failed.store(true, std::memory_order_relaxed);  // destroyed, not reused
        replaced = shared;                                      // the slot's only reference
        shared = nullptr;
      }
    }
    // The slot's event always belongs to its current epoch: after a failure,
    // none (the next release records afresh).
    previous = std::exchange(current_, shared);
    if (shared != nullptr) {
      if (completed_at_once(backend, shared->event)) {
        // Idle stream, cheap query: the event goes back at once; the blocks
        // released behind it need none.
        give_back_or_destroy(shared->events, table, shared->event);
        shared->event = nullptr;
        shared->complete.store(true, std::memory_order_relaxed);
      } else {
        shared_event_ref(shared);
        *out = shared;
      }
    }
  }
  shared_event_unref(replaced);
  shared_event_unref(previous);
  return status;
}

}  // namespace anydev::core
