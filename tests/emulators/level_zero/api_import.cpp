// SPDX-License-Identifier: Apache-2.0
// Intel's experimental host pointer import, as the emulated driver offers
// it: zeDriverGetExtensionFunctionAddress hands out
// zexDriverImportExternalPointer and zexDriverReleaseImportedPointer (unless
// ANYDEV_LEVEL_ZERO_EMULATOR_HOST_IMPORT=0, when every name is unknown, as in
// a driver without them). Import registers the caller's range with the
// emulator core (an external block, as cuMemHostRegister does): null or
// zero-sized ranges and a range overlapping one already imported answer
// ZE_RESULT_ERROR_INVALID_ARGUMENT, as Intel's driver does; releasing a
// pointer that is not the start of an imported range answers the same.
// Each call is counted under its own name. Thread-safe (the core's memory
// is).
#include <cstring>
#include <string>

#include "core_config.h"
#include "core_share.h"
#include "emu_lz.h"
#include "emu_lz_api.h"

namespace anydev_lz_emu {
namespace {

bool host_import_enabled() {
  static const bool value = core::read_setting("HOST_IMPORT", 1, 0, 1) != 0;
  return value;
}

ze_result_t ZE_APICALL zexDriverImportExternalPointer(ze_driver_handle_t hDriver, void* ptr,
                                                      size_t size) {
  count_call("zexDriverImportExternalPointer");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (hDriver == nullptr || !driver_matches(hDriver)) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zexDriverImportExternalPointer: bad driver");
  }
  if (ptr == nullptr || size == 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const core::Status s = core::host_register(ptr, size, "zexDriverImportExternalPointer");
  return s == core::Status::success ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t ZE_APICALL zexDriverReleaseImportedPointer(ze_driver_handle_t hDriver, void* ptr) {
  count_call("zexDriverReleaseImportedPointer");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (hDriver == nullptr || !driver_matches(hDriver)) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zexDriverReleaseImportedPointer: bad driver");
  }
  if (ptr == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const core::Status s = core::host_unregister(ptr, "zexDriverReleaseImportedPointer");
  return s == core::Status::success ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

}  // namespace

ze_result_t ZE_APICALL emu_zeDriverGetExtensionFunctionAddress(ze_driver_handle_t hDriver,
                                                               const char* name, void** out) {
  count_call("zeDriverGetExtensionFunctionAddress");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (hDriver == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
                  "zeDriverGetExtensionFunctionAddress: null driver");
  }
  if (!driver_matches(hDriver)) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeDriverGetExtensionFunctionAddress: unknown driver");
  }
  if (name == nullptr || out == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
                  "zeDriverGetExtensionFunctionAddress: null name or output");
  }
  // Not misuse: a caller asks, and learns the driver lacks the function.
  if (!host_import_enabled()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (std::strcmp(name, "zexDriverImportExternalPointer") == 0) {
    *out = reinterpret_cast<void*>(&zexDriverImportExternalPointer);
    return ZE_RESULT_SUCCESS;
  }
  if (std::strcmp(name, "zexDriverReleaseImportedPointer") == 0) {
    *out = reinterpret_cast<void*>(&zexDriverReleaseImportedPointer);
    return ZE_RESULT_SUCCESS;
  }
  return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

}  // namespace anydev_lz_emu
