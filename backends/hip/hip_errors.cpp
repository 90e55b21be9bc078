// SPDX-License-Identifier: Apache-2.0
// hipError_t -> anydev status and message. Stateless apart from reading the
// runtime table; thread-safe.
#include <cstring>

#include "hip_api.h"

namespace anydev::hip {

anydev_status_t HipApi::status_for(hipError_t result) {
  return gpu::map_result(
      result,
      {{ANYDEV_SUCCESS, {hipSuccess}},
       {ANYDEV_ERROR_INVALID_ARGUMENT,
        {hipErrorInvalidValue, hipErrorInvalidHandle, hipErrorInvalidDevice,
         hipErrorInvalidDevicePointer}},
       {ANYDEV_ERROR_BACKEND_UNAVAILABLE,
        {hipErrorNoDevice, hipErrorNotInitialized, hipErrorDeinitialized,
         hipErrorInsufficientDriver}},
       {ANYDEV_ERROR_OUT_OF_MEMORY, {hipErrorOutOfMemory}},
       {ANYDEV_ERROR_UNSUPPORTED, {hipErrorNotSupported, hipErrorPeerAccessUnsupported}}},
      ANYDEV_ERROR_DEVICE);
}

// The asynchronous faults after which HIP, like CUDA, fails every later call
// on the device the same way until the process exits.
bool HipApi::is_sticky_fault(hipError_t result) {
  return gpu::is_one_of(
      result, {hipErrorIllegalAddress, hipErrorLaunchFailure, hipErrorLaunchTimeOut, hipErrorAssert,
               hipErrorContextIsDestroyed});
}

// "hipErrorInvalidValue (invalid argument)", from hipGetErrorName and
// hipGetErrorString (each returns the text itself, not a status); "hipError_t
// 999" when the runtime gives no name.
std::string HipApi::describe(hipError_t result) {
  const HipRuntime& runtime = gpu::driver<HipApi>();
  const char* name = runtime.GetErrorName != nullptr ? runtime.GetErrorName(result) : nullptr;
  if (name == nullptr || name[0] == '\0') {
    return kit::cat("hipError_t ", static_cast<int>(result));
  }
  const char* text = runtime.GetErrorString != nullptr ? runtime.GetErrorString(result) : nullptr;
  // 5.2's hipGetErrorString returns the name again.
  if (text == nullptr || text[0] == '\0' || std::strcmp(text, name) == 0) return name;
  return kit::cat(name, " (", text, ")");
}

}  // namespace anydev::hip
