// SPDX-License-Identifier: Apache-2.0
// Timed events and stream priorities on OpenCL (docs/timing.md).
//
// A timing event is an ordinary event (its record enqueues a marker); its
// time is the marker's CL_PROFILING_COMMAND_END, which the queue measures
// because anydev creates every queue with CL_QUEUE_PROFILING_ENABLE. A
// wrapped native queue without that property gives no times: elapsed_time
// then says so. Blocking sync is clWaitForEvents as for every event (the
// driver decides how it waits: PoCL sleeps on a condition variable).
//
// Priorities: with cl_khr_priority_hints, -1 is CL_QUEUE_PRIORITY_HIGH_KHR
// and 0 the default; without it (PoCL) the range is the one priority 0.
#include <cstdint>
#include <string>

#include "opencl_entries.h"
#include "opencl_errors.h"
#include "opencl_event.h"
#include "opencl_services.h"
#include "opencl_stream.h"

namespace anydev::opencl {
namespace {

// The END time of `event`'s latest marker, or an error naming `which`.
anydev_status_t marker_end(Event& event, const char* which, cl_ulong* out) {
  cl_context context = nullptr;
  cl_event marker = retained_marker(event, &context);
  if (marker == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_STATE,
                     cat("event_elapsed_time: the ", which, " event was never recorded"));
  }
  cl_int status = CL_QUEUED;
  cl_int err = cl().clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
                                   &status, nullptr);
  if (err == CL_SUCCESS && status != CL_COMPLETE) {
    cl().clReleaseEvent(marker);
    if (status < 0) {
      return set_error(call_status(status),
                       cat("event_elapsed_time: the work the ", which,
                           " event captured failed: ", cl_error_name(status), " (", status, ")"));
    }
    return set_error(
        ANYDEV_ERROR_NOT_READY,
        cat("event_elapsed_time: the work the ", which,
            " event captured has not completed yet (OpenCL device ", event.device->index, ")"));
  }
  cl_ulong end = 0;
  if (err == CL_SUCCESS) {
    err =
        cl().clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
  }
  cl().clReleaseEvent(marker);
  if (err == CL_PROFILING_INFO_NOT_AVAILABLE) {
    return set_error(ANYDEV_ERROR_UNSUPPORTED,
                     cat("event_elapsed_time: the ", which,
                         " event was recorded on a queue without CL_QUEUE_PROFILING_ENABLE (a "
                         "wrapped native queue): OpenCL gives no times for its commands"));
  }
  if (err != CL_SUCCESS) {
    return report_cl(
        "clGetEventProfilingInfo", err,
        cat("event_elapsed_time (", which, " event, OpenCL device ", event.device->index, ")"));
  }
  *out = end;
  return ANYDEV_SUCCESS;
}

}  // namespace

anydev_status_t event_create_flags(int device_index, std::uint32_t flags, anydev_bk_event_t* out) {
  if (out == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "event_create_flags: out is NULL");
  }
  Device* device = nullptr;
  if (anydev_status_t s = find_device(device_index, "event_create_flags", &device);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const bool timing = (flags & ANYDEV_EVENT_TIMING) != 0;
  if (timing && cl().clGetEventProfilingInfo == nullptr) {
    return set_error(ANYDEV_ERROR_UNSUPPORTED,
                     cat("event_create_flags on OpenCL device ", device_index,
                         ": the OpenCL library lacks clGetEventProfilingInfo"));
  }
  auto* event = new Event();
  event->device = device;
  event->timing = timing;
  *out = reinterpret_cast<anydev_bk_event_t>(event);
  return ANYDEV_SUCCESS;
}

anydev_status_t event_elapsed_time(anydev_bk_event_t start, anydev_bk_event_t end, float* ms) {
  if (start == nullptr || end == nullptr || ms == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "event_elapsed_time: a NULL argument");
  }
  cl_ulong t0 = 0;
  cl_ulong t1 = 0;
  if (anydev_status_t s = marker_end(*as_event(start), "start", &t0); s != ANYDEV_SUCCESS) return s;
  if (anydev_status_t s = marker_end(*as_event(end), "end", &t1); s != ANYDEV_SUCCESS) return s;
  // Nanoseconds of the device's clock; signed, as end may come first.
  const double ns = t1 >= t0 ? static_cast<double>(t1 - t0) : -static_cast<double>(t0 - t1);
  *ms = static_cast<float>(ns / 1e6);
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_priority_range(int device_index, int* least, int* greatest) {
  if (least == nullptr || greatest == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "stream_priority_range: a NULL argument");
  }
  Device* device = nullptr;
  if (anydev_status_t s = find_device(device_index, "stream_priority_range", &device);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  *least = 0;
  *greatest = has_priority_hints(*device) ? -1 : 0;
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_create_priority(int device_index, int priority, anydev_bk_stream_t* out) {
  if (out == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "stream_create_priority: out is NULL");
  }
  Device* device = nullptr;
  if (anydev_status_t s = find_device(device_index, "stream_create_priority", &device);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (priority < 0 && !has_priority_hints(*device)) {
    return set_error(ANYDEV_ERROR_OUT_OF_RANGE,
                     cat("stream_create_priority: OpenCL device ", device_index, " (", device->name,
                         ") lacks cl_khr_priority_hints: its only priority is 0"));
  }
  cl_context context = nullptr;
  if (anydev_status_t s = device_context(*device, &context); s != ANYDEV_SUCCESS) return s;
  cl_command_queue queue = nullptr;
  if (anydev_status_t s = create_queue(*device, priority, &queue); s != ANYDEV_SUCCESS) return s;
  auto* stream = new Stream();
  stream->device = device;
  stream->context = context;
  stream->queue = queue;
  *out = reinterpret_cast<anydev_bk_stream_t>(stream);
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::opencl
