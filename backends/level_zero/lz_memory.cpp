// SPDX-License-Identifier: Apache-2.0
// Pinned host memory (zeMemAllocHost) and device memory (zeMemAllocDevice)
// in the device's driver context; zeMemFree, which the core calls only after
// the work that used the memory completed (its stream-ordered release:
// memory_free_async is not offered).
#include <unistd.h>

#include <cstdint>
#include <string>

#include "lz_entries.h"
#include "lz_errors.h"
#include "lz_state.h"

namespace anydev::level_zero {
namespace {

// Large enough for any element type and for DLPack consumers.
constexpr std::size_t kAlignment = 256;

std::size_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return SIZE_MAX;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size);
}

// A driver answers a size it can never satisfy with UNSUPPORTED_SIZE (past
// maxMemAllocSize) rather than OUT_OF_*_MEMORY: for a request larger than all
// the memory there is, that is out of memory too.
anydev_status_t allocation_failure(ze_result_t r, const char* call, std::size_t bytes,
                                   std::size_t limit, const std::string& operation) {
  if (r == ZE_RESULT_ERROR_UNSUPPORTED_SIZE && bytes > limit) {
    return report_failure(ANYDEV_ERROR_OUT_OF_MEMORY, r, call,
                          cat(operation, " (more than the ", limit, " bytes there are)"));
  }
  return report_failure(r, call, operation);
}

}  // namespace

anydev_status_t host_alloc(int device, std::size_t bytes, void** handle, void** address) {
  if (handle == nullptr || address == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "host_alloc: null out");
  }
  if (const anydev_status_t s = check_device(device, "host_alloc"); s != ANYDEV_SUCCESS) return s;
  const DeviceState& d = device_at(device);
  ze_host_mem_alloc_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
  void* p = nullptr;
  const ze_result_t r = api().zeMemAllocHost(d.driver->context, &desc, bytes, kAlignment, &p);
  if (r != ZE_RESULT_SUCCESS) {
    return allocation_failure(
        r, "zeMemAllocHost", bytes, physical_memory(),
        cat("host_alloc of ", bytes, " bytes of pinned memory for level_zero device ", device));
  }
  *handle = p;
  *address = p;
  return ANYDEV_SUCCESS;
}

anydev_status_t device_alloc(int device, std::size_t bytes, anydev_bk_stream_t /*stream*/,
                             void** handle, void** address) {
  if (handle == nullptr || address == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "device_alloc: null out");
  }
  if (const anydev_status_t s = check_device(device, "device_alloc"); s != ANYDEV_SUCCESS) return s;
  DeviceState& d = device_at(device);
  ze_device_mem_alloc_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
  desc.ordinal = 0;
  void* p = nullptr;
  const ze_result_t r =
      api().zeMemAllocDevice(d.driver->context, &desc, bytes, kAlignment, d.device, &p);
  if (r != ZE_RESULT_SUCCESS) {
    return allocation_failure(
        r, "zeMemAllocDevice", bytes, d.total_memory,
        cat("device_alloc of ", bytes, " bytes on level_zero device ", device, " (", d.name, ")"));
  }
  d.allocated.fetch_add(bytes, std::memory_order_relaxed);
  *handle = p;
  *address = p;
  return ANYDEV_SUCCESS;
}

anydev_status_t memory_free(int device, anydev_bk_memory_kind_t kind, void* handle) {
  if (handle == nullptr) return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "memory_free: null");
  if (const anydev_status_t s = check_device(device, "memory_free"); s != ANYDEV_SUCCESS) return s;
  if (kind != ANYDEV_BK_MEMORY_HOST && kind != ANYDEV_BK_MEMORY_DEVICE) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("memory_free: memory kind ", static_cast<int>(kind),
                            " was not allocated by the level_zero backend"));
  }
  DeviceState& d = device_at(device);
  std::size_t size = 0;  // for memory_info's count of what anydev holds
  if (kind == ANYDEV_BK_MEMORY_DEVICE &&
      api().zeMemGetAddressRange(d.driver->context, handle, nullptr, &size) != ZE_RESULT_SUCCESS) {
    size = 0;
  }
  const ze_result_t r = api().zeMemFree(d.driver->context, handle);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(
        r, "zeMemFree",
        cat("memory_free of ", kind == ANYDEV_BK_MEMORY_HOST ? "pinned memory " : "device memory ",
            handle, " (level_zero device ", device, ")"));
  }
  d.allocated.fetch_sub(size, std::memory_order_relaxed);
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::level_zero
