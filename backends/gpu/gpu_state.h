// SPDX-License-Identifier: Apache-2.0
// What a GPU backend knows once initialize has run (the core's services, the
// driver's symbol table, one DeviceState per device), and how it reports
// errors: the parts of backend state that CUDA and HIP share (gpu_api.h).
//
// Ownership and thread safety: BackendState<Api> is created by initialize
// (called once, under the core's registry lock) and never destroyed, so every
// entry may read it from any thread. What changes afterwards lives in
// Api::device_extra, which guards itself (CUDA retains a primary context
// behind a std::once_flag). The services are the backend kit's (atomic).
#ifndef ANYDEV_BACKENDS_GPU_GPU_STATE_H_
#define ANYDEV_BACKENDS_GPU_GPU_STATE_H_

#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "anydev/backend.h"
#include "anydev/kit/cat.h"
#include "anydev/kit/services.h"

namespace anydev::gpu {

using kit::cat;

template <class Api>
struct DeviceState {
  int index = 0;
  typename Api::device_t device{};
  std::string name;
  std::string description;  // what the API reports, then the allocator in use
  std::size_t total_memory = 0;
  // Device memory is stream-ordered (MemAllocFromPoolAsync from `pool`,
  // MemFreeAsync): the device supports memory pools, the driver has the entry
  // points, the pools variable is not 0 and the pool was created.
  bool memory_pools = false;
  // anydev's own pool on this device (gpu_pool.h), not the device's current
  // pool, which the application may change or tune. Created by initialize and
  // kept for the life of the process. Null when memory_pools is false.
  typename Api::pool_t pool{};
  typename Api::device_extra extra;
};

template <class Api>
struct BackendState {
  // The process that initialized the driver; in a child of fork() getpid()
  // differs, and the driver refuses every call there (report_failure).
  pid_t initialized_pid = 0;
  typename Api::driver_t driver;
  std::vector<std::unique_ptr<DeviceState<Api>>> devices;
};

// The backend's state. Before initialize it holds no driver and no device.
// Never destroyed: entries may run on other threads during process exit.
template <class Api>
BackendState<Api>& state() {
  static BackendState<Api>* s = new BackendState<Api>;
  return *s;
}

template <class Api>
const typename Api::driver_t& driver() {
  return state<Api>().driver;
}

template <class Api>
DeviceState<Api>& device_state(int device) {
  return *state<Api>().devices[static_cast<std::size_t>(device)];
}

// The core's services under the backend's name; stored by initialize or by
// the plugin's entry point.
template <class Api>
inline kit::core_services services{Api::kName};

// Records a message that no native result goes with; returns `status`.
template <class Api>
[[gnu::cold]] anydev_status_t report_error(anydev_status_t status, const std::string& message) {
  return services<Api>.set_error(status, message);
}

template <class Api>
void log(anydev_log_level_t level, const std::string& message) {
  services<Api>.log(level, message);
}

// Records "<call> failed: <Api::describe> in <operation>" as the calling
// thread's error with `status` and returns `status`. A sticky fault is
// reported as DEVICE and says that the context is broken for good; any error
// in a child of fork() says that the driver cannot be used there.
template <class Api>
[[gnu::cold]] anydev_status_t report_failure(anydev_status_t status, typename Api::status_t result,
                                             const char* call, const std::string& operation) {
  std::string message = cat(call, " failed: ", Api::describe(result), " in ", operation);
  const pid_t initialized_by = state<Api>().initialized_pid;
  if (initialized_by != 0 && getpid() != initialized_by) {
    status = ANYDEV_ERROR_BACKEND_UNAVAILABLE;
    message +=
        cat(": this process is a child of fork(); the ", Api::kDriverWhat,
            ", initialized by process ", initialized_by, " before the fork, cannot be used in it");
  } else if (Api::is_sticky_fault(result)) {
    status = ANYDEV_ERROR_DEVICE;
    message += cat(": the ", Api::kContextWhat,
                   " is broken by an earlier asynchronous fault on the device; every later call "
                   "on it fails the same way, so ",
                   Api::kName, " cannot be used again in this process");
  }
  return report_error<Api>(status, message);
}

// report_failure with Api::status_for(result).
template <class Api>
[[gnu::cold]] anydev_status_t report_failure(typename Api::status_t result, const char* call,
                                             const std::string& operation) {
  return report_failure<Api>(Api::status_for(result), result, call, operation);
}

// OUT_OF_RANGE (reported) unless 0 <= device < device count.
template <class Api>
anydev_status_t check_device(int device, const char* operation) {
  const std::size_t count = state<Api>().devices.size();
  if (device < 0 || static_cast<std::size_t>(device) >= count) {
    return report_error<Api>(ANYDEV_ERROR_OUT_OF_RANGE, cat(operation, ": ", Api::kName, " device ",
                                                            device, " does not exist (", count,
                                                            " device", count == 1 ? "" : "s", ")"));
  }
  return ANYDEV_SUCCESS;
}

// INVALID_ARGUMENT naming `operation` and what was null.
template <class Api>
[[gnu::cold]] anydev_status_t null_argument(const char* operation, const char* what) {
  return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT, cat(operation, ": null ", what));
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_STATE_H_
