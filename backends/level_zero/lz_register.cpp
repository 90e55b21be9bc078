// SPDX-License-Identifier: Apache-2.0
// Registered host memory of the level_zero backend (host_register,
// host_unregister; backend_entries.h). Level Zero's core API has no way to
// page-lock memory it did not allocate; Intel's driver offers it as the
// experimental driver functions zexDriverImportExternalPointer and
// zexDriverReleaseImportedPointer, found with
// zeDriverGetExtensionFunctionAddress (they are not in the loader's tables,
// so they are looked up per driver, not linked). A driver without them:
// UNSUPPORTED naming the function it lacks. The handle is the pointer
// itself, so copies take the same path as host_alloc memory. Stateless
// apart from the looked-up functions (cached per driver, atomically):
// thread-safe.
#include <atomic>
#include <string>

#include "lz_entries.h"
#include "lz_errors.h"
#include "lz_state.h"

namespace anydev::level_zero {
namespace {

using ImportFn = ze_result_t(ZE_APICALL*)(ze_driver_handle_t, void*, size_t);
using ReleaseFn = ze_result_t(ZE_APICALL*)(ze_driver_handle_t, void*);

constexpr const char* kImport = "zexDriverImportExternalPointer";
constexpr const char* kRelease = "zexDriverReleaseImportedPointer";

// Looks `name` up in the device's driver; UNSUPPORTED (reported) when the
// driver or the loader lacks it.
anydev_status_t lookup(const DeviceState& d, const char* name, void** out) {
  if (api().zeDriverGetExtensionFunctionAddress == nullptr) {
    return report_error(
        ANYDEV_ERROR_UNSUPPORTED,
        cat("registering host memory on level_zero device ", d.index, " needs the driver function ",
            name, ", but the loader has no zeDriverGetExtensionFunctionAddress"));
  }
  void* fn = nullptr;
  const ze_result_t r = api().zeDriverGetExtensionFunctionAddress(d.driver->driver, name, &fn);
  if (r != ZE_RESULT_SUCCESS || fn == nullptr) {
    return report_error(
        ANYDEV_ERROR_UNSUPPORTED,
        cat("level_zero device ", d.index, " (", d.name, "): its driver (version ",
            d.driver->version, ") has no ", name,
            " (Intel's experimental host pointer import; zeDriverGetExtensionFunctionAddress "
            "answered ",
            describe_result(r), "), so host memory cannot be registered"));
  }
  *out = fn;
  return ANYDEV_SUCCESS;
}

}  // namespace

anydev_status_t host_register(int device, void* pointer, std::size_t bytes, void** handle) {
  if (pointer == nullptr || handle == nullptr || bytes == 0) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        "host_register: null pointer or handle, or zero bytes");
  }
  if (const anydev_status_t s = check_device(device, "host_register"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const DeviceState& d = device_at(device);
  void* import = nullptr;
  void* release = nullptr;
  if (anydev_status_t s = lookup(d, kImport, &import); s != ANYDEV_SUCCESS) return s;
  if (anydev_status_t s = lookup(d, kRelease, &release); s != ANYDEV_SUCCESS) return s;
  const ze_result_t r = reinterpret_cast<ImportFn>(import)(d.driver->driver, pointer, bytes);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(
        r, kImport,
        cat("host_register of ", bytes, " bytes at ", pointer, " for level_zero device ", device));
  }
  *handle = pointer;
  return ANYDEV_SUCCESS;
}

anydev_status_t host_unregister(int device, void* handle) {
  if (handle == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "host_unregister: null handle");
  }
  if (const anydev_status_t s = check_device(device, "host_unregister"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const DeviceState& d = device_at(device);
  void* release = nullptr;
  if (anydev_status_t s = lookup(d, kRelease, &release); s != ANYDEV_SUCCESS) return s;
  const ze_result_t r = reinterpret_cast<ReleaseFn>(release)(d.driver->driver, handle);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, kRelease,
                          cat("host_unregister of ", handle, " (level_zero device ", device, ")"));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::level_zero
