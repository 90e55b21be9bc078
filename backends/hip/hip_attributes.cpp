// SPDX-License-Identifier: Apache-2.0
// The hip backend's side of device attributes (backends/gpu/gpu_attributes.h):
// anydev's attributes as hipDeviceGetAttribute enumerators, and the
// runtime's and driver's versions.
#include "hip_api.h"

namespace anydev::hip {

bool HipApi::attribute_of(int attribute, hipDeviceAttribute_t* out) {
  switch (attribute) {
    case ANYDEV_ATTRIBUTE_COMPUTE_UNITS:
      *out = hipDeviceAttributeMultiprocessorCount;
      return true;
    case ANYDEV_ATTRIBUTE_CLOCK_RATE_KHZ:
      *out = hipDeviceAttributeClockRate;
      return true;
    case ANYDEV_ATTRIBUTE_MEMORY_CLOCK_RATE_KHZ:
      *out = hipDeviceAttributeMemoryClockRate;
      return true;
    case ANYDEV_ATTRIBUTE_MEMORY_BUS_WIDTH_BITS:
      *out = hipDeviceAttributeMemoryBusWidth;
      return true;
    case ANYDEV_ATTRIBUTE_L2_CACHE_BYTES:
      *out = hipDeviceAttributeL2CacheSize;
      return true;
    case ANYDEV_ATTRIBUTE_UNIFIED_ADDRESSING:
      *out = hipDeviceAttributeUnifiedAddressing;
      return true;
    case ANYDEV_ATTRIBUTE_INTEGRATED:
      *out = hipDeviceAttributeIntegrated;
      return true;
    case ANYDEV_ATTRIBUTE_PCI_DOMAIN:
      *out = hipDeviceAttributePciDomainID;
      return true;
    case ANYDEV_ATTRIBUTE_PCI_BUS:
      *out = hipDeviceAttributePciBusId;
      return true;
    case ANYDEV_ATTRIBUTE_PCI_DEVICE:
      *out = hipDeviceAttributePciDeviceId;
      return true;
    case ANYDEV_ATTRIBUTE_MAX_THREADS_PER_GROUP:
      *out = hipDeviceAttributeMaxThreadsPerBlock;
      return true;
    case ANYDEV_ATTRIBUTE_SIMD_WIDTH:
      *out = hipDeviceAttributeWarpSize;
      return true;
    case ANYDEV_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *out = hipDeviceAttributeComputeCapabilityMajor;
      return true;
    case ANYDEV_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *out = hipDeviceAttributeComputeCapabilityMinor;
      return true;
    default:
      return false;
  }
}

std::string HipApi::api_version_text() {
  const HipRuntime& r = gpu::driver<HipApi>();
  return kit::cat("HIP runtime ", hip_version_text(r.runtime_version), " (", r.runtime_version,
                  "), driver ", r.driver_version);
}

}  // namespace anydev::hip
