// SPDX-License-Identifier: Apache-2.0
// The CUDA current-context rule and what depends on contexts: primary
// contexts, ScopedContext, peer copies' sides, peer access, wrapped streams
// and the native context.
#include <string>

#include "cuda_api.h"

namespace anydev::cuda {
namespace {

const void* raw(const void* p) { return p; }

}  // namespace

anydev_status_t primary_context(int device, CUcontext* out) {
  if (const anydev_status_t s = gpu::check_device<CudaApi>(device, "primary context");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  gpu::DeviceState<CudaApi>& d = gpu::device_state<CudaApi>(device);
  CudaDevice& x = d.extra;
  std::call_once(x.context_once, [&d, &x] {
    const CUresult r = driver().DevicePrimaryCtxRetain(&x.context, d.device);
    if (r != CUDA_SUCCESS) {
      x.context = nullptr;
      x.context_status = CudaApi::status_for(r);
      if (x.context_status == ANYDEV_ERROR_INVALID_ARGUMENT) x.context_status = ANYDEV_ERROR_DEVICE;
      try {  // nothing may leave call_once by an exception (GCC bug 66146)
        x.context_error = cat("cuDevicePrimaryCtxRetain failed: ", CudaApi::describe(r),
                              " for cuda device ", d.index, " (", d.name, ")");
      } catch (...) {
        x.context_error.clear();  // out of memory: the status stays
      }
    }
  });
  if (x.context == nullptr) return report_error(x.context_status, x.context_error);
  *out = x.context;
  return ANYDEV_SUCCESS;
}

void ContextRule::leave(bool pushed) noexcept {
  if (pushed) {
    CUcontext popped = nullptr;
    driver().CtxPopCurrent(&popped);
  }
}

anydev_status_t ContextRule::enter(int device, const char* operation, bool* pushed) {
  CUcontext wanted = nullptr;
  if (const anydev_status_t s = primary_context(device, &wanted); s != ANYDEV_SUCCESS) return s;
  CUcontext current = nullptr;
  CUresult r = driver().CtxGetCurrent(&current);
  const char* call = "cuCtxGetCurrent";
  if (r == CUDA_SUCCESS) {
    if (current == wanted) return ANYDEV_SUCCESS;
    r = driver().CtxPushCurrent(wanted);
    call = "cuCtxPushCurrent";
  }
  if (r != CUDA_SUCCESS) {
    return report_failure(
        r, call, cat(operation, " on cuda device ", device, " (making its context current)"));
  }
  *pushed = true;
  return ANYDEV_SUCCESS;
}

// cuMemcpyPeerAsync names each side by its context.
anydev_status_t CudaApi::peer(int device, CUcontext* out) { return primary_context(device, out); }

anydev_status_t CudaApi::enable_peer(int device, int peer, const std::string& what) {
  CUcontext peer_context = nullptr;
  if (const anydev_status_t s = primary_context(peer, &peer_context); s != ANYDEV_SUCCESS) return s;
  ScopedContext scope;
  if (const anydev_status_t s = scope.enter(device, "enable_peer_access"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const CUresult r = driver().CtxEnablePeerAccess(peer_context, 0);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
    return report_failure(r, "cuCtxEnablePeerAccess", what);
  }
  return ANYDEV_SUCCESS;
}

// A stream of another context cannot reach the primary context's memory.
anydev_status_t CudaApi::check_wrapped_stream(int device, CUstream native) {
  const CudaDriver& drv = driver();
  if (drv.StreamGetCtx == nullptr) return ANYDEV_SUCCESS;
  CUcontext owner = nullptr;
  const CUresult r = drv.StreamGetCtx(native, &owner);
  if (r != CUDA_SUCCESS) {
    return report_failure(
        ANYDEV_ERROR_INVALID_ARGUMENT, r, "cuStreamGetCtx",
        cat("stream_wrap_native of CUstream ", raw(native), " on cuda device ", device));
  }
  CUcontext primary = nullptr;
  primary_context(device, &primary);
  if (owner != primary) {
    return report_error(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat("stream_wrap_native: CUstream ", raw(native), " belongs to CUcontext ", raw(owner),
            ", not to the primary context ", raw(primary), " of cuda device ", device));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t CudaApi::native_context(int device, void** out) {
  CUcontext context = nullptr;
  if (const anydev_status_t s = primary_context(device, &context); s != ANYDEV_SUCCESS) return s;
  *out = context;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cuda
