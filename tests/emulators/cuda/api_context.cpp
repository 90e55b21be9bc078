// SPDX-License-Identifier: Apache-2.0
// Primary contexts and the per-thread current context; peer access.
#include <cuda.h>

#include <mutex>
#include <string>

#include "core_config.h"
#include "emu_state.h"

using anydev_emu::as_context;
using anydev_emu::Context;

namespace {

CUresult context_of(CUcontext handle, const char* api, Context** out) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Context* c = as_context(handle);
  if (c == nullptr) {
    anydev_emu::core::report_misuse(std::string(api) + ": not a context of this driver");
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (const CUresult r = anydev_emu::check_retained(c, api); r != CUDA_SUCCESS) return r;
  *out = c;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  anydev_emu::Device* d = nullptr;
  if (const CUresult r = anydev_emu::get_device(device, &d); r != CUDA_SUCCESS) return r;
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(d->primary.mutex);
  ++d->primary.retained;
  *context = anydev_emu::to_handle(&d->primary);
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice device) {
  anydev_emu::Device* d = nullptr;
  if (const CUresult r = anydev_emu::get_device(device, &d); r != CUDA_SUCCESS) return r;
  std::lock_guard<std::mutex> lock(d->primary.mutex);
  if (d->primary.retained == 0) {
    anydev_emu::core::report_misuse("cuDevicePrimaryCtxRelease: device " + std::to_string(device) +
                                    " has no retained primary context");
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  // The last release resets the context, which clears a sticky fault.
  if (--d->primary.retained == 0) d->primary.sticky = anydev_emu::core::Status::success;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext* context) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *context = anydev_emu::to_handle(anydev_emu::current_context());
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext context) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (context != nullptr) {
    if (const CUresult r = context_of(context, "cuCtxSetCurrent", &c); r != CUDA_SUCCESS) return r;
  }
  anydev_emu::set_current(c);
  return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent(CUcontext context) {
  Context* c = nullptr;
  if (const CUresult r = context_of(context, "cuCtxPushCurrent", &c); r != CUDA_SUCCESS) return r;
  return anydev_emu::push_current(c);
}

CUresult cuCtxPopCurrent(CUcontext* context) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Context* top = anydev_emu::pop_current();
  if (top == nullptr) {
    anydev_emu::core::report_misuse("cuCtxPopCurrent: no context is current on this thread");
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (context != nullptr) *context = anydev_emu::to_handle(top);
  return CUDA_SUCCESS;
}

CUresult cuCtxEnablePeerAccess(CUcontext peer_context, unsigned int flags) {
  Context* current = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuCtxEnablePeerAccess", &current);
      r != CUDA_SUCCESS) {
    return r;
  }
  Context* peer = nullptr;
  if (const CUresult r = context_of(peer_context, "cuCtxEnablePeerAccess", &peer);
      r != CUDA_SUCCESS) {
    return r;
  }
  return anydev_emu::cu(anydev_emu::core::enable_peer(current, peer, flags));
}

}  // extern "C"
