// SPDX-License-Identifier: Apache-2.0
// The memory entry points of the emulated driver.
#include <cstdint>
#include <string>

#include "emu_lz.h"
#include "emu_lz_api.h"

namespace anydev_lz_emu {
namespace {

ze_result_t check_context(ze_context_handle_t h, const char* api, Context** out) {
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (h == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(api) + ": null context");
  }
  *out = find_context(h);
  if (*out == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, std::string(api) + ": unknown context");
  }
  return ZE_RESULT_SUCCESS;
}

// Alignment: 0 or a power of two, at most a page (the core's blocks are
// page-aligned).
ze_result_t check_alignment(std::size_t alignment, const char* api) {
  if ((alignment & (alignment - 1)) != 0 || alignment > 4096) {
    return misuse(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT,
                  std::string(api) + ": alignment " + std::to_string(alignment) +
                      " (0 or a power of two up to 4096 is emulated)");
  }
  return ZE_RESULT_SUCCESS;
}

}  // namespace

ze_result_t ZE_APICALL emu_zeMemAllocHost(ze_context_handle_t hContext,
                                          const ze_host_mem_alloc_desc_t* desc, size_t size,
                                          size_t alignment, void** pptr) {
  count_call("zeMemAllocHost");
  Context* context = nullptr;
  if (ze_result_t r = check_context(hContext, "zeMemAllocHost", &context); r != ZE_RESULT_SUCCESS) {
    return r;
  }
  if (desc == nullptr || pptr == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeMemAllocHost: null desc or out");
  }
  if (desc->stype != ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeMemAllocHost: wrong stype");
  }
  if (ze_result_t r = check_alignment(alignment, "zeMemAllocHost"); r != ZE_RESULT_SUCCESS)
    return r;
  return to_ze(core::allocate_pinned(size, pptr, "zeMemAllocHost"), false);
}

ze_result_t ZE_APICALL emu_zeMemAllocDevice(ze_context_handle_t hContext,
                                            const ze_device_mem_alloc_desc_t* desc, size_t size,
                                            size_t alignment, ze_device_handle_t hDevice,
                                            void** pptr) {
  count_call("zeMemAllocDevice");
  Context* context = nullptr;
  if (ze_result_t r = check_context(hContext, "zeMemAllocDevice", &context);
      r != ZE_RESULT_SUCCESS) {
    return r;
  }
  if (hDevice == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "zeMemAllocDevice: null device");
  }
  core::Device* device = find_device(hDevice);
  if (device == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeMemAllocDevice: unknown device");
  }
  if (desc == nullptr || pptr == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeMemAllocDevice: null desc or out");
  }
  if (desc->stype != ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC || desc->ordinal != 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeMemAllocDevice: wrong stype or memory ordinal (one memory per device)");
  }
  if (ze_result_t r = check_alignment(alignment, "zeMemAllocDevice"); r != ZE_RESULT_SUCCESS) {
    return r;
  }
  if (size > core::get_config().memory_bytes) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (ipc_enabled()) return allocate_shareable_device(device->index, size, pptr);
  std::uintptr_t address = 0;
  const core::Status s = core::allocate_device(device->index, size, &address, "zeMemAllocDevice");
  if (s == core::Status::success) *pptr = reinterpret_cast<void*>(address);
  return to_ze(s);
}

ze_result_t ZE_APICALL emu_zeMemFree(ze_context_handle_t hContext, void* ptr) {
  count_call("zeMemFree");
  Context* context = nullptr;
  if (ze_result_t r = check_context(hContext, "zeMemFree", &context); r != ZE_RESULT_SUCCESS) {
    return r;
  }
  if (ptr == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeMemFree: null");
  const core::BlockRef b = core::find_containing(reinterpret_cast<std::uintptr_t>(ptr));
  // Operations queued on the memory that run after this fail, reported as
  // misuse by the core (the caller must free only memory no command uses).
  if (b != nullptr && b->device >= 0) {
    return to_ze(core::free_device(reinterpret_cast<std::uintptr_t>(ptr), "zeMemFree"));
  }
  return to_ze(core::free_pinned(ptr, "zeMemFree"));
}

ze_result_t ZE_APICALL emu_zeMemGetAddressRange(ze_context_handle_t hContext, const void* ptr,
                                                void** pBase, size_t* pSize) {
  count_call("zeMemGetAddressRange");
  Context* context = nullptr;
  if (ze_result_t r = check_context(hContext, "zeMemGetAddressRange", &context);
      r != ZE_RESULT_SUCCESS) {
    return r;
  }
  (void)context;  // blocks are the core's: one address space for every context
  const core::BlockRef b = core::find_containing(reinterpret_cast<std::uintptr_t>(ptr));
  if (b == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeMemGetAddressRange: not an allocation of this context");
  }
  if (pBase != nullptr) *pBase = reinterpret_cast<void*>(b->address);
  if (pSize != nullptr) *pSize = b->size;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeMemGetAllocProperties(ze_context_handle_t hContext, const void* ptr,
                                                   ze_memory_allocation_properties_t* props,
                                                   ze_device_handle_t* phDevice) {
  count_call("zeMemGetAllocProperties");
  Context* context = nullptr;
  if (ze_result_t r = check_context(hContext, "zeMemGetAllocProperties", &context);
      r != ZE_RESULT_SUCCESS) {
    return r;
  }
  if (props == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "null properties");
  (void)context;
  const core::BlockRef b = core::find_containing(reinterpret_cast<std::uintptr_t>(ptr));
  const bool ours = b != nullptr;
  props->type = !ours            ? ZE_MEMORY_TYPE_UNKNOWN
                : b->device >= 0 ? ZE_MEMORY_TYPE_DEVICE
                                 : ZE_MEMORY_TYPE_HOST;
  props->id = ours ? static_cast<std::uint64_t>(b->address) : 0;
  props->pageSize = 4096;
  if (phDevice != nullptr) {
    *phDevice = ours && b->device >= 0 ? device_handle(b->device) : nullptr;
  }
  return ZE_RESULT_SUCCESS;
}

}  // namespace anydev_lz_emu
