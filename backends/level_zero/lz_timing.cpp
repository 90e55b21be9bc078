// SPDX-License-Identifier: Apache-2.0
// Timed events and stream priorities on Level Zero (docs/timing.md).
//
// A timing event's records signal slots of kernel-timestamp event pools
// (ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP): the barrier that signals one
// writes the device's timestamp when it runs, read back with
// zeEventQueryKernelTimestamp (global.kernelEnd, ticks of the device's
// timerResolution, valid in its low kernelTimestampValidBits). Device time,
// not host time. A loader without zeEventQueryKernelTimestamp: timing events
// are UNSUPPORTED. Blocking sync: zeEventHostSynchronize already sleeps in
// the driver; the flag is accepted and changes nothing.
//
// Priorities: 0 is ZE_COMMAND_QUEUE_PRIORITY_NORMAL and -1
// ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH (PRIORITY_LOW, below normal, has
// no place in CUDA's range, whose least priority is the default).
#include <cstdint>
#include <mutex>
#include <new>

#include "lz_entries.h"
#include "lz_errors.h"
#include "lz_objects.h"
#include "lz_state.h"

namespace anydev::level_zero {
namespace {

// The device timestamp of `event`'s latest record, in ticks.
anydev_status_t stamp_of(LzEvent& event, const char* which, std::uint64_t* ticks) {
  SlotRef slot;
  {
    const std::lock_guard<std::mutex> lock(event.mutex);
    slot = event.latest;
  }
  if (slot == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_STATE,
                        cat("event_elapsed_time: the ", which, " event was never recorded"));
  }
  ze_kernel_timestamp_result_t result = {};
  const ze_result_t r = api().zeEventQueryKernelTimestamp(slot->event, &result);
  if (r == ZE_RESULT_NOT_READY) {
    return report_error(
        ANYDEV_ERROR_NOT_READY,
        cat("event_elapsed_time: the work the ", which,
            " event captured has not completed yet (level_zero device ", event.device, ")"));
  }
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(
        r, "zeEventQueryKernelTimestamp",
        cat("event_elapsed_time (", which, " event, level_zero device ", event.device, ")"));
  }
  *ticks = result.global.kernelEnd;
  return ANYDEV_SUCCESS;
}

}  // namespace

anydev_status_t event_create_flags(int device, std::uint32_t flags, anydev_bk_event_t* out) {
  if (out == nullptr)
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "event_create_flags: out is NULL");
  if (const anydev_status_t s = check_device(device, "event_create_flags"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const bool timing = (flags & ANYDEV_EVENT_TIMING) != 0;
  if (timing && device_at(device).driver->timestamp_events == nullptr) {
    return report_error(ANYDEV_ERROR_UNSUPPORTED,
                        cat("event_create_flags on level_zero device ", device,
                            ": the Level Zero loader lacks zeEventQueryKernelTimestamp, so "
                            "events cannot be timed"));
  }
  auto* event = new (std::nothrow) LzEvent;
  if (event == nullptr) {
    return report_error(ANYDEV_ERROR_OUT_OF_MEMORY, "event_create_flags: out of host memory");
  }
  event->device = device;
  event->timing = timing;
  *out = to_token(event);
  return ANYDEV_SUCCESS;
}

anydev_status_t event_elapsed_time(anydev_bk_event_t start, anydev_bk_event_t end, float* ms) {
  LzEvent* a = as_event(start);
  LzEvent* b = as_event(end);
  if (a == nullptr || b == nullptr || ms == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "event_elapsed_time: a NULL argument");
  }
  std::uint64_t t0 = 0;
  std::uint64_t t1 = 0;
  if (const anydev_status_t s = stamp_of(*a, "start", &t0); s != ANYDEV_SUCCESS) return s;
  if (const anydev_status_t s = stamp_of(*b, "end", &t1); s != ANYDEV_SUCCESS) return s;
  const DeviceState& d = device_at(a->device);
  // The counter wraps at its valid bits: the shorter way round is the
  // difference (signed, as end may come first).
  const std::uint32_t bits = d.kernel_timestamp_bits;
  const std::uint64_t mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  const std::uint64_t forward = (t1 - t0) & mask;
  const std::uint64_t backward = (t0 - t1) & mask;
  const double ticks =
      forward <= backward ? static_cast<double>(forward) : -static_cast<double>(backward);
  *ms = static_cast<float>(ticks * static_cast<double>(d.timer_resolution_ns) / 1e6);
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_priority_range(int device, int* least, int* greatest) {
  if (least == nullptr || greatest == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "stream_priority_range: a NULL argument");
  }
  if (const anydev_status_t s = check_device(device, "stream_priority_range");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  *least = 0;
  *greatest = -1;
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_create_priority(int device, int priority, anydev_bk_stream_t* out) {
  if (priority < -1 || priority > 0) {
    return report_error(
        ANYDEV_ERROR_OUT_OF_RANGE,
        cat("stream_create_priority: priority ", priority, " is outside level_zero's [-1, 0]"));
  }
  return create_stream_at(
      device,
      priority < 0 ? ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH : ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
      "stream_create_priority", out);
}

}  // namespace anydev::level_zero
