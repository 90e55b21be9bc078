// SPDX-License-Identifier: Apache-2.0
// Device attributes and the API version of the level_zero backend
// (device_attribute, device_uuid, api_version; backend_entries.h):
//   COMPUTE_UNITS          numSlices x numSubslicesPerSlice x numEUsPerSubslice
//                          (execution units) of zeDeviceGetProperties
//   CLOCK_RATE_KHZ         coreClockRate (MHz) x 1000
//   MEMORY_CLOCK_RATE_KHZ  maxClockRate (MHz) x 1000, MEMORY_BUS_WIDTH_BITS
//                          maxBusWidth, of the first zeDeviceGetMemoryProperties
//                          entry (0 from the driver: UNSUPPORTED)
//   L2_CACHE_BYTES         the largest cacheSize of zeDeviceGetCacheProperties
//                          (optional symbol)
//   MAX_ALLOCATION_BYTES   maxMemAllocSize; TOTAL_MEMORY_BYTES the device's
//   UNIFIED_ADDRESSING     1 (USM pointers); INTEGRATED the INTEGRATED flag
//   PCI_*                  zeDevicePciGetPropertiesExt (ZE_extension_pci_properties,
//                          optional symbol)
//   MAX_THREADS_PER_GROUP  maxTotalGroupSize; SIMD_WIDTH physicalEUSimdWidth
//   UUID                   the properties' uuid
// The version is zeDriverGetApiVersion and the driver's driverVersion.
// Stateless and thread-safe (driver calls only).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "lz_entries.h"
#include "lz_errors.h"
#include "lz_state.h"

namespace anydev::level_zero {
namespace {

anydev_status_t none(const DeviceState& d, int attribute, const std::string& why) {
  return report_error(ANYDEV_ERROR_UNSUPPORTED, cat("level_zero device ", d.index, " (", d.name,
                                                    "): attribute ", attribute, ": ", why));
}

anydev_status_t properties(const DeviceState& d, ze_device_properties_t* props) {
  *props = {};
  props->stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  const ze_result_t r = api().zeDeviceGetProperties(d.device, props);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeDeviceGetProperties", cat("level_zero device ", d.index));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t memory(const DeviceState& d, int attribute, std::int64_t* value) {
  std::uint32_t count = 1;
  ze_device_memory_properties_t props = {};
  props.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
  const ze_result_t r = api().zeDeviceGetMemoryProperties(d.device, &count, &props);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeDeviceGetMemoryProperties", cat("level_zero device ", d.index));
  }
  const std::int64_t v = attribute == ANYDEV_ATTRIBUTE_MEMORY_CLOCK_RATE_KHZ
                             ? std::int64_t{props.maxClockRate} * 1000
                             : std::int64_t{props.maxBusWidth};
  if (count == 0 || v == 0) return none(d, attribute, "the driver reports 0 (unknown)");
  *value = v;
  return ANYDEV_SUCCESS;
}

anydev_status_t cache(const DeviceState& d, int attribute, std::int64_t* value) {
  if (api().zeDeviceGetCacheProperties == nullptr) {
    return none(d, attribute, "the loader has no zeDeviceGetCacheProperties");
  }
  std::uint32_t count = 0;
  ze_result_t r = api().zeDeviceGetCacheProperties(d.device, &count, nullptr);
  std::vector<ze_device_cache_properties_t> caches(count);
  for (auto& c : caches) c.stype = ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES;
  if (r == ZE_RESULT_SUCCESS && count > 0) {
    r = api().zeDeviceGetCacheProperties(d.device, &count, caches.data());
  }
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeDeviceGetCacheProperties", cat("level_zero device ", d.index));
  }
  std::size_t largest = 0;
  for (std::uint32_t i = 0; i < count; ++i) largest = std::max(largest, caches[i].cacheSize);
  if (largest == 0) return none(d, attribute, "the driver reports no cache");
  *value = static_cast<std::int64_t>(largest);
  return ANYDEV_SUCCESS;
}

anydev_status_t pci(const DeviceState& d, int attribute, std::int64_t* value) {
  if (api().zeDevicePciGetPropertiesExt == nullptr) {
    return none(d, attribute,
                "the loader has no zeDevicePciGetPropertiesExt (ZE_extension_pci_properties)");
  }
  ze_pci_ext_properties_t props = {};
  props.stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES;
  const ze_result_t r = api().zeDevicePciGetPropertiesExt(d.device, &props);
  if (r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE || r == ZE_RESULT_ERROR_UNINITIALIZED) {
    return none(d, attribute,
                cat("its driver lacks ZE_extension_pci_properties (", describe_result(r), ")"));
  }
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeDevicePciGetPropertiesExt", cat("level_zero device ", d.index));
  }
  const ze_pci_address_ext_t& a = props.address;
  *value = attribute == ANYDEV_ATTRIBUTE_PCI_DOMAIN   ? a.domain
           : attribute == ANYDEV_ATTRIBUTE_PCI_BUS    ? a.bus
           : attribute == ANYDEV_ATTRIBUTE_PCI_DEVICE ? a.device
                                                      : a.function;
  return ANYDEV_SUCCESS;
}

}  // namespace

anydev_status_t device_attribute(int device, int attribute, std::int64_t* value) {
  if (value == nullptr)
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "device_attribute: null value");
  if (const anydev_status_t s = check_device(device, "device_attribute"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const DeviceState& d = device_at(device);
  switch (attribute) {
    case ANYDEV_ATTRIBUTE_MEMORY_CLOCK_RATE_KHZ:
    case ANYDEV_ATTRIBUTE_MEMORY_BUS_WIDTH_BITS:
      return memory(d, attribute, value);
    case ANYDEV_ATTRIBUTE_L2_CACHE_BYTES:
      return cache(d, attribute, value);
    case ANYDEV_ATTRIBUTE_PCI_DOMAIN:
    case ANYDEV_ATTRIBUTE_PCI_BUS:
    case ANYDEV_ATTRIBUTE_PCI_DEVICE:
    case ANYDEV_ATTRIBUTE_PCI_FUNCTION:
      return pci(d, attribute, value);
    case ANYDEV_ATTRIBUTE_TOTAL_MEMORY_BYTES:
      *value = static_cast<std::int64_t>(d.total_memory);
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_UNIFIED_ADDRESSING:
      *value = 1;  // shared, host and device USM share one address space
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    case ANYDEV_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      return none(d, attribute, "Level Zero has no compute capability");
    default:
      break;
  }
  ze_device_properties_t props;
  if (anydev_status_t s = properties(d, &props); s != ANYDEV_SUCCESS) return s;
  switch (attribute) {
    case ANYDEV_ATTRIBUTE_COMPUTE_UNITS:
      *value = std::int64_t{props.numSlices} * props.numSubslicesPerSlice * props.numEUsPerSubslice;
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_CLOCK_RATE_KHZ:
      *value = std::int64_t{props.coreClockRate} * 1000;
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_MAX_ALLOCATION_BYTES:
      *value = static_cast<std::int64_t>(props.maxMemAllocSize);
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_INTEGRATED:
      *value = (props.flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED) != 0 ? 1 : 0;
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_MAX_THREADS_PER_GROUP: {
      ze_device_compute_properties_t compute = {};
      compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
      if (api().zeDeviceGetComputeProperties == nullptr ||
          api().zeDeviceGetComputeProperties(d.device, &compute) != ZE_RESULT_SUCCESS) {
        return none(d, attribute, "zeDeviceGetComputeProperties is missing or failed");
      }
      *value = compute.maxTotalGroupSize;
      return ANYDEV_SUCCESS;
    }
    case ANYDEV_ATTRIBUTE_SIMD_WIDTH:
      *value = props.physicalEUSimdWidth;
      return ANYDEV_SUCCESS;
    default:
      return none(d, attribute, "Level Zero has no such value");
  }
}

anydev_status_t device_uuid(int device, std::uint8_t* uuid) {
  if (uuid == nullptr) return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "device_uuid: null uuid");
  if (const anydev_status_t s = check_device(device, "device_uuid"); s != ANYDEV_SUCCESS) return s;
  ze_device_properties_t props;
  if (anydev_status_t s = properties(device_at(device), &props); s != ANYDEV_SUCCESS) return s;
  static_assert(sizeof props.uuid.id == 16);
  std::memcpy(uuid, props.uuid.id, 16);
  return ANYDEV_SUCCESS;
}

anydev_status_t api_version(int device, char* out, std::size_t capacity) {
  if (out == nullptr || capacity == 0) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "api_version: null output");
  }
  if (const anydev_status_t s = check_device(device, "api_version"); s != ANYDEV_SUCCESS) return s;
  std::snprintf(out, capacity, "Level Zero driver %s", device_at(device).driver->version.c_str());
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::level_zero
