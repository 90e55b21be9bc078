// SPDX-License-Identifier: Apache-2.0
// Sharing between processes (core_share.h): the virtual memory management
// calls with POSIX-fd handles, host-memory registration, interprocess events
// and device UUIDs. ANYDEV_CUDA_EMULATOR_VMM=0 reports the VMM attributes as
// 0 and answers the VMM calls CUDA_ERROR_NOT_SUPPORTED.
#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <memory>

#include "core_config.h"
#include "core_memory.h"
#include "core_share.h"
#include "core_stream.h"
#include "emu_state.h"

using anydev_emu::Context;
using anydev_emu::cu;
using anydev_emu::EventRef;
namespace core = anydev_emu::core;

namespace {

// The device `prop` names: CUDA_ERROR_INVALID_VALUE for anything but pinned
// device memory of a device that exists.
CUresult prop_device(const CUmemAllocationProp* prop, const char* api, int* device) {
  if (prop == nullptr || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
    return cu(core::misuse(core::Status::invalid_value,
                           std::string(api) + ": properties other than pinned device memory"));
  }
  anydev_emu::Device* d = nullptr;
  if (const CUresult r = anydev_emu::get_device(prop->location.id, &d); r != CUDA_SUCCESS) return r;
  *device = prop->location.id;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice device) {
  anydev_emu::Device* d = nullptr;
  if (const CUresult r = anydev_emu::get_device(device, &d); r != CUDA_SUCCESS) return r;
  if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::memset(uuid->bytes, 0, sizeof uuid->bytes);
  std::memcpy(uuid->bytes, "anydev-emu-gpu", 14);
  uuid->bytes[15] = static_cast<char>(d->index);
  return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                       CUmemAllocationGranularity_flags option) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  int device = 0;
  if (const CUresult r = prop_device(prop, "cuMemGetAllocationGranularity", &device);
      r != CUDA_SUCCESS)
    return r;
  if (granularity == nullptr || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
                                 option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (!core::vmm_supported()) return CUDA_ERROR_NOT_SUPPORTED;
  *granularity = core::kGranularity;
  return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                     const CUmemAllocationProp* prop, unsigned long long flags) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  int device = 0;
  if (const CUresult r = prop_device(prop, "cuMemCreate", &device); r != CUDA_SUCCESS) return r;
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  constexpr int kKnown = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  if ((prop->requestedHandleTypes & ~kKnown) != 0) return CUDA_ERROR_NOT_SUPPORTED;
  std::uint64_t h = 0;
  const CUresult r = cu(core::vmm_create(
      device, size, (prop->requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0,
      handle != nullptr ? &h : nullptr, "cuMemCreate"));
  if (r == CUDA_SUCCESS) *handle = h;
  return r;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  return cu(core::vmm_release(handle, "cuMemRelease"));
}

CUresult cuMemExportToShareableHandle(void* shareable, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType type, unsigned long long flags) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || flags != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return cu(
      core::vmm_export_fd(handle, static_cast<int*>(shareable), "cuMemExportToShareableHandle"));
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* os_handle,
                                        CUmemAllocationHandleType type) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || handle == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // For a POSIX fd the pointer's value is the fd.
  const int fd = static_cast<int>(reinterpret_cast<std::intptr_t>(os_handle));
  std::uint64_t h = 0;
  const CUresult r = cu(core::vmm_import_fd(fd, &h, "cuMemImportFromShareableHandle"));
  if (r == CUDA_SUCCESS) *handle = h;
  return r;
}

CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags) {
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemAddressReserve", &c); r != CUDA_SUCCESS)
    return r;
  // A fixed address is only a hint to the driver: the emulator ignores it.
  static_cast<void>(addr);
  if (flags != 0 || ptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::uintptr_t at = 0;
  const CUresult r = cu(core::vmm_reserve(c->device, size, alignment, &at, "cuMemAddressReserve"));
  if (r == CUDA_SUCCESS) *ptr = static_cast<CUdeviceptr>(at);
  return r;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  return cu(core::vmm_free_range(static_cast<std::uintptr_t>(ptr), size, "cuMemAddressFree"));
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return cu(core::vmm_map(static_cast<std::uintptr_t>(ptr), size, offset, handle, "cuMemMap"));
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  return cu(core::vmm_unmap(static_cast<std::uintptr_t>(ptr), size, "cuMemUnmap"));
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (desc == nullptr || count != 1 || desc->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      desc->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
    // The emulator grants one device read-write access, what the backend asks.
    return cu(core::misuse(core::Status::invalid_value,
                           "cuMemSetAccess: only one read-write device descriptor is emulated"));
  }
  return cu(core::vmm_set_access(static_cast<std::uintptr_t>(ptr), size, desc->location.id,
                                 "cuMemSetAccess"));
}

CUresult cuMemHostRegister(void* p, size_t bytes, unsigned int flags) {
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemHostRegister", &c); r != CUDA_SUCCESS)
    return r;
  constexpr unsigned int kKnown = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP;
  if ((flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  const CUresult r = cu(core::host_register(p, bytes, "cuMemHostRegister"));
  // The driver's code for memory registered twice.
  return r == CUDA_ERROR_INVALID_VALUE && p != nullptr && bytes != 0
             ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
             : r;
}

CUresult cuMemHostUnregister(void* p) {
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemHostUnregister", &c); r != CUDA_SUCCESS)
    return r;
  const CUresult r = cu(core::host_unregister(p, "cuMemHostUnregister"));
  return r == CUDA_ERROR_INVALID_VALUE ? CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED : r;
}

CUresult cuIpcGetEventHandle(CUipcEventHandle* handle, CUevent event) {
  EventRef e;
  if (const CUresult r = anydev_emu::lookup_event(event, "cuIpcGetEventHandle", &e);
      r != CUDA_SUCCESS)
    return r;
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  static_assert(sizeof handle->reserved == core::kIpcHandleBytes);
  unsigned char bytes[core::kIpcHandleBytes];
  const CUresult r = cu(core::ipc_event_handle(e, bytes, "cuIpcGetEventHandle"));
  if (r == CUDA_SUCCESS) std::memcpy(handle->reserved, bytes, sizeof bytes);
  return r;
}

CUresult cuIpcOpenEventHandle(CUevent* event, CUipcEventHandle handle) {
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuIpcOpenEventHandle", &c); r != CUDA_SUCCESS)
    return r;
  if (event == nullptr) return CUDA_ERROR_INVALID_VALUE;
  unsigned char bytes[core::kIpcHandleBytes];
  std::memcpy(bytes, handle.reserved, sizeof bytes);
  EventRef e;
  const CUresult r = cu(core::ipc_event_open(c, bytes, &e, "cuIpcOpenEventHandle"));
  if (r == CUDA_SUCCESS) *event = static_cast<CUevent>(core::register_object(e));
  return r;
}

}  // extern "C"
