#include "cuda_state.h"

#include "cuda_errors.h"

namespace anydev::cuda {

BackendState& State() {
  // Never destroyed: entries may run on other threads during process exit.
  static BackendState* state = new BackendState;
  return *state;
}

const CudaDriver& Driver() { return State().driver; }

anydev_status_t CheckDevice(int device, const char* operation) {
  const std::size_t count = State().devices.size();
  if (device < 0 || static_cast<std::size_t>(device) >= count) {
    return ReportError(ANYDEV_ERROR_OUT_OF_RANGE,
                       cat(operation, ": cuda device ", device, " does not exist (", count,
                           " device", count == 1 ? "" : "s", ")"));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t PrimaryContext(int device, CUcontext* out) {
  if (const anydev_status_t s = CheckDevice(device, "primary context"); s != ANYDEV_SUCCESS) {
    return s;
  }
  DeviceState& d = *State().devices[static_cast<std::size_t>(device)];
  std::call_once(d.context_once, [&d] {
    const CUresult r = Driver().DevicePrimaryCtxRetain(&d.context, d.device);
    if (r != CUDA_SUCCESS) {
      d.context = nullptr;
      d.context_status = StatusFor(r);
      if (d.context_status == ANYDEV_ERROR_INVALID_ARGUMENT) d.context_status = ANYDEV_ERROR_DEVICE;
      d.context_error = cat("cuDevicePrimaryCtxRetain failed: ", DescribeResult(r),
                            " for cuda device ", d.index, " (", d.name, ")");
    }
  });
  if (d.context == nullptr) return ReportError(d.context_status, d.context_error);
  *out = d.context;
  return ANYDEV_SUCCESS;
}

ScopedContext::~ScopedContext() {
  if (pushed_) {
    CUcontext popped = nullptr;
    Driver().CtxPopCurrent(&popped);
  }
}

anydev_status_t ScopedContext::Enter(int device, const char* operation) {
  CUcontext wanted = nullptr;
  if (const anydev_status_t s = PrimaryContext(device, &wanted); s != ANYDEV_SUCCESS) return s;
  CUcontext current = nullptr;
  CUresult r = Driver().CtxGetCurrent(&current);
  const char* call = "cuCtxGetCurrent";
  if (r == CUDA_SUCCESS) {
    if (current == wanted) return ANYDEV_SUCCESS;
    r = Driver().CtxPushCurrent(wanted);
    call = "cuCtxPushCurrent";
  }
  if (r != CUDA_SUCCESS) {
    return ReportFailure(
        r, call, cat(operation, " on cuda device ", device, " (making its context current)"));
  }
  pushed_ = true;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cuda
