// SPDX-License-Identifier: Apache-2.0
// streams (non-blocking CUstreams, owned or wrapped) and events (without timing).
#include <cuda.h>

#include <cstdint>
#include <new>

#include "cuda_entries.h"
#include "cuda_errors.h"
#include "cuda_objects.h"
#include "cuda_state.h"

namespace anydev::cuda {
namespace {

const void* raw(const void* p) { return p; }

anydev_status_t null_token(const char* operation, const char* what) {
  return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, cat(operation, ": null ", what));
}

}  // namespace

anydev_status_t stream_create(int device, anydev_bk_stream_t* out) {
  if (out == nullptr) return null_token("stream_create", "out");
  ScopedContext scope;
  if (const anydev_status_t s = scope.enter(device, "stream_create"); s != ANYDEV_SUCCESS) return s;
  CUstream native = nullptr;
  const CUresult r = driver().StreamCreate(&native, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) {
    return report_failure(r, "cuStreamCreate", cat("stream_create on cuda device ", device));
  }
  auto* stream = new (std::nothrow) CudaStream{device, native, true};
  if (stream == nullptr) {
    driver().StreamDestroy(native);
    return report_error(ANYDEV_ERROR_OUT_OF_MEMORY, "stream_create: out of host memory");
  }
  *out = to_token(stream);
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_wrap_native(int device, void* native_stream, anydev_bk_stream_t* out) {
  if (out == nullptr) return null_token("stream_wrap_native", "out");
  ScopedContext scope;
  if (const anydev_status_t s = scope.enter(device, "stream_wrap_native"); s != ANYDEV_SUCCESS) {
    return s;
  }
  auto native = static_cast<CUstream>(native_stream);
  const CudaDriver& drv = driver();
  if (drv.StreamGetCtx != nullptr) {  // a stream of another context cannot reach our memory
    CUcontext owner = nullptr;
    const CUresult r = drv.StreamGetCtx(native, &owner);
    if (r != CUDA_SUCCESS) {
      return report_failure(
          ANYDEV_ERROR_INVALID_ARGUMENT, r, "cuStreamGetCtx",
          cat("stream_wrap_native of CUstream ", raw(native_stream), " on cuda device ", device));
    }
    CUcontext primary = nullptr;
    primary_context(device, &primary);
    if (owner != primary) {
      return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                          cat("stream_wrap_native: CUstream ", raw(native_stream),
                              " belongs to CUcontext ", raw(owner), ", not to the primary context ",
                              raw(primary), " of cuda device ", device));
    }
  }
  auto* stream = new (std::nothrow) CudaStream{device, native, false};
  if (stream == nullptr) {
    return report_error(ANYDEV_ERROR_OUT_OF_MEMORY, "stream_wrap_native: out of host memory");
  }
  *out = to_token(stream);
  return ANYDEV_SUCCESS;
}

anydev_status_t stream_destroy(anydev_bk_stream_t token) {
  CudaStream* stream = as_stream(token);
  if (stream == nullptr) return null_token("stream_destroy", "stream");
  if (!stream->owned) {
    // A wrapped stream belongs to the caller, who may destroy it as soon as
    // the anydev context over it is released (the release reaches here later,
    // from the reclaimer): never touch the native stream again. The core
    // ordered every release on it with events, so nothing waits for it here.
    delete stream;
    return ANYDEV_SUCCESS;
  }
  ScopedContext scope;
  anydev_status_t status = scope.enter(stream->device, "stream_destroy");
  if (status == ANYDEV_SUCCESS) {
    CUresult r = driver().StreamSynchronize(stream->native);
    if (r != CUDA_SUCCESS) {
      status = report_failure(r, "cuStreamSynchronize",
                              cat("stream_destroy on cuda device ", stream->device));
    }
    if ((r = driver().StreamDestroy(stream->native)) != CUDA_SUCCESS && status == ANYDEV_SUCCESS) {
      status = report_failure(r, "cuStreamDestroy",
                              cat("stream_destroy on cuda device ", stream->device));
    }
  }
  delete stream;
  return status;
}

anydev_status_t stream_synchronize(anydev_bk_stream_t token) {
  const CudaStream* stream = as_stream(token);
  if (stream == nullptr) return null_token("stream_synchronize", "stream");
  const CUresult r =
      call_on_stream(stream->device, names_its_context(stream->native), "stream_synchronize",
                     [stream] { return driver().StreamSynchronize(stream->native); });
  if (r != CUDA_SUCCESS) {
    return report_failure(r, "cuStreamSynchronize",
                          cat("synchronize of a stream on cuda device ", stream->device));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t event_create(int device, anydev_bk_event_t* out) {
  if (out == nullptr) return null_token("event_create", "out");
  ScopedContext scope;
  if (const anydev_status_t s = scope.enter(device, "event_create"); s != ANYDEV_SUCCESS) return s;
  CUevent native = nullptr;
  const CUresult r = driver().EventCreate(&native, CU_EVENT_DISABLE_TIMING);
  if (r != CUDA_SUCCESS) {
    return report_failure(r, "cuEventCreate", cat("event_create on cuda device ", device));
  }
  auto* event = new (std::nothrow) CudaEvent{device, native};
  if (event == nullptr) {
    driver().EventDestroy(native);
    return report_error(ANYDEV_ERROR_OUT_OF_MEMORY, "event_create: out of host memory");
  }
  *out = to_token(event);
  return ANYDEV_SUCCESS;
}

anydev_status_t event_destroy(anydev_bk_event_t token) {
  CudaEvent* event = as_event(token);
  if (event == nullptr) return null_token("event_destroy", "event");
  ScopedContext scope;
  anydev_status_t status = scope.enter(event->device, "event_destroy");
  if (status == ANYDEV_SUCCESS) {
    const CUresult r = driver().EventDestroy(event->native);
    if (r != CUDA_SUCCESS) {
      status =
          report_failure(r, "cuEventDestroy", cat("event_destroy on cuda device ", event->device));
    }
  }
  delete event;
  return status;
}

anydev_status_t event_record(anydev_bk_event_t event_token, anydev_bk_stream_t stream_token) {
  const CudaEvent* event = as_event(event_token);
  const CudaStream* stream = as_stream(stream_token);
  if (event == nullptr) return null_token("event_record", "event");
  if (stream == nullptr) return null_token("event_record", "stream");
  if (event->device != stream->device) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("event_record: the event belongs to cuda device ", event->device,
                            ", the stream to device ", stream->device));
  }
  const CUresult r =
      call_on_stream(stream->device, names_its_context(stream->native), "event_record",
                     [&] { return driver().EventRecord(event->native, stream->native); });
  if (r != CUDA_SUCCESS) {
    return report_failure(r, "cuEventRecord", cat("event_record on cuda device ", stream->device));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t event_synchronize(anydev_bk_event_t token) {
  const CudaEvent* event = as_event(token);
  if (event == nullptr) return null_token("event_synchronize", "event");
  // An event names its context, like a stream from cuStreamCreate.
  const CUresult r = call_on_stream(event->device, true, "event_synchronize",
                                    [event] { return driver().EventSynchronize(event->native); });
  if (r != CUDA_SUCCESS) {
    return report_failure(r, "cuEventSynchronize",
                          cat("event_synchronize on cuda device ", event->device));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t event_query(anydev_bk_event_t token, int* complete) {
  const CudaEvent* event = as_event(token);
  if (event == nullptr) return null_token("event_query", "event");
  if (complete == nullptr) return null_token("event_query", "out");
  const CUresult r = call_on_stream(event->device, true, "event_query",
                                    [event] { return driver().EventQuery(event->native); });
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY) {
    *complete = r == CUDA_SUCCESS ? 1 : 0;
    return ANYDEV_SUCCESS;
  }
  return report_failure(r, "cuEventQuery", cat("event_query on cuda device ", event->device));
}

anydev_status_t stream_wait_event(anydev_bk_stream_t stream_token, anydev_bk_event_t event_token) {
  const CudaStream* stream = as_stream(stream_token);
  const CudaEvent* event = as_event(event_token);
  if (stream == nullptr) return null_token("stream_wait_event", "stream");
  if (event == nullptr) return null_token("stream_wait_event", "event");
  const CUresult r =
      call_on_stream(stream->device, names_its_context(stream->native), "stream_wait_event",
                     [&] { return driver().StreamWaitEvent(stream->native, event->native, 0); });
  if (r != CUDA_SUCCESS) {
    return report_failure(r, "cuStreamWaitEvent",
                          cat("stream_wait_event: a stream of cuda device ", stream->device,
                              " waiting for an event of device ", event->device));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cuda
