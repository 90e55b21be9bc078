// SPDX-License-Identifier: Apache-2.0
// Pinned host memory (cuMemHostAlloc, portable) and device memory
// (stream-ordered from anydev's pool on the device, or cuMemAlloc).
#include <cuda.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "cuda_entries.h"
#include "cuda_errors.h"
#include "cuda_objects.h"
#include "cuda_state.h"

namespace anydev::cuda {
namespace {

CUdeviceptr to_device_ptr(void* handle) {
  return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(handle));
}

void* to_handle(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)); }

std::size_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return SIZE_MAX;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size);
}

// A real driver may answer CUDA_ERROR_INVALID_VALUE, not OUT_OF_MEMORY, for a
// size it can never satisfy (cuda.h lists it for cuMemHostAlloc and
// cuMemAllocAsync). The backend passes every other argument valid, so for a
// request larger than all the memory there is (`limit` bytes of `what`) that
// is out of memory, like any other size too large.
anydev_status_t allocation_failure(CUresult r, const char* call, std::size_t bytes,
                                   std::size_t limit, const char* what,
                                   const std::string& operation) {
  if (r == CUDA_ERROR_INVALID_VALUE && bytes > limit) {
    return report_failure(ANYDEV_ERROR_OUT_OF_MEMORY, r, call,
                          cat(operation, " (more than the ", limit, " bytes of ", what,
                              " there are: out of memory)"));
  }
  return report_failure(r, call, operation);
}

}  // namespace

anydev_status_t host_alloc(int device, std::size_t bytes, void** handle, void** address) {
  if (handle == nullptr || address == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "host_alloc: null out");
  }
  ScopedContext scope;
  if (const anydev_status_t s = scope.enter(device, "host_alloc"); s != ANYDEV_SUCCESS) return s;
  void* p = nullptr;
  const CUresult r = driver().MemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE);
  if (r != CUDA_SUCCESS) {
    return allocation_failure(
        r, "cuMemHostAlloc", bytes, physical_memory(), "host memory",
        cat("host_alloc of ", bytes, " bytes of pinned memory for cuda device ", device));
  }
  *handle = p;
  *address = p;
  return ANYDEV_SUCCESS;
}

anydev_status_t device_alloc(int device, std::size_t bytes, anydev_bk_stream_t stream_token,
                             void** handle, void** address) {
  if (handle == nullptr || address == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "device_alloc: null out");
  }
  if (const anydev_status_t s = check_device(device, "device_alloc"); s != ANYDEV_SUCCESS) return s;
  const DeviceState& d = *backend_state().devices[static_cast<std::size_t>(device)];
  const CudaStream* stream = as_stream(stream_token);
  if (d.memory_pools && stream == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "device_alloc: null stream");
  }
  if (stream != nullptr && stream->device != device) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("device_alloc on cuda device ", device,
                            " ordered on a stream of device ", stream->device));
  }
  ScopedContext scope;
  if (const anydev_status_t s = scope.enter(device, "device_alloc"); s != ANYDEV_SUCCESS) return s;
  CUdeviceptr p = 0;
  const CUresult r = d.memory_pools
                         ? driver().MemAllocFromPoolAsync(&p, bytes, d.pool, stream->native)
                         : driver().MemAlloc(&p, bytes);
  if (r != CUDA_SUCCESS) {
    return allocation_failure(r, d.memory_pools ? "cuMemAllocFromPoolAsync" : "cuMemAlloc", bytes,
                              d.total_memory, "device memory",
                              cat("device_alloc of ", bytes, " bytes on cuda device ", device));
  }
  *handle = to_handle(p);
  *address = to_handle(p);
  return ANYDEV_SUCCESS;
}

// The core calls this only once every operation on the memory has completed.
// cuMemFree does not synchronize for stream-ordered memory; for cuMemAlloc
// memory and for cuMemFreeHost the driver may synchronize the device.
anydev_status_t memory_free(int device, anydev_bk_memory_kind_t kind, void* handle) {
  if (handle == nullptr) return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "memory_free: null");
  ScopedContext scope;
  if (const anydev_status_t s = scope.enter(device, "memory_free"); s != ANYDEV_SUCCESS) return s;
  CUresult r = CUDA_SUCCESS;
  switch (kind) {
    case ANYDEV_BK_MEMORY_HOST:
      if ((r = driver().MemFreeHost(handle)) != CUDA_SUCCESS) {
        return report_failure(
            r, "cuMemFreeHost",
            cat("memory_free of pinned memory ", handle, " (cuda device ", device, ")"));
      }
      return ANYDEV_SUCCESS;
    case ANYDEV_BK_MEMORY_DEVICE:
      if ((r = driver().MemFree(to_device_ptr(handle))) != CUDA_SUCCESS) {
        return report_failure(
            r, "cuMemFree",
            cat("memory_free of device memory ", handle, " on cuda device ", device));
      }
      return ANYDEV_SUCCESS;
    default:
      return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                          cat("memory_free: memory kind ", static_cast<int>(kind),
                              " was not allocated by the cuda backend"));
  }
}

anydev_status_t memory_free_async(int device, void* handle, anydev_bk_stream_t stream_token) {
  const CudaStream* stream = as_stream(stream_token);
  if (handle == nullptr || stream == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "memory_free_async: null memory or stream");
  }
  if (const anydev_status_t s = check_device(device, "memory_free_async"); s != ANYDEV_SUCCESS) {
    return s;
  }
  // Without memory pools there is no cuMemFreeAsync for cuMemAlloc memory:
  // declined, and the core's stream-ordered release calls memory_free.
  if (!backend_state().devices[static_cast<std::size_t>(device)]->memory_pools) {
    return ANYDEV_BK_DECLINED;
  }
  const CUresult r =
      call_on_stream(stream->device, names_its_context(stream->native), "memory_free_async",
                     [&] { return driver().MemFreeAsync(to_device_ptr(handle), stream->native); });
  if (r != CUDA_SUCCESS) {
    return report_failure(r, "cuMemFreeAsync",
                          cat("memory_free_async of device memory ", handle, " (cuda device ",
                              device, ") on a stream of device ", stream->device));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cuda
