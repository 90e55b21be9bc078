// SPDX-License-Identifier: Apache-2.0
// Device attributes and the API version of a GPU backend (device_attribute,
// device_uuid, api_version; backend_entries.h). Each API maps anydev's
// attributes onto its own (Api::attribute_of: cuDeviceGetAttribute's or
// hipDeviceGetAttribute's enumerators) and names its version
// (Api::api_version_text); the rest is shared:
//   - TOTAL_MEMORY_BYTES and MAX_ALLOCATION_BYTES are the device's memory
//     (neither driver caps one allocation below it);
//   - PCI_FUNCTION is 0: both drivers' bus id strings end in ".0";
//   - an attribute the API has no enumerator for is UNSUPPORTED, naming it;
//   - the UUID comes from DeviceGetUuid, UNSUPPORTED without it.
// Stateless and thread-safe (driver calls only).
#ifndef ANYDEV_BACKENDS_GPU_GPU_ATTRIBUTES_H_
#define ANYDEV_BACKENDS_GPU_GPU_ATTRIBUTES_H_

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "gpu_objects.h"
#include "gpu_state.h"

namespace anydev::gpu {

template <class Api>
anydev_status_t device_attribute(int device, int attribute, std::int64_t* value) {
  using names = typename Api::driver_t::names;
  if (value == nullptr) return null_argument<Api>("device_attribute", "value");
  if (const anydev_status_t s = check_device<Api>(device, "device_attribute");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  switch (attribute) {
    case ANYDEV_ATTRIBUTE_TOTAL_MEMORY_BYTES:
    case ANYDEV_ATTRIBUTE_MAX_ALLOCATION_BYTES:
      *value = static_cast<std::int64_t>(device_state<Api>(device).total_memory);
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_PCI_FUNCTION:
      *value = 0;
      return ANYDEV_SUCCESS;
    default:
      break;
  }
  typename Api::attribute_t native{};
  if (!Api::attribute_of(attribute, &native)) {
    return report_error<Api>(ANYDEV_ERROR_UNSUPPORTED,
                             cat(Api::kName, " device ", device, ": the ", Api::kVendor,
                                 " API has no value for attribute ", attribute));
  }
  int out = 0;
  const auto r = driver<Api>().DeviceGetAttribute(&out, native, device);
  if (r != Api::kSuccess) {
    return report_failure<Api>(
        r, names::DeviceGetAttribute,
        cat("device_attribute ", attribute, " (", Api::kVendor, " attribute ",
            static_cast<int>(native), ") of ", Api::kName, " device ", device));
  }
  *value = out;
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t device_uuid(int device, std::uint8_t* uuid) {
  using names = typename Api::driver_t::names;
  if (uuid == nullptr) return null_argument<Api>("device_uuid", "uuid");
  if (const anydev_status_t s = check_device<Api>(device, "device_uuid"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const auto& drv = driver<Api>();
  if (drv.DeviceGetUuid == nullptr) {
    return report_error<Api>(ANYDEV_ERROR_UNSUPPORTED,
                             cat(Api::kName, " device ", device, ": the ", Api::kDriverWhat,
                                 " has no ", names::DeviceGetUuid));
  }
  typename Api::uuid_t native{};
  if (const auto r = drv.DeviceGetUuid(&native, device); r != Api::kSuccess) {
    return report_failure<Api>(r, names::DeviceGetUuid,
                               cat("device_uuid of ", Api::kName, " device ", device));
  }
  static_assert(sizeof native.bytes == 16);
  std::memcpy(uuid, native.bytes, 16);
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t api_version(int device, char* out, std::size_t capacity) {
  if (out == nullptr || capacity == 0) return null_argument<Api>("api_version", "out");
  if (const anydev_status_t s = check_device<Api>(device, "api_version"); s != ANYDEV_SUCCESS) {
    return s;
  }
  std::snprintf(out, capacity, "%s", Api::api_version_text().c_str());
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_ATTRIBUTES_H_
