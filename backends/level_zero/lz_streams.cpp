// SPDX-License-Identifier: Apache-2.0
// Streams and events.
//
// A stream is one immediate command list (zeCommandListCreateImmediate,
// asynchronous mode) on the device's compute queue group. Where the driver
// reports API 1.7 or later the list is created in order
// (ZE_COMMAND_QUEUE_FLAG_IN_ORDER, defined here: Debian's headers are 1.4),
// and a copy or fill is one driver call; otherwise a barrier after each copy
// or fill keeps it in order (order_locked, lz_objects.h): two calls. A
// validation layer of an older loader refuses the flag as an unknown
// enumerator even when the driver knows it; the backend then creates the list
// without it, and stops asking for that driver. Immediate rather than a queue
// plus command lists, for latency: each append is submitted to the device as
// it is made, in one driver call; a regular list would need close, execute
// and a fence per submission (three more calls and a batch boundary the core
// cannot see), or would hold work back until the next synchronize.
//
// Events are recycled host-visible ze events (lz_event_slots.h): a record
// appends a barrier that signals a fresh slot; synchronize, query and
// event_synchronize read that slot from the host; a cross-stream wait is
// zeCommandListAppendWaitOnEvents on it, and the waiting stream keeps the
// slot until its own next signal has run, so the core may re-record or
// destroy the anydev event at once. Interprocess events differ
// (lz_share_events.cpp).
#include <cstdint>
#include <new>
#include <utility>

#include "lz_entries.h"
#include "lz_errors.h"
#include "lz_objects.h"
#include "lz_share_events.h"
#include "lz_state.h"

namespace anydev::level_zero {
namespace {

// Held objects before a stream appends a signal of its own to release them.
constexpr std::size_t kMaxHeld = 256;

// ZE_COMMAND_QUEUE_FLAG_IN_ORDER (ZE_BIT(1), Level Zero 1.7).
constexpr ze_command_queue_flags_t kQueueFlagInOrder = 1u << 1;

anydev_status_t null_token(const char* operation, const char* what) {
  return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, cat(operation, ": null ", what));
}

anydev_status_t host_wait(const SlotRef& slot, const char* operation, int device) {
  const ze_result_t r = api().zeEventHostSynchronize(slot->event, UINT64_MAX);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeEventHostSynchronize",
                          cat(operation, " on level_zero device ", device));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace

anydev_status_t signal_locked(LzStream& stream, const char* operation, SlotRef* out,
                              EventSlots* from) {
  SlotRef slot;
  EventSlots& slots = from != nullptr ? *from : *device_at(stream.device).driver->events;
  if (const anydev_status_t s = slots.acquire(operation, &slot); s != ANYDEV_SUCCESS) {
    return s;
  }
  const ze_result_t r = api().zeCommandListAppendBarrier(stream.list, slot->event, 0, nullptr);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeCommandListAppendBarrier",
                          cat(operation, " on level_zero device ", stream.device));
  }
  slot->holds = std::move(stream.held);
  stream.held.clear();
  *out = std::move(slot);
  return ANYDEV_SUCCESS;
}

ze_result_t order_locked(LzStream& stream) {
  if (stream.in_order) return ZE_RESULT_SUCCESS;
  return api().zeCommandListAppendBarrier(stream.list, nullptr, 0, nullptr);
}

void hold_locked(LzStream& stream, std::shared_ptr<void> what) {
  stream.held.push_back(std::move(what));
  if (stream.held.size() < kMaxHeld) return;
  SlotRef slot;  // on failure the stream keeps holding: nothing is freed early
  (void)signal_locked(stream, "keeping a stream's held objects bounded", &slot);
}

anydev_status_t drain(LzStream& stream, const char* operation) {
  SlotRef slot;
  {
    const std::lock_guard<std::mutex> lock(stream.mutex);
    if (const anydev_status_t s = signal_locked(stream, operation, &slot); s != ANYDEV_SUCCESS) {
      return s;
    }
  }
  return host_wait(slot, operation, stream.device);
}

anydev_status_t stream_create(int device, anydev_bk_stream_t* out) {
  return create_stream_at(device, ZE_COMMAND_QUEUE_PRIORITY_NORMAL, "stream_create", out);
}

anydev_status_t create_stream_at(int device, ze_command_queue_priority_t priority,
                                 const char* operation, anydev_bk_stream_t* out) {
  if (out == nullptr) return null_token(operation, "out");
  if (const anydev_status_t s = check_device(device, operation); s != ANYDEV_SUCCESS) return s;
  const DeviceState& d = device_at(device);
  ze_command_queue_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  desc.ordinal = d.queue_ordinal;
  desc.index = 0;
  desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  desc.priority = priority;
  auto* stream = new (std::nothrow) LzStream;
  if (stream == nullptr) {
    return report_error(ANYDEV_ERROR_OUT_OF_MEMORY, cat(operation, ": out of host memory"));
  }
  stream->device = device;
  const bool ask_in_order = d.driver->in_order_lists.load(std::memory_order_relaxed);
  const auto create = [&](ze_command_queue_flags_t flags) {
    desc.flags = flags;
    return api().zeCommandListCreateImmediate(d.driver->context, d.device, &desc, &stream->list);
  };
  ze_result_t r = create(ask_in_order ? kQueueFlagInOrder : 0);
  if (ask_in_order && r == ZE_RESULT_ERROR_INVALID_ENUMERATION) {
    // Not an error: the flag is newer than something between us and the
    // driver (a validation layer of a pre-1.7 loader). Barriers order the
    // stream instead, on every later stream of this driver too.
    d.driver->in_order_lists.store(false, std::memory_order_relaxed);
    log(ANYDEV_LOG_INFO,
        cat(operation, " on level_zero device ", device,
            ": in-order command lists refused (ZE_RESULT_ERROR_INVALID_ENUMERATION, a loader or "
            "layer older than API 1.7?); its streams order copies and fills with barriers"));
    r = create(0);
  }
  if (r != ZE_RESULT_SUCCESS) {
    delete stream;
    return report_failure(
        r, "zeCommandListCreateImmediate",
        cat(operation, " on level_zero device ", device, " (queue group ", d.queue_ordinal, ")"));
  }
  stream->in_order = desc.flags == kQueueFlagInOrder;
  *out = to_token(stream);
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_destroy(anydev_bk_stream_t token) {
  LzStream* stream = as_stream(token);
  if (stream == nullptr) return null_token("stream_destroy", "stream");
  anydev_status_t status = drain(*stream, "stream_destroy");
  if (status != ANYDEV_SUCCESS) {
    // The list's commands may still run: keep the list and what it uses.
    log(ANYDEV_LOG_WARN, "stream_destroy: the stream did not drain; its command list is leaked");
    return status;
  }
  const ze_result_t r = api().zeCommandListDestroy(stream->list);
  if (r != ZE_RESULT_SUCCESS) {
    status = report_failure(r, "zeCommandListDestroy",
                            cat("stream_destroy on level_zero device ", stream->device));
  }
  delete stream;
  return status;
}

anydev_status_t stream_synchronize(anydev_bk_stream_t token) {
  LzStream* stream = as_stream(token);
  if (stream == nullptr) return null_token("stream_synchronize", "stream");
  return drain(*stream, "stream_synchronize");
}

anydev_status_t event_create(int device, anydev_bk_event_t* out) {
  if (out == nullptr) return null_token("event_create", "out");
  if (const anydev_status_t s = check_device(device, "event_create"); s != ANYDEV_SUCCESS) return s;
  auto* event = new (std::nothrow) LzEvent;
  if (event == nullptr) {
    return report_error(ANYDEV_ERROR_OUT_OF_MEMORY, "event_create: out of host memory");
  }
  event->device = device;
  *out = to_token(event);
  return ANYDEV_SUCCESS;
}

anydev_status_t event_destroy(anydev_bk_event_t token) {
  LzEvent* event = as_event(token);
  if (event == nullptr) return null_token("event_destroy", "event");
  delete event;  // its slot is retired, and recycled once it signaled; an
                 // interprocess event's objects go when no stream uses them
  return ANYDEV_SUCCESS;
}

anydev_status_t event_record(anydev_bk_event_t event_token, anydev_bk_stream_t stream_token) {
  LzEvent* event = as_event(event_token);
  LzStream* stream = as_stream(stream_token);
  if (event == nullptr) return null_token("event_record", "event");
  if (stream == nullptr) return null_token("event_record", "stream");
  if (event->shared != nullptr) return shared_event_record(*event, *stream);
  SlotRef slot;
  {
    const std::lock_guard<std::mutex> lock(stream->mutex);
    EventSlots* from =
        event->timing ? device_at(stream->device).driver->timestamp_events.get() : nullptr;
    if (const anydev_status_t s = signal_locked(*stream, "event_record", &slot, from);
        s != ANYDEV_SUCCESS) {
      return s;
    }
  }
  SlotRef previous;
  {
    const std::lock_guard<std::mutex> lock(event->mutex);
    previous = std::exchange(event->latest, std::move(slot));
  }
  return ANYDEV_SUCCESS;  // `previous` retires here, outside the event's mutex
}

namespace {

SlotRef latest_of(LzEvent& event) {
  const std::lock_guard<std::mutex> lock(event.mutex);
  return event.latest;
}

}  // namespace

anydev_status_t event_synchronize(anydev_bk_event_t token) {
  LzEvent* event = as_event(token);
  if (event == nullptr) return null_token("event_synchronize", "event");
  if (event->shared != nullptr) return shared_event_synchronize(*event);
  const SlotRef slot = latest_of(*event);
  if (slot == nullptr) return ANYDEV_SUCCESS;
  return host_wait(slot, "event_synchronize", event->device);
}

anydev_status_t event_query(anydev_bk_event_t token, int* complete) {
  LzEvent* event = as_event(token);
  if (event == nullptr) return null_token("event_query", "event");
  if (complete == nullptr) return null_token("event_query", "out");
  if (event->shared != nullptr) return shared_event_query(*event, complete);
  const SlotRef slot = latest_of(*event);
  if (slot == nullptr) {
    *complete = 1;
    return ANYDEV_SUCCESS;
  }
  const ze_result_t r = api().zeEventQueryStatus(slot->event);
  if (r == ZE_RESULT_SUCCESS || r == ZE_RESULT_NOT_READY) {
    *complete = r == ZE_RESULT_SUCCESS ? 1 : 0;
    return ANYDEV_SUCCESS;
  }
  return report_failure(r, "zeEventQueryStatus",
                        cat("event_query on level_zero device ", event->device));
}

anydev_status_t stream_wait_event(anydev_bk_stream_t stream_token, anydev_bk_event_t event_token) {
  LzStream* stream = as_stream(stream_token);
  LzEvent* event = as_event(event_token);
  if (stream == nullptr) return null_token("stream_wait_event", "stream");
  if (event == nullptr) return null_token("stream_wait_event", "event");
  if (event->shared != nullptr) return shared_stream_wait(*stream, *event);
  SlotRef slot = latest_of(*event);
  if (slot == nullptr) return ANYDEV_SUCCESS;  // never recorded: complete
  if (device_at(stream->device).driver != device_at(event->device).driver) {
    // Events of another driver's context cannot be waited on by this list:
    // the host waits instead (the caller blocks; order is kept).
    return host_wait(slot, "stream_wait_event across Level Zero drivers", event->device);
  }
  const std::lock_guard<std::mutex> lock(stream->mutex);
  ze_event_handle_t native = slot->event;
  const ze_result_t r = api().zeCommandListAppendWaitOnEvents(stream->list, 1, &native);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeCommandListAppendWaitOnEvents",
                          cat("stream_wait_event: a stream of level_zero device ", stream->device,
                              " waiting for an event of device ", event->device));
  }
  hold_locked(*stream, std::move(slot));
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::level_zero
