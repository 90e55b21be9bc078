// SPDX-License-Identifier: Apache-2.0
// Memory pools: the default pool, cuMemPoolCreate/Destroy, their attributes
// and access, allocation from a pool, and the pointer attributes that say
// where memory came from.
#include <cuda.h>

#include <string>

#include "emu_config.h"
#include "emu_memory.h"
#include "emu_pool.h"
#include "emu_state.h"
#include "emu_stream.h"

using anydev_emu::Pool;

namespace {

CUresult misuse(const std::string& message) {
  anydev_emu::report_misuse(message);
  return CUDA_ERROR_INVALID_VALUE;
}

bool is_device_location(const CUmemLocation& location) {
  return location.type == CU_MEM_LOCATION_TYPE_DEVICE && location.id >= 0 &&
         location.id < anydev_emu::device_count();
}

}  // namespace

extern "C" {

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice device) {
  anydev_emu::Device* d = nullptr;
  if (const CUresult r = anydev_emu::get_device(device, &d); r != CUDA_SUCCESS) return r;
  if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!anydev_emu::get_config().memory_pools) return CUDA_ERROR_NOT_SUPPORTED;
  *pool = anydev_emu::to_handle(d->default_pool);
  return CUDA_SUCCESS;
}

CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (pool == nullptr || props == nullptr) return misuse("cuMemPoolCreate: null argument");
  if (!anydev_emu::get_config().memory_pools) return CUDA_ERROR_NOT_SUPPORTED;
  if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED) {
    return misuse("cuMemPoolCreate: allocType is not CU_MEM_ALLOCATION_TYPE_PINNED");
  }
  if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE) {
    return misuse("cuMemPoolCreate: only handleTypes CU_MEM_HANDLE_TYPE_NONE is emulated");
  }
  if (!is_device_location(props->location)) {
    return misuse("cuMemPoolCreate: the location is not a device of this driver");
  }
  *pool = anydev_emu::to_handle(anydev_emu::create_pool(props->location.id, false));
  return CUDA_SUCCESS;
}

// Memory still allocated from the pool stays valid and may be freed later;
// the real driver releases the pool's resources once it is all freed.
CUresult cuMemPoolDestroy(CUmemoryPool handle) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Pool* pool = nullptr;
  if (const CUresult r = anydev_emu::lookup_pool(handle, "cuMemPoolDestroy", &pool);
      r != CUDA_SUCCESS) {
    return r;
  }
  std::lock_guard<std::mutex> lock(pool->mutex);
  if (pool->is_default) {
    return misuse("cuMemPoolDestroy: the default pool of device " + std::to_string(pool->device) +
                  " cannot be destroyed");
  }
  pool->destroyed = true;
  return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool handle, CUmemPool_attribute attribute, void* value) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Pool* pool = nullptr;
  if (const CUresult r = anydev_emu::lookup_pool(handle, "cuMemPoolSetAttribute", &pool);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (value == nullptr) return misuse("cuMemPoolSetAttribute: null value");
  std::lock_guard<std::mutex> lock(pool->mutex);
  switch (attribute) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      pool->release_threshold = *static_cast<const cuuint64_t*>(value);
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      pool->reuse_flags[attribute - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] =
          *static_cast<const int*>(value);
      return CUDA_SUCCESS;
    default:
      return misuse("cuMemPoolSetAttribute: attribute " +
                    std::to_string(static_cast<int>(attribute)) + " is not emulated");
  }
}

CUresult cuMemPoolGetAttribute(CUmemoryPool handle, CUmemPool_attribute attribute, void* value) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Pool* pool = nullptr;
  if (const CUresult r = anydev_emu::lookup_pool(handle, "cuMemPoolGetAttribute", &pool);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (value == nullptr) return misuse("cuMemPoolGetAttribute: null value");
  std::lock_guard<std::mutex> lock(pool->mutex);
  switch (attribute) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      *static_cast<cuuint64_t*>(value) = pool->release_threshold;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      *static_cast<int*>(value) =
          pool->reuse_flags[attribute - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
      return CUDA_SUCCESS;
    default:
      return misuse("cuMemPoolGetAttribute: attribute " +
                    std::to_string(static_cast<int>(attribute)) + " is not emulated");
  }
}

CUresult cuMemPoolSetAccess(CUmemoryPool handle, const CUmemAccessDesc* map, size_t count) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Pool* pool = nullptr;
  if (const CUresult r = anydev_emu::lookup_pool(handle, "cuMemPoolSetAccess", &pool);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (map == nullptr && count > 0) return misuse("cuMemPoolSetAccess: null map");
  for (size_t i = 0; i < count; ++i) {
    if (!is_device_location(map[i].location)) {
      return misuse("cuMemPoolSetAccess: a location is not a device of this driver");
    }
    if (map[i].location.id == pool->device && map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
      return misuse("cuMemPoolSetAccess: the pool's own device " + std::to_string(pool->device) +
                    " always has read-write access");
    }
  }
  std::lock_guard<std::mutex> lock(pool->mutex);
  for (size_t i = 0; i < count; ++i) {
    if (map[i].location.id == pool->device) continue;
    if (map[i].flags == CU_MEM_ACCESS_FLAGS_PROT_NONE) {
      pool->access.erase(map[i].location.id);
    } else {
      pool->access.insert(map[i].location.id);
    }
  }
  return CUDA_SUCCESS;
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool handle,
                            CUmemLocation* location) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Pool* pool = nullptr;
  if (const CUresult r = anydev_emu::lookup_pool(handle, "cuMemPoolGetAccess", &pool);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (flags == nullptr || location == nullptr || !is_device_location(*location)) {
    return misuse("cuMemPoolGetAccess: null flags or not a device location");
  }
  std::lock_guard<std::mutex> lock(pool->mutex);
  *flags = location->id == pool->device || pool->access.count(location->id) != 0
               ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
               : CU_MEM_ACCESS_FLAGS_PROT_NONE;
  return CUDA_SUCCESS;
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr* out, size_t bytes, CUmemoryPool handle,
                                 CUstream stream) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (!anydev_emu::get_config().memory_pools) return CUDA_ERROR_NOT_SUPPORTED;
  Pool* pool = nullptr;
  if (const CUresult r = anydev_emu::lookup_pool(handle, "cuMemAllocFromPoolAsync", &pool);
      r != CUDA_SUCCESS) {
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
  const anydev_emu::BlockRef block = anydev_emu::find_containing(address);
  if (block == nullptr) return CUDA_ERROR_INVALID_VALUE;  // not memory of this driver
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      *static_cast<CUmemoryPool*>(data) = anydev_emu::to_handle(block->pool);
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
