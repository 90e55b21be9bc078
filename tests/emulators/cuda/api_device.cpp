// SPDX-License-Identifier: Apache-2.0
// Devices: count, name, memory, attributes, PCI bus id, peers.
#include <cuda.h>

#include <cstdio>
#include <cstring>

#include "core_config.h"
#include "core_share.h"
#include "emu_state.h"

using anydev_emu::Device;

extern "C" {

CUresult cuDeviceGetCount(int* count) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = anydev_emu::core::device_count();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  Device* d = nullptr;
  if (const CUresult r = anydev_emu::get_device(ordinal, &d); r != CUDA_SUCCESS) return r;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *device = d->index;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  Device* d = nullptr;
  if (const CUresult r = anydev_emu::get_device(device, &d); r != CUDA_SUCCESS) return r;
  if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<std::size_t>(length), "%s", "anydev CUDA emulator");
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t* bytes, CUdevice device) {
  Device* d = nullptr;
  if (const CUresult r = anydev_emu::get_device(device, &d); r != CUDA_SUCCESS) return r;
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *bytes = anydev_emu::core::get_config().memory_bytes;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  Device* d = nullptr;
  if (const CUresult r = anydev_emu::get_device(device, &d); r != CUDA_SUCCESS) return r;
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = 9;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = 0;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
      *value = 1;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
      *value = anydev_emu::core::get_config().memory_pools ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = 1;
      return CUDA_SUCCESS;
    // As a small H100-like device would say (device attributes, docs/backends.md).
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
      *value = 1755000;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      *value = 2619000;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      *value = 5120;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      *value = 50 << 20;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED:
      *value = 0;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = 1024;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      *value = 32;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
      *value = 0;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      *value = d->index + 1;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
      *value = 0;
      return CUDA_SUCCESS;
    // ANYDEV_CUDA_EMULATOR_VMM=0 turns both off (api_share.cpp).
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
      *value = anydev_emu::core::vmm_supported() ? 1 : 0;
      return CUDA_SUCCESS;
    default:
      anydev_emu::core::report_misuse("cuDeviceGetAttribute: attribute " +
                                      std::to_string(static_cast<int>(attribute)) +
                                      " is not emulated");
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuDeviceGetPCIBusId(char* bus_id, int length, CUdevice device) {
  Device* d = nullptr;
  if (const CUresult r = anydev_emu::get_device(device, &d); r != CUDA_SUCCESS) return r;
  if (bus_id == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(bus_id, static_cast<std::size_t>(length), "0000:%02x:00.0", d->index + 1);
  return CUDA_SUCCESS;
}

CUresult cuDeviceCanAccessPeer(int* can_access, CUdevice device, CUdevice peer) {
  Device* d = nullptr;
  Device* p = nullptr;
  if (const CUresult r = anydev_emu::get_device(device, &d); r != CUDA_SUCCESS) return r;
  if (const CUresult r = anydev_emu::get_device(peer, &p); r != CUDA_SUCCESS) return r;
  if (can_access == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *can_access = d != p ? 1 : 0;
  return CUDA_SUCCESS;
}

}  // extern "C"
