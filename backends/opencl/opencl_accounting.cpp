// SPDX-License-Identifier: Apache-2.0
#include "opencl_accounting.h"

#include <limits>
#include <string>

#include "opencl_services.h"

namespace anydev::opencl {

anydev_status_t read_memory_limit(std::size_t* limit) {
  *limit = 0;
  const char* text = get_env(kMemoryLimitVariable);
  if (text == nullptr) return ANYDEV_SUCCESS;
  const std::string value(text);
  std::size_t bytes = 0;
  bool valid = !value.empty() && value.size() <= 20;
  for (char c : value) {
    if (!valid) break;
    if (c < '0' || c > '9') {
      valid = false;
      break;
    }
    const auto digit = static_cast<std::size_t>(c - '0');
    if (bytes > (std::numeric_limits<std::size_t>::max() - digit) / 10) {
      valid = false;
      break;
    }
    bytes = bytes * 10 + digit;
  }
  if (!valid || bytes == 0) {
    return set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                     cat(kMemoryLimitVariable, "=\"", value,
                         "\" is not a number of bytes above zero (decimal digits only, e.g. "
                         "67108864 for 64 MiB)"));
  }
  *limit = bytes;
  return ANYDEV_SUCCESS;
}

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

}  // namespace anydev::opencl
