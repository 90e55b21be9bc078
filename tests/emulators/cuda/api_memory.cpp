// SPDX-License-Identifier: Apache-2.0
// Device memory (cuMemAlloc, stream-ordered cuMemAllocAsync from the default
// pool), pinned host memory and memory info. Other pools: api_pool.cpp.
#include <cuda.h>

#include <string>

#include "emu_config.h"
#include "emu_memory.h"
#include "emu_state.h"
#include "emu_stream.h"

using anydev_emu::BlockRef;
using anydev_emu::Context;
using anydev_emu::StreamRef;

extern "C" {

CUresult cuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemGetInfo", &c); r != CUDA_SUCCESS) {
    return r;
  }
  if (free_bytes == nullptr || total_bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *total_bytes = anydev_emu::get_config().memory_bytes;
  *free_bytes = *total_bytes - anydev_emu::device_bytes_in_use(c->device);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr* out, size_t bytes) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemAlloc", &c); r != CUDA_SUCCESS) return r;
  return anydev_emu::allocate_device(c->device, bytes, out, "cuMemAlloc");
}

CUresult cuMemFree(CUdeviceptr address) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemFree", &c); r != CUDA_SUCCESS) return r;
  BlockRef block;
  if (const CUresult r = anydev_emu::take_device_block(address, "cuMemFree", &block);
      r != CUDA_SUCCESS) {
    return r;
  }
  anydev_emu::release_device_block(block);
  return CUDA_SUCCESS;
}

CUresult cuMemAllocAsync(CUdeviceptr* out, size_t bytes, CUstream stream) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (!anydev_emu::get_config().memory_pools) return CUDA_ERROR_NOT_SUPPORTED;
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuMemAllocAsync", &s);
      r != CUDA_SUCCESS) {
    return r;
  }
  // The memory is usable by work enqueued after this call: allocate now.
  const int device = s->context()->device;
  return anydev_emu::allocate_device(device, bytes, out, "cuMemAllocAsync",
                                     anydev_emu::device_at(device)->default_pool);
}

CUresult cuMemFreeAsync(CUdeviceptr address, CUstream stream) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (!anydev_emu::get_config().memory_pools) return CUDA_ERROR_NOT_SUPPORTED;
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, "cuMemFreeAsync", &s);
      r != CUDA_SUCCESS) {
    return r;
  }
  BlockRef block;
  if (const CUresult r = anydev_emu::take_device_block(address, "cuMemFreeAsync", &block);
      r != CUDA_SUCCESS) {
    return r;
  }
  s->enqueue("cuMemFreeAsync", [block] {
    anydev_emu::release_device_block(block);
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

CUresult cuMemHostAlloc(void** out, size_t bytes, unsigned int flags) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemHostAlloc", &c); r != CUDA_SUCCESS) {
    return r;
  }
  constexpr unsigned int kKnown =
      CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
  if ((flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  return anydev_emu::allocate_pinned(bytes, out, "cuMemHostAlloc");
}

CUresult cuMemFreeHost(void* address) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemFreeHost", &c); r != CUDA_SUCCESS) {
    return r;
  }
  return anydev_emu::free_pinned(address, "cuMemFreeHost");
}

}  // extern "C"
