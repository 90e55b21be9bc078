// SPDX-License-Identifier: Apache-2.0
// Interprocess memory of the emulated driver (ANYDEV_LEVEL_ZERO_EMULATOR_IPC=1).
//
// Device memory is then a memfd mapped MAP_SHARED (core allocate_device_mapped),
// so it crosses real processes. zeMemGetIpcHandle puts the allocation's own
// memfd in the handle's first 4 bytes, the way Intel's driver carries a
// dma-buf fd (the driver keeps owning it; the caller dups what it sends);
// zeMemOpenIpcHandle dups the fd it is given and maps it as a new device
// allocation of the opening process; zeMemCloseIpcHandle unmaps. The file
// lives while any process maps it or holds a descriptor: what an importer
// mapped stays valid after the exporter frees it. Interprocess event pools
// are in api_ipc_events.cpp. Thread-safe (the core's memory is).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "emu_lz.h"
#include "emu_lz_api.h"

namespace anydev_lz_emu {
namespace {

ze_result_t check(ze_context_handle_t h, const char* api) {
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (h == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(api) + ": null context");
  }
  if (find_context(h) == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, std::string(api) + ": unknown context");
  }
  // Not misuse: a caller asks, and learns the driver has no IPC.
  if (!ipc_enabled()) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
  return ZE_RESULT_SUCCESS;
}

}  // namespace

ze_result_t allocate_shareable_device(int device, std::size_t size, void** pptr) {
  const int fd = memfd_create("anydev-lz-emu-ipc", MFD_CLOEXEC);
  if (fd < 0) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    close(fd);
    return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  std::uintptr_t address = 0;
  const core::Status s =
      core::allocate_device_mapped(device, size, fd, &address, "zeMemAllocDevice");
  if (s == core::Status::success) *pptr = reinterpret_cast<void*>(address);
  return to_ze(s);
}

ze_result_t ZE_APICALL emu_zeMemGetIpcHandle(ze_context_handle_t hContext, const void* ptr,
                                             ze_ipc_mem_handle_t* pIpcHandle) {
  count_call("zeMemGetIpcHandle");
  if (ze_result_t r = check(hContext, "zeMemGetIpcHandle"); r != ZE_RESULT_SUCCESS) return r;
  if (ptr == nullptr || pIpcHandle == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeMemGetIpcHandle: null ptr or out");
  }
  core::BlockRef b;
  if (core::find_device_block(reinterpret_cast<std::uintptr_t>(ptr), "zeMemGetIpcHandle", &b) !=
      core::Status::success) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // reported by the core
  }
  if (b->fd < 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeMemGetIpcHandle: the allocation was made before IPC was enabled");
  }
  std::memset(pIpcHandle->data, 0, sizeof(pIpcHandle->data));
  std::memcpy(pIpcHandle->data, &b->fd, sizeof(b->fd));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeMemOpenIpcHandle(ze_context_handle_t hContext,
                                              ze_device_handle_t hDevice,
                                              ze_ipc_mem_handle_t handle,
                                              ze_ipc_memory_flags_t flags, void** pptr) {
  count_call("zeMemOpenIpcHandle");
  if (ze_result_t r = check(hContext, "zeMemOpenIpcHandle"); r != ZE_RESULT_SUCCESS) return r;
  if (hDevice == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "zeMemOpenIpcHandle: null device");
  }
  core::Device* device = find_device(hDevice);
  if (device == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeMemOpenIpcHandle: unknown device");
  }
  if (pptr == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeMemOpenIpcHandle: null out");
  }
  if ((flags & ~static_cast<ze_ipc_memory_flags_t>(3)) != 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_ENUMERATION, "zeMemOpenIpcHandle: unknown flags");
  }
  int fd = -1;
  std::memcpy(&fd, handle.data, sizeof(fd));
  struct stat st = {};
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeMemOpenIpcHandle: the handle's fd " + std::to_string(fd) +
                      " is not an open memory file: " + std::strerror(errno));
  }
  const int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  std::uintptr_t address = 0;
  const core::Status s = core::allocate_device_mapped(
      device->index, static_cast<std::size_t>(st.st_size), own, &address, "zeMemOpenIpcHandle");
  if (s == core::Status::success) *pptr = reinterpret_cast<void*>(address);
  return to_ze(s);
}

ze_result_t ZE_APICALL emu_zeMemCloseIpcHandle(ze_context_handle_t hContext, const void* ptr) {
  count_call("zeMemCloseIpcHandle");
  if (ze_result_t r = check(hContext, "zeMemCloseIpcHandle"); r != ZE_RESULT_SUCCESS) return r;
  if (ptr == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeMemCloseIpcHandle: null");
  }
  return to_ze(core::free_device(reinterpret_cast<std::uintptr_t>(ptr), "zeMemCloseIpcHandle"));
}

}  // namespace anydev_lz_emu
