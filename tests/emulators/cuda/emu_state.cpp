// SPDX-License-Identifier: Apache-2.0
#include "emu_state.h"

#include <mutex>
#include <string>

#include "core_config.h"
#include "emu_config.h"

namespace anydev_emu {
namespace {

// The calling thread's context stack. Trivially destructible on purpose: the
// emulator is loaded with dlopen, and a thread_local with a destructor there
// races (for ThreadSanitizer) with glibc reusing the exited thread's TLS.
constexpr int kMaxContextDepth = 256;
thread_local Context* t_stack[kMaxContextDepth];
thread_local int t_depth = 0;

bool is_default_stream(CUstream handle) {
  return handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD;
}

// CUDA_ERROR_INVALID_CONTEXT when ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT wants
// more current on the calling thread than there is for a call on a handle of
// `owner` (emu_config.h); a rule of the driver, so not reported as misuse.
CUresult check_stream_context(const Context* owner) {
  const int rule = cuda_config().stream_context;
  if (rule == 0) return CUDA_SUCCESS;
  const Context* current = current_context();
  if (current == nullptr || (rule == 2 && current != owner)) return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

}  // namespace

CUresult cu(core::Status status) { return core::shared_code<CUresult>(status); }

CUresult check_initialized() { return cu(core::check_initialized()); }

CUresult get_device(CUdevice ordinal, Device** out) { return cu(core::get_device(ordinal, out)); }

Context* as_context(CUcontext handle) { return core::as_context(handle); }

CUcontext to_handle(Context* context) { return static_cast<CUcontext>(core::to_handle(context)); }

CUresult check_retained(Context* context, const char* api) {
  std::lock_guard<std::mutex> lock(context->mutex);
  if (context->retained > 0) return CUDA_SUCCESS;
  core::report_misuse(std::string(api) + ": the primary context of device " +
                      std::to_string(context->device) + " is not retained");
  return CUDA_ERROR_INVALID_CONTEXT;
}

Context* current_context() { return t_depth == 0 ? nullptr : t_stack[t_depth - 1]; }

CUresult require_current(const char* api, Context** out) {
  if (const CUresult r = check_initialized(); r != CUDA_SUCCESS) return r;
  Context* current = current_context();
  if (current == nullptr) {
    core::report_misuse(std::string(api) + ": no context is current on this thread");
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (const CUresult r = check_retained(current, api); r != CUDA_SUCCESS) return r;
  if (const CUresult r = cu(core::sticky_error(current)); r != CUDA_SUCCESS) return r;
  *out = current;
  return CUDA_SUCCESS;
}

CUresult push_current(Context* context) {
  if (t_depth == kMaxContextDepth) {
    core::report_misuse("cuCtxPushCurrent: more than " + std::to_string(kMaxContextDepth) +
                        " contexts pushed on one thread (a missing cuCtxPopCurrent?)");
    return CUDA_ERROR_INVALID_VALUE;
  }
  t_stack[t_depth++] = context;
  return CUDA_SUCCESS;
}

Context* pop_current() { return t_depth == 0 ? nullptr : t_stack[--t_depth]; }

void set_current(Context* context) {
  if (t_depth > 0) --t_depth;
  if (context != nullptr) t_stack[t_depth++] = context;
}

CUresult lookup_stream(CUstream handle, const char* api, StreamRef* out) {
  if (const CUresult r = check_initialized(); r != CUDA_SUCCESS) return r;
  if (is_default_stream(handle)) {
    Context* current = nullptr;
    if (const CUresult r = require_current(api, &current); r != CUDA_SUCCESS) return r;
    *out = core::default_stream(current);
    return CUDA_SUCCESS;
  }
  StreamRef stream;
  if (const CUresult r = cu(core::lookup_stream(handle, api, &stream)); r != CUDA_SUCCESS) return r;
  // cuStreamGetCtx is how a caller learns the stream's context.
  if (std::string(api) != "cuStreamGetCtx") {
    if (const CUresult r = check_stream_context(stream->context()); r != CUDA_SUCCESS) return r;
  }
  *out = std::move(stream);
  return CUDA_SUCCESS;
}

CUresult lookup_event(CUevent handle, const char* api, EventRef* out) {
  if (const CUresult r = check_initialized(); r != CUDA_SUCCESS) return r;
  EventRef event;
  if (const CUresult r = cu(core::lookup_event(handle, api, &event)); r != CUDA_SUCCESS) return r;
  // A stream may wait for an event of another context: its stream decides.
  if (std::string(api) != "cuStreamWaitEvent") {
    if (const CUresult r = check_stream_context(event->context); r != CUDA_SUCCESS) return r;
  }
  *out = std::move(event);
  return CUDA_SUCCESS;
}

}  // namespace anydev_emu
