// SPDX-License-Identifier: Apache-2.0
// The opencl backend plugin opened directly, with a minimal stand-in for the
// core's services, so that tests can call its table entries (and see exactly
// what the backend does, without the core's pools in between), plus the few
// OpenCL calls the tests make themselves (resolved from libOpenCL.so.1).
//
// The plugin and the OpenCL library are opened once per process and never
// closed. Thread-safe after open_plugin(): the last error is per thread.
#ifndef ANYDEV_TESTS_OPENCL_PLUGIN_FIXTURE_H_
#define ANYDEV_TESTS_OPENCL_PLUGIN_FIXTURE_H_

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <string>

#include "anydev/backend.h"

namespace anydev_test {

// The OpenCL entry points the tests call themselves.
struct ClCalls {
  decltype(&clGetDeviceInfo) get_device_info = nullptr;
  decltype(&clCreateCommandQueue) create_command_queue = nullptr;
  decltype(&clReleaseCommandQueue) release_command_queue = nullptr;
  decltype(&clCreateUserEvent) create_user_event = nullptr;
  decltype(&clSetUserEventStatus) set_user_event_status = nullptr;
  decltype(&clReleaseEvent) release_event = nullptr;
  decltype(&clEnqueueBarrierWithWaitList) enqueue_barrier = nullptr;
  decltype(&clFlush) flush = nullptr;
};

struct Plugin {
  const anydev_backend_table_t* table = nullptr;
  anydev_status_t init_status = ANYDEV_ERROR_BACKEND_UNAVAILABLE;
  std::string init_message;  // why initialize failed, when it did
  int devices = 0;
  ClCalls cl;
};

// Opens the plugin and calls initialize on first use; later calls return the
// same object. Fails the calling test (fatally) only when the plugin file
// cannot be opened at all.
const Plugin& open_plugin();

// A reference to the start of device buffer `handle` of device 0.
inline anydev_bk_memory_ref_t device_ref(void* handle) {
  return anydev_bk_memory_ref_t{handle, 0, ANYDEV_BK_MEMORY_DEVICE, 0};
}

// The calling thread's last error message set by the backend.
std::string last_error();

}  // namespace anydev_test

// Opens the plugin and skips the test when no OpenCL device is usable.
#define ANYDEV_REQUIRE_OPENCL(plugin)                                   \
  const ::anydev_test::Plugin& plugin = ::anydev_test::open_plugin();   \
  ASSERT_NE(plugin.table, nullptr) << plugin.init_message;              \
  if (plugin.init_status != ANYDEV_SUCCESS || plugin.devices == 0) {    \
    GTEST_SKIP() << "no usable OpenCL device: " << plugin.init_message; \
  }

#endif  // ANYDEV_TESTS_OPENCL_PLUGIN_FIXTURE_H_
