#include "cuda_errors.h"

#include "cuda_state.h"

namespace anydev::cuda {

anydev_status_t StatusFor(CUresult result) {
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

std::string DescribeResult(CUresult result) {
  const CudaDriver& driver = State().driver;
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

anydev_status_t ReportFailure(anydev_status_t status, CUresult result, const char* call,
                              const std::string& operation) {
  return ReportError(status,
                     std::string(call) + " failed: " + DescribeResult(result) + " in " + operation);
}

anydev_status_t ReportError(anydev_status_t status, const std::string& message) {
  const anydev_core_services_t* core = State().core;
  if (core != nullptr && core->set_error != nullptr) {
    return core->set_error(status, message.c_str());
  }
  return status;
}

}  // namespace anydev::cuda
