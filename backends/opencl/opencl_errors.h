// SPDX-License-Identifier: Apache-2.0
// Turning OpenCL result codes into anydev statuses and messages.
//
// Every failing cl_int becomes a status plus a message that names the
// OpenCL call, the error's name and code, and the anydev operation, e.g.
// "clEnqueueCopyBuffer failed: CL_INVALID_VALUE (-30) in copy of 4096 bytes
// ...". Stateless and thread-safe.
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_ERRORS_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_ERRORS_H_

#include <string>

#include "opencl_symbols.h"

namespace anydev::opencl {

// "CL_INVALID_VALUE"; "CL_UNKNOWN_ERROR" for codes the headers do not name.
const char* cl_error_name(cl_int code);

// "clFinish failed: CL_OUT_OF_RESOURCES (-5)".
std::string cl_failure(const char* call, cl_int code);

// Whether the code is one by which OpenCL says memory or resources ran out:
// CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY.
bool is_exhaustion(cl_int code);

// The status for a failed allocation: OUT_OF_MEMORY for is_exhaustion codes
// and CL_INVALID_BUFFER_SIZE (the size is too large), DEVICE otherwise.
anydev_status_t allocation_status(cl_int code);

// The status for any other failed call (copies, fills, synchronize, and the
// asynchronous failures a synchronize reports): OUT_OF_MEMORY for the
// is_exhaustion codes (a fill at the memory limit fails with
// CL_MEM_OBJECT_ALLOCATION_FAILURE or CL_OUT_OF_RESOURCES), DEVICE otherwise.
anydev_status_t call_status(cl_int code);

// Sets the core's error to `cl_failure(call, code) + " in " + operation` with
// call_status(code) and returns that status.
anydev_status_t report_cl(const char* call, cl_int code, const std::string& operation);

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_ERRORS_H_
