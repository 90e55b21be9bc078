// SPDX-License-Identifier: Apache-2.0
// The cuda backend's side of device attributes (backends/gpu/gpu_attributes.h):
// anydev's attributes as cuDeviceGetAttribute enumerators, and the driver's
// version.
#include "cuda_api.h"

namespace anydev::cuda {

bool CudaApi::attribute_of(int attribute, CUdevice_attribute* out) {
  switch (attribute) {
    case ANYDEV_ATTRIBUTE_COMPUTE_UNITS:
      *out = CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
      return true;
    case ANYDEV_ATTRIBUTE_CLOCK_RATE_KHZ:
      *out = CU_DEVICE_ATTRIBUTE_CLOCK_RATE;
      return true;
    case ANYDEV_ATTRIBUTE_MEMORY_CLOCK_RATE_KHZ:
      *out = CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE;
      return true;
    case ANYDEV_ATTRIBUTE_MEMORY_BUS_WIDTH_BITS:
      *out = CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH;
      return true;
    case ANYDEV_ATTRIBUTE_L2_CACHE_BYTES:
      *out = CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE;
      return true;
    case ANYDEV_ATTRIBUTE_UNIFIED_ADDRESSING:
      *out = CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING;
      return true;
    case ANYDEV_ATTRIBUTE_INTEGRATED:
      *out = CU_DEVICE_ATTRIBUTE_INTEGRATED;
      return true;
    case ANYDEV_ATTRIBUTE_PCI_DOMAIN:
      *out = CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID;
      return true;
    case ANYDEV_ATTRIBUTE_PCI_BUS:
      *out = CU_DEVICE_ATTRIBUTE_PCI_BUS_ID;
      return true;
    case ANYDEV_ATTRIBUTE_PCI_DEVICE:
      *out = CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID;
      return true;
    case ANYDEV_ATTRIBUTE_MAX_THREADS_PER_GROUP:
      *out = CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
      return true;
    case ANYDEV_ATTRIBUTE_SIMD_WIDTH:
      *out = CU_DEVICE_ATTRIBUTE_WARP_SIZE;
      return true;
    case ANYDEV_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *out = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
      return true;
    case ANYDEV_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *out = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR;
      return true;
    default:
      return false;
  }
}

std::string CudaApi::api_version_text() {
  return cat("CUDA driver API ", driver_version_text(driver().version), " (cuDriverGetVersion ",
             driver().version, ")");
}

}  // namespace anydev::cuda
