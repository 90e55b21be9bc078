// SPDX-License-Identifier: Apache-2.0
// Device attributes in C++: DeviceAttribute, the C enum
// anydev_device_attribute_t as a scoped enum, and its names
// (DeviceContext::get_attribute; docs/backends.md, "Device attributes").
// Values and pure functions only: thread-safe.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_ATTRIBUTES_HPP_
#define ANYDEV_ATTRIBUTES_HPP_

#include "anydev/anydev.h"

namespace anydev {

enum class DeviceAttribute {
  compute_units = ANYDEV_ATTRIBUTE_COMPUTE_UNITS,
  clock_rate_khz = ANYDEV_ATTRIBUTE_CLOCK_RATE_KHZ,
  memory_clock_rate_khz = ANYDEV_ATTRIBUTE_MEMORY_CLOCK_RATE_KHZ,
  memory_bus_width_bits = ANYDEV_ATTRIBUTE_MEMORY_BUS_WIDTH_BITS,
  l2_cache_bytes = ANYDEV_ATTRIBUTE_L2_CACHE_BYTES,
  max_allocation_bytes = ANYDEV_ATTRIBUTE_MAX_ALLOCATION_BYTES,
  total_memory_bytes = ANYDEV_ATTRIBUTE_TOTAL_MEMORY_BYTES,
  unified_addressing = ANYDEV_ATTRIBUTE_UNIFIED_ADDRESSING,
  integrated = ANYDEV_ATTRIBUTE_INTEGRATED,
  pci_domain = ANYDEV_ATTRIBUTE_PCI_DOMAIN,
  pci_bus = ANYDEV_ATTRIBUTE_PCI_BUS,
  pci_device = ANYDEV_ATTRIBUTE_PCI_DEVICE,
  pci_function = ANYDEV_ATTRIBUTE_PCI_FUNCTION,
  max_threads_per_group = ANYDEV_ATTRIBUTE_MAX_THREADS_PER_GROUP,
  simd_width = ANYDEV_ATTRIBUTE_SIMD_WIDTH,
  compute_capability_major = ANYDEV_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
  compute_capability_minor = ANYDEV_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
};

// "compute_units", ...; "unknown" for a value outside the enum.
inline const char* to_string(DeviceAttribute attribute) noexcept {
  const char* name =
      anydev_device_attribute_name(static_cast<anydev_device_attribute_t>(attribute));
  return name != nullptr ? name : "unknown";
}

}  // namespace anydev

#endif  // ANYDEV_ATTRIBUTES_HPP_
