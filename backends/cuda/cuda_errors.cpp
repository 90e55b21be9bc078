// SPDX-License-Identifier: Apache-2.0
// CUresult -> anydev status and message. Stateless apart from reading the
// driver table; thread-safe.
#include "cuda_api.h"

namespace anydev::cuda {

anydev_status_t CudaApi::status_for(CUresult result) {
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

// The errors cuda.h documents as sticky ("leaves the process in an
// inconsistent state"): an asynchronous fault that leaves the context
// unusable, so that every later call on it returns the same error.
bool CudaApi::is_sticky_fault(CUresult result) {
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

// "CUDA_ERROR_INVALID_VALUE (invalid argument)", from cuGetErrorName and
// cuGetErrorString; "CUresult 999" when the driver does not know the code.
std::string CudaApi::describe(CUresult result) {
  const CudaDriver& driver = cuda::driver();
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

}  // namespace anydev::cuda
