// SPDX-License-Identifier: Apache-2.0
#include "opencl_accounting.h"

#include <limits>
#include <string>

#include "opencl_services.h"

namespace anydev::opencl {
namespace {

// cl_amd_device_attribute_query: free memory in KiB (total, largest block).
constexpr cl_device_info kDeviceGlobalFreeMemoryAmd = 0x4039;

}  // namespace

bool counts_against_device(const Device& device, anydev_bk_memory_kind_t kind) {
  return kind == ANYDEV_BK_MEMORY_DEVICE ||
         (kind == ANYDEV_BK_MEMORY_HOST && device.host_unified_memory);
}

anydev_status_t reserve_memory(Device& device, const char* operation, std::size_t bytes) {
  std::size_t accounted = device.accounted.load(std::memory_order_relaxed);
  for (;;) {
    if (bytes > device.memory_limit || accounted > device.memory_limit - bytes) {
      return set_error(
          ANYDEV_ERROR_OUT_OF_MEMORY,
          cat(operation, " of ", bytes, " bytes on OpenCL device ", device.index, " (", device.name,
              "): ", accounted, " of its ", device.memory_limit, " bytes (", device.limit_source,
              ") are already allocated, ", device.memory_limit - accounted, " bytes are left"));
    }
    if (device.accounted.compare_exchange_weak(accounted, accounted + bytes,
                                               std::memory_order_relaxed)) {
      return ANYDEV_SUCCESS;
    }
  }
}

void unreserve_memory(Device& device, std::size_t bytes) noexcept {
  device.accounted.fetch_sub(bytes, std::memory_order_relaxed);
}

std::size_t unaccounted_memory(const Device& device) {
  const std::size_t accounted = device.accounted.load(std::memory_order_relaxed);
  return accounted >= device.memory_limit ? 0 : device.memory_limit - accounted;
}

std::size_t device_free_memory(const Device& device) {
  const std::size_t unaccounted = unaccounted_memory(device);
  if (device.reports_free_memory) {
    size_t free_kib[2] = {0, 0};
    if (cl().clGetDeviceInfo(device.id, kDeviceGlobalFreeMemoryAmd, sizeof(free_kib), free_kib,
                             nullptr) == CL_SUCCESS &&
        free_kib[0] != 0 && free_kib[0] * 1024 < unaccounted) {
      return free_kib[0] * 1024;
    }
  }
  return unaccounted;
}

}  // namespace anydev::opencl
