// SPDX-License-Identifier: Apache-2.0
#include "opencl_event.h"

#include <utility>

#include "opencl_entries.h"
#include "opencl_errors.h"
#include "opencl_services.h"
#include "opencl_stream.h"

namespace anydev::opencl {
namespace {

anydev_status_t null_event(const char* operation) {
  return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, cat(operation, ": the event is NULL"));
}

std::string event_place(const Event& event) {
  return cat("an event of OpenCL device ", event.device->index, " (", event.device->name, ")");
}

}  // namespace

cl_event retained_marker(Event& event, cl_context* context) {
  std::lock_guard<std::mutex> lock(event.mutex);
  if (event.marker != nullptr) cl().clRetainEvent(event.marker);
  *context = event.context;
  return event.marker;
}

anydev_status_t event_create(int device_index, anydev_bk_event_t* out) {
  Device* device = nullptr;
  if (anydev_status_t s = find_device(device_index, "event_create", &device); s != ANYDEV_SUCCESS) {
    return s;
  }
  auto* event = new Event();
  event->device = device;
  *out = reinterpret_cast<anydev_bk_event_t>(event);
  return ANYDEV_SUCCESS;
}

anydev_status_t event_destroy(anydev_bk_event_t handle) {
  Event* event = as_event(handle);
  if (event == nullptr) return null_event("event_destroy");
  if (event->marker != nullptr) cl().clReleaseEvent(event->marker);
  delete event;
  return ANYDEV_SUCCESS;
}

anydev_status_t event_record(anydev_bk_event_t event_handle, anydev_bk_stream_t stream_handle) {
  Event* event = as_event(event_handle);
  Stream* stream = as_stream(stream_handle);
  if (event == nullptr) return null_event("event_record");
  if (stream == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "event_record: the stream is NULL");
  }
  admit_command(*stream);
  cl_event marker = nullptr;
  cl_int err = cl().clEnqueueMarkerWithWaitList(stream->queue, 0, nullptr, &marker);
  if (err != CL_SUCCESS) {
    return report_cl("clEnqueueMarkerWithWaitList", err,
                     cat("event_record on a stream of OpenCL device ", stream->device->index));
  }
  // The stream counts the marker too (one more reference), for backpressure.
  if (cl().clRetainEvent(marker) == CL_SUCCESS) {
    track_command(*stream, marker, "clEnqueueMarkerWithWaitList", "event_record", 0);
  }
  // Another queue may wait for this marker: OpenCL needs it submitted first.
  err = cl().clFlush(stream->queue);
  if (err != CL_SUCCESS) {
    cl().clReleaseEvent(marker);
    return report_cl("clFlush", err,
                     cat("event_record on a stream of OpenCL device ", stream->device->index));
  }
  cl_event previous = nullptr;
  {
    std::lock_guard<std::mutex> lock(event->mutex);
    previous = std::exchange(event->marker, marker);
    event->context = stream->context;
  }
  if (previous != nullptr) cl().clReleaseEvent(previous);
  return ANYDEV_SUCCESS;
}

anydev_status_t event_synchronize(anydev_bk_event_t handle) {
  Event* event = as_event(handle);
  if (event == nullptr) return null_event("event_synchronize");
  cl_context context = nullptr;
  cl_event marker = retained_marker(*event, &context);
  if (marker == nullptr) return ANYDEV_SUCCESS;
  cl_int err = cl().clWaitForEvents(1, &marker);
  cl_int status = CL_COMPLETE;
  if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
    cl().clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                        nullptr);
  }
  cl().clReleaseEvent(marker);
  if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
    return set_error(call_status(status),
                     cat("event_synchronize: the work captured by ", event_place(*event),
                         " failed: ", cl_error_name(status), " (", status, ")"));
  }
  if (err != CL_SUCCESS) {
    return report_cl("clWaitForEvents", err, cat("event_synchronize of ", event_place(*event)));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t event_query(anydev_bk_event_t handle, int* complete) {
  Event* event = as_event(handle);
  if (event == nullptr) return null_event("event_query");
  cl_context context = nullptr;
  cl_event marker = retained_marker(*event, &context);
  if (marker == nullptr) {
    *complete = 1;
    return ANYDEV_SUCCESS;
  }
  cl_int status = CL_QUEUED;
  const cl_int err = cl().clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
                                         &status, nullptr);
  cl().clReleaseEvent(marker);
  if (err != CL_SUCCESS) {
    return report_cl("clGetEventInfo", err, cat("event_query of ", event_place(*event)));
  }
  if (status < 0) {
    return set_error(call_status(status),
                     cat("event_query: the work captured by ", event_place(*event),
                         " failed: ", cl_error_name(status), " (", status, ")"));
  }
  *complete = status == CL_COMPLETE ? 1 : 0;
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_wait_event(anydev_bk_stream_t stream_handle,
                                  anydev_bk_event_t event_handle) {
  Stream* stream = as_stream(stream_handle);
  Event* event = as_event(event_handle);
  if (event == nullptr) return null_event("stream_wait_event");
  if (stream == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "stream_wait_event: the stream is NULL");
  }
  cl_context context = nullptr;
  cl_event marker = retained_marker(*event, &context);
  if (marker == nullptr) return ANYDEV_SUCCESS;
  if (context != stream->context) {
    cl().clReleaseEvent(marker);
    return set_error(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat("stream_wait_event: ", event_place(*event),
            " cannot be waited for on a stream of OpenCL device ", stream->device->index, " (",
            stream->device->name, "): each device has its own cl_context"));
  }
  admit_command(*stream);
  cl_event barrier = nullptr;
  const cl_int err = cl().clEnqueueBarrierWithWaitList(stream->queue, 1, &marker, &barrier);
  cl().clReleaseEvent(marker);
  if (err != CL_SUCCESS) {
    return report_cl("clEnqueueBarrierWithWaitList", err,
                     cat("stream_wait_event on a stream of OpenCL device ", stream->device->index));
  }
  track_command(*stream, barrier, "clEnqueueBarrierWithWaitList", "stream_wait_event", 0);
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::opencl
