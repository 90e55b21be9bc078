// SPDX-License-Identifier: Apache-2.0
// A device's record (DeviceRecord) from what its backend's device_props
// reported, and the checks on its capabilities. Pure and thread-safe; a
// record is immutable once the registry has probed its backend.
#ifndef ANYDEV_SRC_RUNTIME_REGISTRY_DEVICES_H_
#define ANYDEV_SRC_RUNTIME_REGISTRY_DEVICES_H_

#include <cstddef>
#include <string>

#include "anydev/backend.h"

namespace anydev::core {

// The most devices one backend may report. Probing makes one device_props
// call per device under the registry's lock, so a larger count (a broken
// plugin claiming INT_MAX) makes the backend unavailable, naming the count,
// instead of holding every thread's anydev calls. Far above any machine's
// accelerators (a large node has 8 to 16; an OpenCL platform with many
// sub-devices, some hundreds).
inline constexpr int kMaxDevicesPerBackend = 4096;

// One device, as its backend described it at probe time.
struct DeviceRecord {
  std::string name;
  std::string description;
  std::size_t total_memory = 0;
  bool host_processor = false;  // the host's own CPU (see backend.h)
  // Capabilities (anydev_bk_device_props_t): the core decides by
  // these, never by the backend's name.
  int dlpack_device_type = 0;                 // DLDeviceType of device memory; 0: none
  int dlpack_host_device_type = 0;            // DLDeviceType of host memory; 0: none
  int dlpack_device_id = 0;                   // DLDevice.device_id
  bool dlpack_data_is_native_memory = false;  // device memory exports as its native object
  bool device_memory_is_host_accessible = false;
  bool stream_ordered_free = false;  // memory_free_async never declines on it
  bool peer_access = false;
  std::size_t max_fill_pattern = 16;  // bytes: 1, 2, 4, 8 or 16
};

// Empty when device `device`'s props are usable; otherwise why not (a reason
// naming the field and its value), and the backend is unavailable.
std::string check_capabilities(int device, const anydev_bk_device_props_t& props);

// The record of a device whose props passed check_capabilities.
DeviceRecord device_record(const anydev_bk_device_props_t& props);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_RUNTIME_REGISTRY_DEVICES_H_
