// SPDX-License-Identifier: Apache-2.0
// CUresult -> anydev status and message. Stateless apart from reading the
// backend state; thread-safe.
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_ERRORS_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_ERRORS_H_

#include <cuda.h>

#include <string>

#include "anydev/backend.h"
#include "cuda_services.h"
#include "kit_cat.h"

namespace anydev::cuda {

// The status an operation failing with `result` reports: OUT_OF_MEMORY,
// INVALID_ARGUMENT, UNSUPPORTED, ... and DEVICE for everything else.
anydev_status_t status_for(CUresult result);

// Whether `result` is one of the errors cuda.h documents as sticky ("leaves
// the process in an inconsistent state"): an
// asynchronous fault that leaves the context unusable, so that every later
// call on it returns the same error until the process exits.
bool is_sticky_fault(CUresult result);

// "CUDA_ERROR_INVALID_VALUE (invalid argument)", from cuGetErrorName and
// cuGetErrorString; "CUresult 999" when the driver does not know the code.
std::string describe_result(CUresult result);

// Records "<call> failed: <describe_result> in <operation>" as the calling
// thread's error with `status` and returns `status`. A sticky fault is
// reported as DEVICE and says that the context is broken for good; any error
// in a child of fork() says that the driver cannot be used there.
anydev_status_t report_failure(anydev_status_t status, CUresult result, const char* call,
                               const std::string& operation);

// report_failure with status_for(result).
inline anydev_status_t report_failure(CUresult result, const char* call,
                                      const std::string& operation) {
  return report_failure(status_for(result), result, call, operation);
}

// Records a message that no CUresult goes with.
anydev_status_t report_error(anydev_status_t status, const std::string& message);

// Concatenates its arguments with operator<< (error paths only).
using kit::cat;

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_ERRORS_H_
