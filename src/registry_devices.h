// A device's record (DeviceRecord, registry.h) from what its backend's
// device_props reported, and the checks on its capabilities. Pure and
// thread-safe.
#ifndef ANYDEV_SRC_REGISTRY_DEVICES_H_
#define ANYDEV_SRC_REGISTRY_DEVICES_H_

#include <string>

#include "anydev/backend.h"
#include "registry.h"

namespace anydev::core {

// Empty when device `device`'s props are usable; otherwise why not (a reason
// naming the field and its value), and the backend is unavailable.
std::string check_capabilities(int device, const anydev_bk_device_props_t& props);

// The record of a device whose props passed check_capabilities.
DeviceRecord device_record(const anydev_bk_device_props_t& props);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_REGISTRY_DEVICES_H_
