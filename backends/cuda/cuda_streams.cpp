// Streams (non-blocking CUstreams, owned or wrapped) and events (without timing).
#include <cuda.h>

#include <cstdint>
#include <new>

#include "cuda_entries.h"
#include "cuda_errors.h"
#include "cuda_objects.h"
#include "cuda_state.h"

namespace anydev::cuda {
namespace {

const void* Raw(const void* p) { return p; }

anydev_status_t NullToken(const char* operation, const char* what) {
  return ReportError(ANYDEV_ERROR_INVALID_ARGUMENT, cat(operation, ": null ", what));
}

}  // namespace

anydev_status_t StreamCreate(int device, anydev_bk_stream_t* out) {
  if (out == nullptr) return NullToken("stream_create", "out");
  ScopedContext scope;
  if (const anydev_status_t s = scope.Enter(device, "stream_create"); s != ANYDEV_SUCCESS) return s;
  CUstream native = nullptr;
  const CUresult r = Driver().StreamCreate(&native, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) {
    return ReportFailure(r, "cuStreamCreate", cat("stream_create on cuda device ", device));
  }
  auto* stream = new (std::nothrow) CudaStream{device, native, true};
  if (stream == nullptr) {
    Driver().StreamDestroy(native);
    return ReportError(ANYDEV_ERROR_OUT_OF_MEMORY, "stream_create: out of host memory");
  }
  *out = ToToken(stream);
  return ANYDEV_SUCCESS;
}

anydev_status_t StreamWrapNative(int device, void* native_stream, anydev_bk_stream_t* out) {
  if (out == nullptr) return NullToken("stream_wrap_native", "out");
  ScopedContext scope;
  if (const anydev_status_t s = scope.Enter(device, "stream_wrap_native"); s != ANYDEV_SUCCESS) {
    return s;
  }
  auto native = static_cast<CUstream>(native_stream);
  const CudaDriver& drv = Driver();
  if (drv.StreamGetCtx != nullptr) {  // a stream of another context cannot reach our memory
    CUcontext owner = nullptr;
    const CUresult r = drv.StreamGetCtx(native, &owner);
    if (r != CUDA_SUCCESS) {
      return ReportFailure(
          ANYDEV_ERROR_INVALID_ARGUMENT, r, "cuStreamGetCtx",
          cat("stream_wrap_native of CUstream ", Raw(native_stream), " on cuda device ", device));
    }
    CUcontext primary = nullptr;
    PrimaryContext(device, &primary);
    if (owner != primary) {
      return ReportError(ANYDEV_ERROR_INVALID_ARGUMENT,
                         cat("stream_wrap_native: CUstream ", Raw(native_stream),
                             " belongs to CUcontext ", Raw(owner), ", not to the primary context ",
                             Raw(primary), " of cuda device ", device));
    }
  }
  auto* stream = new (std::nothrow) CudaStream{device, native, false};
  if (stream == nullptr) {
    return ReportError(ANYDEV_ERROR_OUT_OF_MEMORY, "stream_wrap_native: out of host memory");
  }
  *out = ToToken(stream);
  return ANYDEV_SUCCESS;
}

anydev_status_t StreamDestroy(anydev_bk_stream_t token) {
  CudaStream* stream = AsStream(token);
  if (stream == nullptr) return NullToken("stream_destroy", "stream");
  ScopedContext scope;
  anydev_status_t status = scope.Enter(stream->device, "stream_destroy");
  if (status == ANYDEV_SUCCESS) {
    CUresult r = Driver().StreamSynchronize(stream->native);
    if (r != CUDA_SUCCESS) {
      status = ReportFailure(r, "cuStreamSynchronize",
                             cat("stream_destroy on cuda device ", stream->device));
    }
    if (stream->owned && (r = Driver().StreamDestroy(stream->native)) != CUDA_SUCCESS &&
        status == ANYDEV_SUCCESS) {
      status = ReportFailure(r, "cuStreamDestroy",
                             cat("stream_destroy on cuda device ", stream->device));
    }
  }
  delete stream;
  return status;
}

anydev_status_t StreamSynchronize(anydev_bk_stream_t token) {
  const CudaStream* stream = AsStream(token);
  if (stream == nullptr) return NullToken("stream_synchronize", "stream");
  ScopedContext scope;
  if (const anydev_status_t s = scope.Enter(stream->device, "stream_synchronize");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const CUresult r = Driver().StreamSynchronize(stream->native);
  if (r != CUDA_SUCCESS) {
    return ReportFailure(r, "cuStreamSynchronize",
                         cat("synchronize of a stream on cuda device ", stream->device));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t EventCreate(int device, anydev_bk_event_t* out) {
  if (out == nullptr) return NullToken("event_create", "out");
  ScopedContext scope;
  if (const anydev_status_t s = scope.Enter(device, "event_create"); s != ANYDEV_SUCCESS) return s;
  CUevent native = nullptr;
  const CUresult r = Driver().EventCreate(&native, CU_EVENT_DISABLE_TIMING);
  if (r != CUDA_SUCCESS) {
    return ReportFailure(r, "cuEventCreate", cat("event_create on cuda device ", device));
  }
  auto* event = new (std::nothrow) CudaEvent{device, native};
  if (event == nullptr) {
    Driver().EventDestroy(native);
    return ReportError(ANYDEV_ERROR_OUT_OF_MEMORY, "event_create: out of host memory");
  }
  *out = ToToken(event);
  return ANYDEV_SUCCESS;
}

anydev_status_t EventDestroy(anydev_bk_event_t token) {
  CudaEvent* event = AsEvent(token);
  if (event == nullptr) return NullToken("event_destroy", "event");
  ScopedContext scope;
  anydev_status_t status = scope.Enter(event->device, "event_destroy");
  if (status == ANYDEV_SUCCESS) {
    const CUresult r = Driver().EventDestroy(event->native);
    if (r != CUDA_SUCCESS) {
      status =
          ReportFailure(r, "cuEventDestroy", cat("event_destroy on cuda device ", event->device));
    }
  }
  delete event;
  return status;
}

anydev_status_t EventRecord(anydev_bk_event_t event_token, anydev_bk_stream_t stream_token) {
  const CudaEvent* event = AsEvent(event_token);
  const CudaStream* stream = AsStream(stream_token);
  if (event == nullptr) return NullToken("event_record", "event");
  if (stream == nullptr) return NullToken("event_record", "stream");
  if (event->device != stream->device) {
    return ReportError(ANYDEV_ERROR_INVALID_ARGUMENT,
                       cat("event_record: the event belongs to cuda device ", event->device,
                           ", the stream to device ", stream->device));
  }
  ScopedContext scope;
  if (const anydev_status_t s = scope.Enter(stream->device, "event_record"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const CUresult r = Driver().EventRecord(event->native, stream->native);
  if (r != CUDA_SUCCESS) {
    return ReportFailure(r, "cuEventRecord", cat("event_record on cuda device ", stream->device));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t EventSynchronize(anydev_bk_event_t token) {
  const CudaEvent* event = AsEvent(token);
  if (event == nullptr) return NullToken("event_synchronize", "event");
  ScopedContext scope;
  if (const anydev_status_t s = scope.Enter(event->device, "event_synchronize");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const CUresult r = Driver().EventSynchronize(event->native);
  if (r != CUDA_SUCCESS) {
    return ReportFailure(r, "cuEventSynchronize",
                         cat("event_synchronize on cuda device ", event->device));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t EventQuery(anydev_bk_event_t token, int* complete) {
  const CudaEvent* event = AsEvent(token);
  if (event == nullptr) return NullToken("event_query", "event");
  if (complete == nullptr) return NullToken("event_query", "out");
  ScopedContext scope;
  if (const anydev_status_t s = scope.Enter(event->device, "event_query"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const CUresult r = Driver().EventQuery(event->native);
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY) {
    *complete = r == CUDA_SUCCESS ? 1 : 0;
    return ANYDEV_SUCCESS;
  }
  return ReportFailure(r, "cuEventQuery", cat("event_query on cuda device ", event->device));
}

anydev_status_t StreamWaitEvent(anydev_bk_stream_t stream_token, anydev_bk_event_t event_token) {
  const CudaStream* stream = AsStream(stream_token);
  const CudaEvent* event = AsEvent(event_token);
  if (stream == nullptr) return NullToken("stream_wait_event", "stream");
  if (event == nullptr) return NullToken("stream_wait_event", "event");
  ScopedContext scope;
  if (const anydev_status_t s = scope.Enter(stream->device, "stream_wait_event");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const CUresult r = Driver().StreamWaitEvent(stream->native, event->native, 0);
  if (r != CUDA_SUCCESS) {
    return ReportFailure(r, "cuStreamWaitEvent",
                         cat("stream_wait_event: a stream of cuda device ", stream->device,
                             " waiting for an event of device ", event->device));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cuda
