// SPDX-License-Identifier: Apache-2.0
// Streams and events.
#include <cuda.h>

#include <memory>

#include "core_share.h"
#include "core_stream.h"
#include "emu_state.h"

using anydev_emu::Context;
using anydev_emu::cu;
using anydev_emu::EventRef;
using anydev_emu::StreamRef;
namespace core = anydev_emu::core;

extern "C" {

CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuStreamCreate", &c); r != CUDA_SUCCESS)
    return r;
  if (stream == nullptr || (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *stream = static_cast<CUstream>(core::register_object(core::Stream::create(c)));
  return CUDA_SUCCESS;
}

// The range of current NVIDIA GPUs. Each stream runs on its own worker, so
// a priority changes nothing here but is accepted (clamped, as the driver
// does) and counted.
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;

CUresult cuStreamCreateWithPriority(CUstream* stream, unsigned int flags, int priority) {
  static_cast<void>(priority);  // clamped into the range: accepted whatever it is
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuStreamCreateWithPriority", &c);
      r != CUDA_SUCCESS)
    return r;
  if (stream == nullptr || (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *stream = static_cast<CUstream>(core::register_object(core::Stream::create(c)));
  return CUDA_SUCCESS;
}

CUresult cuCtxGetStreamPriorityRange(int* least, int* greatest) {
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuCtxGetStreamPriorityRange", &c);
      r != CUDA_SUCCESS)
    return r;
  // cuda.h: either pointer may be NULL.
  if (least != nullptr) *least = kLeastPriority;
  if (greatest != nullptr) *greatest = kGreatestPriority;
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream stream) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  return cu(core::destroy_stream(stream, "cuStreamDestroy"));
}

CUresult cuStreamSynchronize(CUstream stream) {
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuStreamSynchronize", &s);
      r != CUDA_SUCCESS)
    return r;
  return cu(s->synchronize());
}

CUresult cuStreamGetCtx(CUstream stream, CUcontext* context) {
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuStreamGetCtx", &s); r != CUDA_SUCCESS)
    return r;
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *context = anydev_emu::to_handle(s->context());
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuEventCreate", &c); r != CUDA_SUCCESS)
    return r;
  constexpr unsigned int kKnown =
      CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  if (event == nullptr || (flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  if ((flags & CU_EVENT_INTERPROCESS) != 0) {
    // cuda.h: an interprocess event must also disable timing.
    if ((flags & CU_EVENT_DISABLE_TIMING) == 0) return CUDA_ERROR_INVALID_VALUE;
    EventRef e;
    if (const CUresult r = cu(core::ipc_event_create(c, &e)); r != CUDA_SUCCESS) return r;
    *event = static_cast<CUevent>(core::register_object(e));
    return CUDA_SUCCESS;
  }
  auto created = std::make_shared<core::Event>(c);
  created->timing = (flags & CU_EVENT_DISABLE_TIMING) == 0;
  *event = static_cast<CUevent>(core::register_object(created));
  return CUDA_SUCCESS;
}

CUresult cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end) {
  EventRef a;
  EventRef b;
  if (const CUresult r = anydev_emu::lookup_event(start, "cuEventElapsedTime", &a);
      r != CUDA_SUCCESS)
    return r;
  if (const CUresult r = anydev_emu::lookup_event(end, "cuEventElapsedTime", &b); r != CUDA_SUCCESS)
    return r;
  if (milliseconds == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cu(core::elapsed_time(a, b, milliseconds));
}

CUresult cuEventDestroy(CUevent event) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  return cu(core::destroy_event(event, "cuEventDestroy"));
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  EventRef e;
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_event(event, "cuEventRecord", &e); r != CUDA_SUCCESS)
    return r;
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuEventRecord", &s); r != CUDA_SUCCESS)
    return r;
  return cu(core::record_event(e, s, "cuEventRecord"));
}

CUresult cuEventQuery(CUevent event) {
  EventRef e;
  if (const CUresult r = anydev_emu::lookup_event(event, "cuEventQuery", &e); r != CUDA_SUCCESS)
    return r;
  return cu(core::query_event(e));
}

CUresult cuEventSynchronize(CUevent event) {
  EventRef e;
  if (const CUresult r = anydev_emu::lookup_event(event, "cuEventSynchronize", &e);
      r != CUDA_SUCCESS)
    return r;
  core::synchronize_event(e);
  return CUDA_SUCCESS;
}

CUresult cuLaunchHostFunc(CUstream stream, CUhostFn fn, void* user_data) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuLaunchHostFunc", &s);
      r != CUDA_SUCCESS)
    return r;
  s->enqueue("cuLaunchHostFunc", [fn, user_data] {
    fn(user_data);
    return core::Status::success;
  });
  return CUDA_SUCCESS;
}

CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  EventRef e;
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_event(event, "cuStreamWaitEvent", &e);
      r != CUDA_SUCCESS)
    return r;
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuStreamWaitEvent", &s);
      r != CUDA_SUCCESS)
    return r;
  core::wait_event(s, e);
  return CUDA_SUCCESS;
}

}  // extern "C"
