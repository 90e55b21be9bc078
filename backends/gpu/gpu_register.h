// SPDX-License-Identifier: Apache-2.0
// Registered host memory of a GPU backend (host_register, host_unregister;
// backend_entries.h): the caller's pages registered with the driver
// (cuMemHostRegister / hipHostRegister, portable: every context of the
// process may copy from them). The handle is the pointer itself, so copies
// take the same path as pinned memory from host_alloc. Stateless and
// thread-safe (the driver keeps the registrations).
#ifndef ANYDEV_BACKENDS_GPU_GPU_REGISTER_H_
#define ANYDEV_BACKENDS_GPU_GPU_REGISTER_H_

#include <cstddef>

#include "gpu_objects.h"
#include "gpu_state.h"

namespace anydev::gpu {

template <class Api>
anydev_status_t host_register(int device, void* pointer, std::size_t bytes, void** handle) {
  using names = typename Api::driver_t::names;
  if (pointer == nullptr || handle == nullptr) {
    return null_argument<Api>("host_register", "pointer or handle");
  }
  if (bytes == 0) {
    return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                             cat("host_register of 0 bytes on ", Api::kName, " device ", device));
  }
  const auto& drv = driver<Api>();
  if (drv.MemHostRegister == nullptr || drv.MemHostUnregister == nullptr) {
    return report_error<Api>(ANYDEV_ERROR_UNSUPPORTED,
                             cat("host_register: the ", Api::kName, " driver lacks ",
                                 names::MemHostRegister, " or ", names::MemHostUnregister));
  }
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "host_register"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const auto r = drv.MemHostRegister(pointer, bytes, Api::kHostRegisterFlags);
  if (r != Api::kSuccess) {
    return report_failure<Api>(r, names::MemHostRegister,
                               cat("host_register of ", bytes, " bytes at ", pointer, " for ",
                                   Api::kName, " device ", device));
  }
  *handle = pointer;
  return ANYDEV_SUCCESS;
}

// The core calls this only once every operation on the memory has completed.
template <class Api>
anydev_status_t host_unregister(int device, void* handle) {
  using names = typename Api::driver_t::names;
  if (handle == nullptr) return null_argument<Api>("host_unregister", "handle");
  const auto& drv = driver<Api>();
  if (drv.MemHostUnregister == nullptr) {
    return report_error<Api>(
        ANYDEV_ERROR_UNSUPPORTED,
        cat("host_unregister: the ", Api::kName, " driver lacks ", names::MemHostUnregister));
  }
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "host_unregister"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (const auto r = drv.MemHostUnregister(handle); r != Api::kSuccess) {
    return report_failure<Api>(
        r, names::MemHostUnregister,
        cat("host_unregister of ", handle, " (", Api::kName, " device ", device, ")"));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_REGISTER_H_
