// SPDX-License-Identifier: Apache-2.0
#include "cuda_state.h"

#include "cuda_errors.h"

namespace anydev::cuda {

BackendState& backend_state() {
  // Never destroyed: entries may run on other threads during process exit.
  static BackendState* state = new BackendState;
  return *state;
}

const CudaDriver& driver() { return backend_state().driver; }

anydev_status_t check_device(int device, const char* operation) {
  const std::size_t count = backend_state().devices.size();
  if (device < 0 || static_cast<std::size_t>(device) >= count) {
    return report_error(ANYDEV_ERROR_OUT_OF_RANGE,
                        cat(operation, ": cuda device ", device, " does not exist (", count,
                            " device", count == 1 ? "" : "s", ")"));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t primary_context(int device, CUcontext* out) {
  if (const anydev_status_t s = check_device(device, "primary context"); s != ANYDEV_SUCCESS) {
    return s;
  }
  DeviceState& d = *backend_state().devices[static_cast<std::size_t>(device)];
  std::call_once(d.context_once, [&d] {
    const CUresult r = driver().DevicePrimaryCtxRetain(&d.context, d.device);
    if (r != CUDA_SUCCESS) {
      d.context = nullptr;
      d.context_status = status_for(r);
      if (d.context_status == ANYDEV_ERROR_INVALID_ARGUMENT) d.context_status = ANYDEV_ERROR_DEVICE;
      try {  // nothing may leave call_once by an exception (GCC bug 66146)
        d.context_error = cat("cuDevicePrimaryCtxRetain failed: ", describe_result(r),
                              " for cuda device ", d.index, " (", d.name, ")");
      } catch (...) {
        d.context_error.clear();  // out of memory: the status stays
      }
    }
  });
  if (d.context == nullptr) return report_error(d.context_status, d.context_error);
  *out = d.context;
  return ANYDEV_SUCCESS;
}

ScopedContext::~ScopedContext() {
  if (pushed_) {
    CUcontext popped = nullptr;
    driver().CtxPopCurrent(&popped);
  }
}

anydev_status_t ScopedContext::enter(int device, const char* operation) {
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
  pushed_ = true;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cuda
