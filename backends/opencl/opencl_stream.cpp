// SPDX-License-Identifier: Apache-2.0
#include "opencl_stream.h"

#include <algorithm>

#include "opencl_entries.h"
#include "opencl_errors.h"
#include "opencl_services.h"

namespace anydev::opencl {
namespace {

// Releases the pending commands that have finished, keeping the first
// failure as the stream's error. Call with stream.mutex held.
void sweep_locked(Stream& stream) {
  std::size_t kept = 0;
  for (PendingCommand& command : stream.pending) {
    cl_int status = CL_QUEUED;
    const cl_int err = cl().clGetEventInfo(command.event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                           sizeof(status), &status, nullptr);
    if (err == CL_SUCCESS && status > CL_COMPLETE) {
      stream.pending[kept++] = command;
      continue;
    }
    if (stream.first_error == ANYDEV_SUCCESS && (err != CL_SUCCESS || status < 0)) {
      const cl_int code = err != CL_SUCCESS ? err : status;
      stream.first_error = call_status(code);
      stream.first_error_message =
          err != CL_SUCCESS
              ? cat(cl_failure("clGetEventInfo", err), " while checking the ", command.call, " of ",
                    describe(stream, command.what, command.bytes))
              : cat(command.call, " failed asynchronously: ", cl_error_name(code), " (", code,
                    ") in ", describe(stream, command.what, command.bytes));
    }
    cl().clReleaseEvent(command.event);
  }
  stream.pending.resize(kept);
  stream.sweep_at = std::max<std::size_t>(64, 2 * kept);
}

void release_pending(Stream& stream) {
  std::lock_guard<std::mutex> lock(stream.mutex);
  for (PendingCommand& command : stream.pending) cl().clReleaseEvent(command.event);
  stream.pending.clear();
}

template <class T>
cl_int queue_value(cl_command_queue queue, cl_command_queue_info what, T* value) {
  return cl().clGetCommandQueueInfo(queue, what, sizeof(T), value, nullptr);
}

}  // namespace

void admit_command(Stream& stream) {
  std::unique_lock<std::mutex> lock(stream.mutex);
  while (stream.pending.size() >= kMaxCommandsInFlight) {
    sweep_locked(stream);
    if (stream.pending.size() < kMaxCommandsInFlight) break;
    // The queue is in order: once this command is done, so are the ones
    // before it, and half the bound is free again (amortized O(1) sweeps).
    cl_event wait_for = stream.pending[stream.pending.size() - kMaxCommandsInFlight / 2].event;
    cl_int err = cl().clRetainEvent(wait_for);
    if (err != CL_SUCCESS) break;
    lock.unlock();
    err = cl().clFlush(stream.queue);
    if (err == CL_SUCCESS) err = cl().clWaitForEvents(1, &wait_for);
    cl().clReleaseEvent(wait_for);
    lock.lock();
    // A failed command is recorded by the sweep; any other failure to wait
    // must not spin: admit the command (the next synchronize reports it).
    if (err != CL_SUCCESS && err != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
      sweep_locked(stream);
      break;
    }
  }
}

void track_command(Stream& stream, cl_event event, const char* call, const char* what,
                   std::size_t bytes) {
  std::lock_guard<std::mutex> lock(stream.mutex);
  stream.pending.push_back(PendingCommand{event, call, what, bytes});
  if (stream.pending.size() >= stream.sweep_at) sweep_locked(stream);
}

std::string describe(const Stream& stream, const char* what, std::size_t bytes) {
  const std::string size = bytes == 0 ? std::string() : cat(" of ", bytes, " bytes");
  return cat(what, size, " on OpenCL device ", stream.device->index, " (", stream.device->name,
             ")");
}

anydev_status_t stream_create(int device_index, anydev_bk_stream_t* out) {
  Device* device = nullptr;
  if (anydev_status_t s = find_device(device_index, "stream_create", &device);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  cl_context context = nullptr;
  if (anydev_status_t s = device_context(*device, &context); s != ANYDEV_SUCCESS) return s;
  cl_command_queue queue = nullptr;
  if (anydev_status_t s = create_queue(*device, &queue); s != ANYDEV_SUCCESS) return s;
  auto* stream = new Stream();
  stream->device = device;
  stream->context = context;
  stream->queue = queue;
  *out = reinterpret_cast<anydev_bk_stream_t>(stream);
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_wrap_native(int device_index, void* native_stream, anydev_bk_stream_t* out) {
  Device* device = nullptr;
  if (anydev_status_t s = find_device(device_index, "stream_wrap_native", &device);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (native_stream == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     "stream_wrap_native: the cl_command_queue is NULL");
  }
  cl_context context = nullptr;
  if (anydev_status_t s = device_context(*device, &context); s != ANYDEV_SUCCESS) return s;
  auto queue = static_cast<cl_command_queue>(native_stream);
  cl_context queue_context = nullptr;
  cl_device_id queue_device = nullptr;
  cl_command_queue_properties properties = 0;
  cl_int err = queue_value(queue, CL_QUEUE_CONTEXT, &queue_context);
  if (err == CL_SUCCESS) err = queue_value(queue, CL_QUEUE_DEVICE, &queue_device);
  if (err == CL_SUCCESS) err = queue_value(queue, CL_QUEUE_PROPERTIES, &properties);
  if (err != CL_SUCCESS) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat(cl_failure("clGetCommandQueueInfo", err),
                         " in stream_wrap_native: not a usable cl_command_queue"));
  }
  if (queue_device != device->id) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("stream_wrap_native: the cl_command_queue belongs to another device "
                         "than OpenCL device ",
                         device->index, " (", device->name, ")"));
  }
  if (queue_context != context) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("stream_wrap_native: the cl_command_queue was created in another "
                         "cl_context than anydev's context of OpenCL device ",
                         device->index,
                         " (create it in the context that anydev_context_native_handle(..., "
                         "ANYDEV_NATIVE_CONTEXT) returns)"));
  }
  if (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     "stream_wrap_native: the cl_command_queue is out-of-order; anydev streams "
                     "need an in-order queue");
  }
  err = cl().clRetainCommandQueue(queue);
  if (err != CL_SUCCESS) return report_cl("clRetainCommandQueue", err, "stream_wrap_native");
  auto* stream = new Stream();
  stream->device = device;
  stream->context = context;
  stream->queue = queue;
  stream->wrapped = true;
  *out = reinterpret_cast<anydev_bk_stream_t>(stream);
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_destroy(anydev_bk_stream_t handle) {
  Stream* stream = as_stream(handle);
  if (stream == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "stream_destroy: the stream is NULL");
  }
  const cl_int err = cl().clFinish(stream->queue);
  release_pending(*stream);
  cl().clReleaseCommandQueue(stream->queue);
  const int device_index = stream->device->index;
  delete stream;
  if (err != CL_SUCCESS) {
    return report_cl("clFinish", err, cat("stream_destroy on OpenCL device ", device_index));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_synchronize(anydev_bk_stream_t handle) {
  Stream* stream = as_stream(handle);
  if (stream == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "stream_synchronize: the stream is NULL");
  }
  const cl_int err = cl().clFinish(stream->queue);
  anydev_status_t status = ANYDEV_SUCCESS;
  std::string message;
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    sweep_locked(*stream);
    status = stream->first_error;
    message.swap(stream->first_error_message);
    stream->first_error = ANYDEV_SUCCESS;
  }
  if (status != ANYDEV_SUCCESS) return set_error(status, message);
  if (err != CL_SUCCESS) {
    return report_cl("clFinish", err,
                     cat("synchronize of a stream on OpenCL device ", stream->device->index, " (",
                         stream->device->name, ")"));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::opencl
