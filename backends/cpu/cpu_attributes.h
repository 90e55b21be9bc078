// SPDX-License-Identifier: Apache-2.0
// The cpu backend's device attributes and API version (device_attribute,
// device_uuid, api_version; backend_entries.h), read from the OS on every
// call: the online processors, /sys/devices/system/cpu/cpu0/cpufreq and
// /proc/cpuinfo for the clock, sysfs for the L2 cache, /proc/meminfo for the
// memory, uname(2) for the version. What the host has no value for (a bus
// width, a PCI address, a UUID) is UNSUPPORTED naming why. Stateless and
// thread-safe.
#ifndef ANYDEV_BACKENDS_CPU_CPU_ATTRIBUTES_H_
#define ANYDEV_BACKENDS_CPU_CPU_ATTRIBUTES_H_

#include <cstddef>
#include <cstdint>

#include "anydev/backend.h"

namespace anydev::cpu {

// The entries; `device` is already checked.
anydev_status_t read_attribute(int attribute, std::int64_t* value);
anydev_status_t read_uuid(std::uint8_t* uuid);
anydev_status_t read_api_version(char* out, std::size_t capacity);

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_ATTRIBUTES_H_
