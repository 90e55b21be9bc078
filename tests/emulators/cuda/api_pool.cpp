// SPDX-License-Identifier: Apache-2.0
// Memory pools: the default pool, cuMemPoolCreate/Destroy, their attributes
// and access, allocation from a pool, and the pointer attributes that say
// where memory came from.
#include <cuda.h>

#include <string>

#include "core_config.h"
#include "core_memory.h"
#include "core_pool.h"
#include "emu_state.h"

using anydev_emu::cu;
namespace core = anydev_emu::core;

namespace {

CUresult misuse(const std::string& message) {
  return cu(core::misuse(core::Status::invalid_value, message));
}

bool is_device_location(const CUmemLocation& location) {
  return core::is_device_location(location.type == CU_MEM_LOCATION_TYPE_DEVICE, location.id);
}

// The live pool behind `handle` (and the driver).
CUresult pool_of(CUmemoryPool handle, const char* api, core::Pool** out) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  return cu(core::lookup_pool(handle, api, out));
}

}  // namespace

extern "C" {

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice device) {
  anydev_emu::Device* d = nullptr;
  if (const CUresult r = anydev_emu::get_device(device, &d); r != CUDA_SUCCESS) return r;
  if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!core::get_config().memory_pools) return CUDA_ERROR_NOT_SUPPORTED;
  *pool = static_cast<CUmemoryPool>(core::to_handle(d->default_pool));
  return CUDA_SUCCESS;
}

CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (pool == nullptr || props == nullptr) return misuse("cuMemPoolCreate: null argument");
  if (!core::get_config().memory_pools) return CUDA_ERROR_NOT_SUPPORTED;
  core::Pool* created = nullptr;
  if (const CUresult r = cu(core::create_pool(props->allocType == CU_MEM_ALLOCATION_TYPE_PINNED,
                                              props->handleTypes == CU_MEM_HANDLE_TYPE_NONE,
                                              props->location.type == CU_MEM_LOCATION_TYPE_DEVICE,
                                              props->location.id, "cuMemPoolCreate", &created));
      r != CUDA_SUCCESS) {
    return r;
  }
  *pool = static_cast<CUmemoryPool>(core::to_handle(created));
  return CUDA_SUCCESS;
}

// Memory still allocated from the pool stays valid and may be freed later;
// the real driver releases the pool's resources once it is all freed.
CUresult cuMemPoolDestroy(CUmemoryPool handle) {
  core::Pool* pool = nullptr;
  if (const CUresult r = pool_of(handle, "cuMemPoolDestroy", &pool); r != CUDA_SUCCESS) return r;
  return cu(core::destroy_pool(pool, "cuMemPoolDestroy"));
}

CUresult cuMemPoolSetAttribute(CUmemoryPool handle, CUmemPool_attribute attribute, void* value) {
  core::Pool* pool = nullptr;
  if (const CUresult r = pool_of(handle, "cuMemPoolSetAttribute", &pool); r != CUDA_SUCCESS) {
    return r;
  }
  return cu(core::set_pool_attribute(pool, attribute, value, "cuMemPoolSetAttribute"));
}

CUresult cuMemPoolGetAttribute(CUmemoryPool handle, CUmemPool_attribute attribute, void* value) {
  core::Pool* pool = nullptr;
  if (const CUresult r = pool_of(handle, "cuMemPoolGetAttribute", &pool); r != CUDA_SUCCESS) {
    return r;
  }
  return cu(core::get_pool_attribute(pool, attribute, value, "cuMemPoolGetAttribute"));
}

CUresult cuMemPoolSetAccess(CUmemoryPool handle, const CUmemAccessDesc* map, size_t count) {
  core::Pool* pool = nullptr;
  if (const CUresult r = pool_of(handle, "cuMemPoolSetAccess", &pool); r != CUDA_SUCCESS) return r;
  return cu(
      core::set_pool_access(pool, map, count, CU_MEM_LOCATION_TYPE_DEVICE, "cuMemPoolSetAccess"));
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool handle,
                            CUmemLocation* location) {
  core::Pool* pool = nullptr;
  if (const CUresult r = pool_of(handle, "cuMemPoolGetAccess", &pool); r != CUDA_SUCCESS) return r;
  if (flags == nullptr || location == nullptr || !is_device_location(*location)) {
    return misuse("cuMemPoolGetAccess: null flags or not a device location");
  }
  *flags = static_cast<CUmemAccess_flags>(core::pool_access(pool, location->id));
  return CUDA_SUCCESS;
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr* out, size_t bytes, CUmemoryPool handle,
                                 CUstream stream) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (!core::get_config().memory_pools) return CUDA_ERROR_NOT_SUPPORTED;
  core::Pool* pool = nullptr;
  if (const CUresult r = pool_of(handle, "cuMemAllocFromPoolAsync", &pool); r != CUDA_SUCCESS) {
    return r;
  }
  anydev_emu::StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuMemAllocFromPoolAsync", &s);
      r != CUDA_SUCCESS) {
    return r;
  }
  // The memory is usable by work enqueued after this call: allocate now.
  return anydev_emu::allocate_device(pool->device, bytes, out, "cuMemAllocFromPoolAsync", pool);
}

CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr address) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (data == nullptr) return misuse("cuPointerGetAttribute: null data");
  const core::BlockRef block = core::find_containing(address);
  if (block == nullptr) return CUDA_ERROR_INVALID_VALUE;  // not memory of this driver
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      *static_cast<CUmemoryPool*>(data) = static_cast<CUmemoryPool>(core::to_handle(block->pool));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int*>(data) = block->device;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned int*>(data) =
          block->device >= 0 ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      return CUDA_SUCCESS;
    default:
      return misuse("cuPointerGetAttribute: attribute " +
                    std::to_string(static_cast<int>(attribute)) + " is not emulated");
  }
}

}  // extern "C"
