// SPDX-License-Identifier: Apache-2.0
// zeDriverGetExtensionFunctionAddress and the host-pointer import of Intel's
// experimental driver extension (zexDriverImportExternalPointer,
// zexDriverReleaseImportedPointer), offered with
// ANYDEV_LEVEL_ZERO_EMULATOR_IPC=1. An imported range is registered with the
// emulator core as pinned host memory (core::host_register): copies and
// fills take it as the driver's own host memory until it is released.
// Without IPC, or for another name, the lookup answers
// ZE_RESULT_ERROR_INVALID_ARGUMENT (a query, not misuse). Thread-safe (the
// core's memory is).
#include <cstring>
#include <string>

#include "core_share.h"
#include "emu_lz.h"
#include "emu_lz_api.h"

namespace anydev_lz_emu {
namespace {

ze_result_t ZE_APICALL emu_zexDriverImportExternalPointer(ze_driver_handle_t hDriver, void* ptr,
                                                          size_t size) {
  count_call("zexDriverImportExternalPointer");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (!driver_matches(hDriver)) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zexDriverImportExternalPointer: unknown driver");
  }
  if (ptr == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zexDriverImportExternalPointer: null ptr");
  }
  if (size == 0)
    return misuse(ZE_RESULT_ERROR_INVALID_SIZE, "zexDriverImportExternalPointer: size 0");
  return to_ze(core::host_register(ptr, size, "zexDriverImportExternalPointer"), false);
}

ze_result_t ZE_APICALL emu_zexDriverReleaseImportedPointer(ze_driver_handle_t hDriver, void* ptr) {
  count_call("zexDriverReleaseImportedPointer");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (!driver_matches(hDriver)) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zexDriverReleaseImportedPointer: unknown driver");
  }
  if (ptr == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zexDriverReleaseImportedPointer: null");
  }
  return to_ze(core::host_unregister(ptr, "zexDriverReleaseImportedPointer"), false);
}

}  // namespace

ze_result_t ZE_APICALL emu_zeDriverGetExtensionFunctionAddress(ze_driver_handle_t hDriver,
                                                               const char* name,
                                                               void** ppFunctionAddress) {
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
  if (name == nullptr || ppFunctionAddress == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
                  "zeDriverGetExtensionFunctionAddress: null name or out");
  }
  *ppFunctionAddress = nullptr;
  if (!ipc_enabled()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (std::strcmp(name, "zexDriverImportExternalPointer") == 0) {
    *ppFunctionAddress = reinterpret_cast<void*>(&emu_zexDriverImportExternalPointer);
  } else if (std::strcmp(name, "zexDriverReleaseImportedPointer") == 0) {
    *ppFunctionAddress = reinterpret_cast<void*>(&emu_zexDriverReleaseImportedPointer);
  } else {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  return ZE_RESULT_SUCCESS;
}

}  // namespace anydev_lz_emu
