// SPDX-License-Identifier: Apache-2.0
// hipGetErrorName and hipGetErrorString: a `const char*` for any code, never
// a status ("hipErrorUnknown" / "unknown error" for codes not listed).
#include <hip/hip_runtime_api.h>

#include "hip_face.h"

namespace hip = anydev_emu::hip;

namespace {

struct ErrorText {
  hipError_t code;
  const char* name;
  const char* text;
};

#define ANYDEV_HIP_ERROR(code, text) \
  { code, #code, text }

constexpr ErrorText kErrors[] = {
    ANYDEV_HIP_ERROR(hipSuccess, "no error"),
    ANYDEV_HIP_ERROR(hipErrorInvalidValue, "invalid argument"),
    ANYDEV_HIP_ERROR(hipErrorOutOfMemory, "out of memory"),
    ANYDEV_HIP_ERROR(hipErrorNotInitialized, "initialization error"),
    ANYDEV_HIP_ERROR(hipErrorInvalidDevicePointer, "invalid device pointer"),
    ANYDEV_HIP_ERROR(hipErrorInvalidMemcpyDirection, "invalid copy direction for memcpy"),
    ANYDEV_HIP_ERROR(hipErrorNoDevice, "no ROCm-capable device is detected"),
    ANYDEV_HIP_ERROR(hipErrorInvalidDevice, "invalid device ordinal"),
    ANYDEV_HIP_ERROR(hipErrorInvalidContext, "invalid device context"),
    ANYDEV_HIP_ERROR(hipErrorInvalidHandle, "invalid resource handle"),
    ANYDEV_HIP_ERROR(hipErrorNotReady, "device not ready"),
    ANYDEV_HIP_ERROR(hipErrorIllegalAddress, "an illegal memory access was encountered"),
    ANYDEV_HIP_ERROR(hipErrorPeerAccessAlreadyEnabled, "peer access is already enabled"),
    ANYDEV_HIP_ERROR(hipErrorNotSupported, "operation not supported"),
    ANYDEV_HIP_ERROR(hipErrorUnknown, "unknown error"),
};

#undef ANYDEV_HIP_ERROR

const ErrorText& find_error(hipError_t code) {
  for (const ErrorText& e : kErrors) {
    if (e.code == code) return e;
  }
  return kErrors[sizeof(kErrors) / sizeof(kErrors[0]) - 1];  // hipErrorUnknown
}

}  // namespace

extern "C" {

const char* hipGetErrorName(hipError_t error) {
  hip::count(hip::Call::hipGetErrorName);
  return find_error(error).name;
}

const char* hipGetErrorString(hipError_t error) {
  hip::count(hip::Call::hipGetErrorString);
  return find_error(error).text;
}

}  // extern "C"
