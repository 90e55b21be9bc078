// SPDX-License-Identifier: Apache-2.0
// CUresult -> anydev status and message. Stateless apart from reading the
// driver table; thread-safe.
#include "cuda_api.h"

namespace anydev::cuda {

anydev_status_t CudaApi::status_for(CUresult result) {
  return gpu::map_result(
      result,
      {{ANYDEV_SUCCESS, {CUDA_SUCCESS}},
       {ANYDEV_ERROR_OUT_OF_MEMORY, {CUDA_ERROR_OUT_OF_MEMORY}},
       {ANYDEV_ERROR_INVALID_ARGUMENT,
        {CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_DEVICE}},
       {ANYDEV_ERROR_UNSUPPORTED, {CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_PEER_ACCESS_UNSUPPORTED}},
       {ANYDEV_ERROR_BACKEND_UNAVAILABLE,
        {CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_DEINITIALIZED,
         CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
         CUDA_ERROR_STUB_LIBRARY}}},
      ANYDEV_ERROR_DEVICE);
}

// The errors cuda.h documents as sticky ("leaves the process in an
// inconsistent state"): an asynchronous fault that leaves the context
// unusable, so that every later call on it returns the same error.
bool CudaApi::is_sticky_fault(CUresult result) {
  return gpu::is_one_of(
      result, {CUDA_ERROR_CONTAINED, CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_TIMEOUT,
               CUDA_ERROR_HARDWARE_STACK_ERROR, CUDA_ERROR_ILLEGAL_INSTRUCTION,
               CUDA_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_INVALID_ADDRESS_SPACE,
               CUDA_ERROR_INVALID_PC, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_EXTERNAL_DEVICE});
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
