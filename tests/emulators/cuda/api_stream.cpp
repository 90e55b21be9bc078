// SPDX-License-Identifier: Apache-2.0
// Streams and events.
#include <cuda.h>

#include <memory>

#include "emu_config.h"
#include "emu_state.h"
#include "emu_stream.h"

using anydev_emu::Context;
using anydev_emu::EventRef;
using anydev_emu::StreamRef;

extern "C" {

CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuStreamCreate", &c); r != CUDA_SUCCESS) {
    return r;
  }
  if (stream == nullptr || (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *stream = anydev_emu::register_object(anydev_emu::Stream::create(c));
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream stream) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  StreamRef s;
  if (const CUresult r = anydev_emu::unregister(stream, &s); r != CUDA_SUCCESS) return r;
  s->retire();                                    // queued work still runs, as on a real device
  return anydev_emu::sticky_error(s->context());  // destroyed, but a broken context says so
}

CUresult cuStreamSynchronize(CUstream stream) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuStreamSynchronize", &s);
      r != CUDA_SUCCESS) {
    return r;
  }
  return s->synchronize();
}

CUresult cuStreamGetCtx(CUstream stream, CUcontext* context) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuStreamGetCtx", &s);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *context = anydev_emu::to_handle(s->context());
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuEventCreate", &c); r != CUDA_SUCCESS) {
    return r;
  }
  constexpr unsigned int kKnown = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING;
  if (event == nullptr || (flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  *event = anydev_emu::register_object(std::make_shared<anydev_emu::Event>(c));
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent event) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  EventRef e;
  if (const CUresult r = anydev_emu::unregister(event, &e); r != CUDA_SUCCESS) return r;
  return anydev_emu::sticky_error(e->context);  // a queued record keeps it alive
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  EventRef e;
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_event(event, "cuEventRecord", &e); r != CUDA_SUCCESS) {
    return r;
  }
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuEventRecord", &s);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (e->context != s->context()) {
    anydev_emu::report_misuse("cuEventRecord: event of device " +
                              std::to_string(e->context->device) + " on a stream of device " +
                              std::to_string(s->context()->device));
    return CUDA_ERROR_INVALID_HANDLE;
  }
  std::uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    generation = ++e->recorded;
    e->pending.insert(generation);
  }
  s->enqueue("cuEventRecord", [e, generation] {
    std::lock_guard<std::mutex> lock(e->mutex);
    e->pending.erase(generation);
    e->done.notify_all();
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

CUresult cuEventQuery(CUevent event) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  EventRef e;
  if (const CUresult r = anydev_emu::lookup_event(event, "cuEventQuery", &e); r != CUDA_SUCCESS) {
    return r;
  }
  std::lock_guard<std::mutex> lock(e->mutex);
  return e->is_done(e->recorded) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuEventSynchronize(CUevent event) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  EventRef e;
  if (const CUresult r = anydev_emu::lookup_event(event, "cuEventSynchronize", &e);
      r != CUDA_SUCCESS) {
    return r;
  }
  std::unique_lock<std::mutex> lock(e->mutex);
  const std::uint64_t target = e->recorded;
  e->done.wait(lock, [&] { return e->is_done(target); });
  return CUDA_SUCCESS;
}

CUresult cuLaunchHostFunc(CUstream stream, CUhostFn fn, void* user_data) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuLaunchHostFunc", &s);
      r != CUDA_SUCCESS) {
    return r;
  }
  s->enqueue("cuLaunchHostFunc", [fn, user_data] {
    fn(user_data);
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  EventRef e;
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_event(event, "cuStreamWaitEvent", &e);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuStreamWaitEvent", &s);
      r != CUDA_SUCCESS) {
    return r;
  }
  std::uint64_t target = 0;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    target = e->recorded;  // the work captured by the latest record, as now
  }
  if (target == 0) return CUDA_SUCCESS;
  s->enqueue("cuStreamWaitEvent", [e, target] {
    std::unique_lock<std::mutex> lock(e->mutex);
    e->done.wait(lock, [&] { return e->is_done(target); });
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

}  // extern "C"
