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
  if (const CUresult r = anydev_emu::CheckInitialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::RequireCurrent("cuMemGetInfo", &c); r != CUDA_SUCCESS) {
    return r;
  }
  if (free_bytes == nullptr || total_bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *total_bytes = anydev_emu::GetConfig().memory_bytes;
  *free_bytes = *total_bytes - anydev_emu::DeviceBytesInUse(c->device);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr* out, size_t bytes) {
  if (const CUresult r = anydev_emu::CheckInitialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::RequireCurrent("cuMemAlloc", &c); r != CUDA_SUCCESS) return r;
  return anydev_emu::AllocateDevice(c->device, bytes, out, "cuMemAlloc");
}

CUresult cuMemFree(CUdeviceptr address) {
  if (const CUresult r = anydev_emu::CheckInitialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::RequireCurrent("cuMemFree", &c); r != CUDA_SUCCESS) return r;
  BlockRef block;
  if (const CUresult r = anydev_emu::TakeDeviceBlock(address, "cuMemFree", &block);
      r != CUDA_SUCCESS) {
    return r;
  }
  anydev_emu::ReleaseDeviceBlock(block);
  return CUDA_SUCCESS;
}

CUresult cuMemAllocAsync(CUdeviceptr* out, size_t bytes, CUstream stream) {
  if (const CUresult r = anydev_emu::CheckInitialized(); r != CUDA_SUCCESS) return r;
  if (!anydev_emu::GetConfig().memory_pools) return CUDA_ERROR_NOT_SUPPORTED;
  StreamRef s;
  if (const CUresult r = anydev_emu::LookupStream(stream, "cuMemAllocAsync", &s);
      r != CUDA_SUCCESS) {
    return r;
  }
  // The memory is usable by work enqueued after this call: allocate now.
  const int device = s->context()->device;
  return anydev_emu::AllocateDevice(device, bytes, out, "cuMemAllocAsync",
                                    anydev_emu::DeviceAt(device)->default_pool);
}

CUresult cuMemFreeAsync(CUdeviceptr address, CUstream stream) {
  if (const CUresult r = anydev_emu::CheckInitialized(); r != CUDA_SUCCESS) return r;
  if (!anydev_emu::GetConfig().memory_pools) return CUDA_ERROR_NOT_SUPPORTED;
  StreamRef s;
  if (const CUresult r = anydev_emu::LookupStream(stream, "cuMemFreeAsync", &s);
      r != CUDA_SUCCESS) {
    return r;
  }
  BlockRef block;
  if (const CUresult r = anydev_emu::TakeDeviceBlock(address, "cuMemFreeAsync", &block);
      r != CUDA_SUCCESS) {
    return r;
  }
  s->Enqueue("cuMemFreeAsync", [block] {
    anydev_emu::ReleaseDeviceBlock(block);
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

CUresult cuMemHostAlloc(void** out, size_t bytes, unsigned int flags) {
  if (const CUresult r = anydev_emu::CheckInitialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::RequireCurrent("cuMemHostAlloc", &c); r != CUDA_SUCCESS) {
    return r;
  }
  constexpr unsigned int kKnown =
      CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
  if ((flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  return anydev_emu::AllocatePinned(bytes, out, "cuMemHostAlloc");
}

CUresult cuMemFreeHost(void* address) {
  if (const CUresult r = anydev_emu::CheckInitialized(); r != CUDA_SUCCESS) return r;
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::RequireCurrent("cuMemFreeHost", &c); r != CUDA_SUCCESS) {
    return r;
  }
  return anydev_emu::FreePinned(address, "cuMemFreeHost");
}

}  // extern "C"
