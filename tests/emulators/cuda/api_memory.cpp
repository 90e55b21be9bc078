// SPDX-License-Identifier: Apache-2.0
// Device memory (cuMemAlloc, stream-ordered cuMemAllocAsync from the default
// pool), pinned host memory and memory info. Other pools: api_pool.cpp.
#include <cuda.h>

#include <cstdint>

#include "core_config.h"
#include "core_memory.h"
#include "core_transfer.h"
#include "emu_state.h"

using anydev_emu::Context;
using anydev_emu::cu;
using anydev_emu::StreamRef;
namespace core = anydev_emu::core;

namespace {

// The stream of a stream-ordered allocation call, when pools are on.
CUresult pool_stream(CUstream stream, const char* api, StreamRef* out) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (!core::get_config().memory_pools) return CUDA_ERROR_NOT_SUPPORTED;
  return anydev_emu::lookup_stream(stream, api, out);
}

}  // namespace

CUresult anydev_emu::allocate_device(int device, size_t bytes, CUdeviceptr* out, const char* api,
                                     core::Pool* pool) {
  if (out == nullptr) return cu(core::allocate_device(device, bytes, nullptr, api, pool));
  std::uintptr_t address = 0;
  const CUresult r = cu(core::allocate_device(device, bytes, &address, api, pool));
  if (r == CUDA_SUCCESS) *out = static_cast<CUdeviceptr>(address);
  return r;
}

extern "C" {

CUresult cuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemGetInfo", &c); r != CUDA_SUCCESS)
    return r;
  if (free_bytes == nullptr || total_bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  core::memory_info(c->device, free_bytes, total_bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr* out, size_t bytes) {
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemAlloc", &c); r != CUDA_SUCCESS) return r;
  return anydev_emu::allocate_device(c->device, bytes, out, "cuMemAlloc", nullptr);
}

CUresult cuMemFree(CUdeviceptr address) {
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemFree", &c); r != CUDA_SUCCESS) return r;
  return cu(core::free_device(static_cast<std::uintptr_t>(address), "cuMemFree"));
}

CUresult cuMemAllocAsync(CUdeviceptr* out, size_t bytes, CUstream stream) {
  StreamRef s;
  if (const CUresult r = pool_stream(stream, "cuMemAllocAsync", &s); r != CUDA_SUCCESS) return r;
  // The memory is usable by work enqueued after this call: allocate now.
  const int device = s->context()->device;
  return anydev_emu::allocate_device(device, bytes, out, "cuMemAllocAsync",
                                     core::device_at(device)->default_pool);
}

CUresult cuMemFreeAsync(CUdeviceptr address, CUstream stream) {
  StreamRef s;
  if (const CUresult r = pool_stream(stream, "cuMemFreeAsync", &s); r != CUDA_SUCCESS) return r;
  return cu(core::enqueue_free("cuMemFreeAsync", s, static_cast<std::uintptr_t>(address)));
}

CUresult cuMemHostAlloc(void** out, size_t bytes, unsigned int flags) {
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemHostAlloc", &c); r != CUDA_SUCCESS)
    return r;
  constexpr unsigned int kKnown =
      CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
  if ((flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  return cu(core::allocate_pinned(bytes, out, "cuMemHostAlloc"));
}

CUresult cuMemFreeHost(void* address) {
  Context* c = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuMemFreeHost", &c); r != CUDA_SUCCESS)
    return r;
  return cu(core::free_pinned(address, "cuMemFreeHost"));
}

}  // extern "C"
