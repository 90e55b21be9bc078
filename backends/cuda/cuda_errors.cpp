// SPDX-License-Identifier: Apache-2.0
#include "cuda_errors.h"

#include <unistd.h>

#include "cuda_state.h"

namespace anydev::cuda {

anydev_status_t status_for(CUresult result) {
  switch (result) {
    case CUDA_SUCCESS:
      return ANYDEV_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY:
      return ANYDEV_ERROR_OUT_OF_MEMORY;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_DEVICE:
      return ANYDEV_ERROR_INVALID_ARGUMENT;
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
      return ANYDEV_ERROR_UNSUPPORTED;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_STUB_LIBRARY:
      return ANYDEV_ERROR_BACKEND_UNAVAILABLE;
    default:
      return ANYDEV_ERROR_DEVICE;
  }
}

bool is_sticky_fault(CUresult result) {
  switch (result) {
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_EXTERNAL_DEVICE:
      return true;
    default:
      return false;
  }
}

std::string describe_result(CUresult result) {
  const CudaDriver& driver = backend_state().driver;
  const char* name = nullptr;
  const char* text = nullptr;
  if (driver.GetErrorName == nullptr || driver.GetErrorName(result, &name) != CUDA_SUCCESS ||
      name == nullptr) {
    return "CUresult " + std::to_string(static_cast<int>(result));
  }
  if (driver.GetErrorString == nullptr || driver.GetErrorString(result, &text) != CUDA_SUCCESS ||
      text == nullptr) {
    return name;
  }
  return std::string(name) + " (" + text + ")";
}

anydev_status_t report_failure(anydev_status_t status, CUresult result, const char* call,
                               const std::string& operation) {
  std::string message =
      std::string(call) + " failed: " + describe_result(result) + " in " + operation;
  const pid_t initialized_by = backend_state().initialized_pid;
  if (initialized_by != 0 && getpid() != initialized_by) {
    status = ANYDEV_ERROR_BACKEND_UNAVAILABLE;
    message += cat(": this process is a child of fork(); the CUDA driver, initialized by process ",
                   initialized_by, " before the fork, cannot be used in it");
  } else if (is_sticky_fault(result)) {
    status = ANYDEV_ERROR_DEVICE;
    message +=
        ": the CUDA context is broken by an earlier asynchronous fault on the device; every "
        "later call on it fails the same way, so cuda cannot be used again in this process";
  }
  return report_error(status, message);
}

anydev_status_t report_error(anydev_status_t status, const std::string& message) {
  return set_error(status, message);
}

}  // namespace anydev::cuda
