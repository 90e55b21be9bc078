// SPDX-License-Identifier: Apache-2.0
// opencl exhaustion codes: every code by which OpenCL says memory or
// resources ran out is out_of_memory, in allocations, in any other call
// (a fill at the memory limit) and in the asynchronous failures a
// synchronize reports; the message names the call and the operation's sizes.
// Links the backend's opencl_errors.cpp directly (its services are the backend kit's, header-only).
#include <gtest/gtest.h>

#include <string>

#include "opencl_errors.h"
#include "opencl_services.h"

namespace {

thread_local std::string t_message;

anydev_status_t capture(anydev_status_t status, const char* message) {
  t_message = message;
  return status;
}

const anydev_core_services_t kServices = {sizeof(anydev_core_services_t), capture, nullptr,
                                          nullptr};

constexpr cl_int kExhaustion[] = {CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES,
                                  CL_OUT_OF_HOST_MEMORY};

TEST(OpenclErrors, ExhaustionIsOutOfMemoryInEveryKindOfCall) {
  for (cl_int code : kExhaustion) {
    SCOPED_TRACE(anydev::opencl::cl_error_name(code));
    EXPECT_TRUE(anydev::opencl::is_exhaustion(code));
    EXPECT_EQ(anydev::opencl::allocation_status(code), ANYDEV_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(anydev::opencl::call_status(code), ANYDEV_ERROR_OUT_OF_MEMORY);
  }
  EXPECT_EQ(anydev::opencl::allocation_status(CL_INVALID_BUFFER_SIZE), ANYDEV_ERROR_OUT_OF_MEMORY);
}

TEST(OpenclErrors, OtherCodesStayDeviceErrors) {
  for (cl_int code : {CL_INVALID_VALUE, CL_INVALID_MEM_OBJECT, CL_MAP_FAILURE, -9999}) {
    EXPECT_FALSE(anydev::opencl::is_exhaustion(code));
    EXPECT_EQ(anydev::opencl::call_status(code), ANYDEV_ERROR_DEVICE);
  }
}

TEST(OpenclErrors, AFillAtTheMemoryLimitNamesTheCallAndTheSizes) {
  anydev::opencl::set_core_services(&kServices);
  const anydev_status_t status = anydev::opencl::report_cl(
      "clEnqueueFillBuffer", CL_MEM_OBJECT_ALLOCATION_FAILURE,
      "fill of 67108864 bytes on OpenCL device 0 (PoCL) with a 4-byte pattern at offset 0");
  EXPECT_EQ(status, ANYDEV_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(t_message,
            "clEnqueueFillBuffer failed: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4) in fill of "
            "67108864 bytes on OpenCL device 0 (PoCL) with a 4-byte pattern at offset 0");
  anydev::opencl::set_core_services(nullptr);
}

}  // namespace
