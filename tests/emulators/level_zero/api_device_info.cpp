// SPDX-License-Identifier: Apache-2.0
// The emulated device's compute, cache and PCI properties
// (zeDeviceGetComputeProperties, zeDeviceGetCacheProperties,
// zeDevicePciGetPropertiesExt), as a small Intel GPU would give them: 1024
// work-items per group, one 4 MiB cache, PCI address 0000:<index + 1>:00.0.
// Each call is counted. Thread-safe (constants only).
#include <cstring>

#include "emu_lz.h"
#include "emu_lz_api.h"

namespace anydev_lz_emu {

ze_result_t ZE_APICALL emu_zeDeviceGetComputeProperties(ze_device_handle_t hDevice,
                                                        ze_device_compute_properties_t* props) {
  count_call("zeDeviceGetComputeProperties");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  core::Device* d = find_device(hDevice);
  if (d == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "unknown device");
  if (props == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "null properties");
  props->maxTotalGroupSize = 1024;
  props->maxGroupSizeX = 1024;
  props->maxGroupSizeY = 1024;
  props->maxGroupSizeZ = 64;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeDeviceGetCacheProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                                      ze_device_cache_properties_t* props) {
  count_call("zeDeviceGetCacheProperties");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  core::Device* d = find_device(hDevice);
  if (d == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "unknown device");
  if (pCount == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "null count");
  if (*pCount == 0 || props == nullptr) {
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
  }
  *pCount = 1;
  props[0].flags = 0;
  props[0].cacheSize = std::size_t{4} << 20;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeDevicePciGetPropertiesExt(ze_device_handle_t hDevice,
                                                       ze_pci_ext_properties_t* props) {
  count_call("zeDevicePciGetPropertiesExt");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  core::Device* d = find_device(hDevice);
  if (d == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "unknown device");
  if (props == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "null properties");
  props->address.domain = 0;
  props->address.bus = static_cast<std::uint32_t>(d->index + 1);
  props->address.device = 0;
  props->address.function = 0;
  return ZE_RESULT_SUCCESS;
}

}  // namespace anydev_lz_emu
