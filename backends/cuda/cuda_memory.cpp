// Pinned host memory (cuMemHostAlloc, portable) and device memory
// (stream-ordered from anydev's pool on the device, or cuMemAlloc).
#include <cuda.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "cuda_deferred_free.h"
#include "cuda_entries.h"
#include "cuda_errors.h"
#include "cuda_objects.h"
#include "cuda_state.h"

namespace anydev::cuda {
namespace {

CUdeviceptr ToDevicePtr(void* handle) {
  return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(handle));
}

void* ToHandle(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)); }

std::size_t PhysicalMemory() {
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
anydev_status_t AllocationFailure(CUresult r, const char* call, std::size_t bytes,
                                  std::size_t limit, const char* what,
                                  const std::string& operation) {
  if (r == CUDA_ERROR_INVALID_VALUE && bytes > limit) {
    return ReportFailure(ANYDEV_ERROR_OUT_OF_MEMORY, r, call,
                         cat(operation, " (more than the ", limit, " bytes of ", what,
                             " there are: out of memory)"));
  }
  return ReportFailure(r, call, operation);
}

}  // namespace

anydev_status_t HostAlloc(int device, std::size_t bytes, void** handle, void** address) {
  if (handle == nullptr || address == nullptr) {
    return ReportError(ANYDEV_ERROR_INVALID_ARGUMENT, "host_alloc: null out");
  }
  ScopedContext scope;
  if (const anydev_status_t s = scope.Enter(device, "host_alloc"); s != ANYDEV_SUCCESS) return s;
  void* p = nullptr;
  const CUresult r = Driver().MemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE);
  if (r != CUDA_SUCCESS) {
    return AllocationFailure(
        r, "cuMemHostAlloc", bytes, PhysicalMemory(), "host memory",
        cat("host_alloc of ", bytes, " bytes of pinned memory for cuda device ", device));
  }
  *handle = p;
  *address = p;
  return ANYDEV_SUCCESS;
}

anydev_status_t DeviceAlloc(int device, std::size_t bytes, anydev_bk_stream_t stream_token,
                            void** handle, void** address) {
  if (handle == nullptr || address == nullptr) {
    return ReportError(ANYDEV_ERROR_INVALID_ARGUMENT, "device_alloc: null out");
  }
  if (const anydev_status_t s = CheckDevice(device, "device_alloc"); s != ANYDEV_SUCCESS) return s;
  const DeviceState& d = *State().devices[static_cast<std::size_t>(device)];
  const CudaStream* stream = AsStream(stream_token);
  if (d.memory_pools && stream == nullptr) {
    return ReportError(ANYDEV_ERROR_INVALID_ARGUMENT, "device_alloc: null stream");
  }
  if (stream != nullptr && stream->device != device) {
    return ReportError(ANYDEV_ERROR_INVALID_ARGUMENT,
                       cat("device_alloc on cuda device ", device,
                           " ordered on a stream of device ", stream->device));
  }
  ScopedContext scope;
  if (const anydev_status_t s = scope.Enter(device, "device_alloc"); s != ANYDEV_SUCCESS) return s;
  CUdeviceptr p = 0;
  const CUresult r = d.memory_pools
                         ? Driver().MemAllocFromPoolAsync(&p, bytes, d.pool, stream->native)
                         : Driver().MemAlloc(&p, bytes);
  if (r != CUDA_SUCCESS) {
    return AllocationFailure(r, d.memory_pools ? "cuMemAllocFromPoolAsync" : "cuMemAlloc", bytes,
                             d.total_memory, "device memory",
                             cat("device_alloc of ", bytes, " bytes on cuda device ", device));
  }
  *handle = ToHandle(p);
  *address = ToHandle(p);
  return ANYDEV_SUCCESS;
}

// The core calls this only once every operation on the memory has completed.
// cuMemFree does not synchronize for stream-ordered memory; for cuMemAlloc
// memory and for cuMemFreeHost the driver may synchronize the device.
anydev_status_t MemoryFree(int device, anydev_bk_memory_kind_t kind, void* handle) {
  if (handle == nullptr) return ReportError(ANYDEV_ERROR_INVALID_ARGUMENT, "memory_free: null");
  ScopedContext scope;
  if (const anydev_status_t s = scope.Enter(device, "memory_free"); s != ANYDEV_SUCCESS) return s;
  CUresult r = CUDA_SUCCESS;
  switch (kind) {
    case ANYDEV_BK_MEMORY_HOST:
      if ((r = Driver().MemFreeHost(handle)) != CUDA_SUCCESS) {
        return ReportFailure(
            r, "cuMemFreeHost",
            cat("memory_free of pinned memory ", handle, " (cuda device ", device, ")"));
      }
      return ANYDEV_SUCCESS;
    case ANYDEV_BK_MEMORY_DEVICE:
      if ((r = Driver().MemFree(ToDevicePtr(handle))) != CUDA_SUCCESS) {
        return ReportFailure(
            r, "cuMemFree",
            cat("memory_free of device memory ", handle, " on cuda device ", device));
      }
      return ANYDEV_SUCCESS;
    default:
      return ReportError(ANYDEV_ERROR_INVALID_ARGUMENT,
                         cat("memory_free: memory kind ", static_cast<int>(kind),
                             " was not allocated by the cuda backend"));
  }
}

anydev_status_t MemoryFreeAsync(int device, void* handle, anydev_bk_stream_t stream_token) {
  const CudaStream* stream = AsStream(stream_token);
  if (handle == nullptr || stream == nullptr) {
    return ReportError(ANYDEV_ERROR_INVALID_ARGUMENT, "memory_free_async: null memory or stream");
  }
  if (const anydev_status_t s = CheckDevice(device, "memory_free_async"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (!State().devices[static_cast<std::size_t>(device)]->memory_pools) {
    return DeferredFree::Instance().Enqueue(device, ToDevicePtr(handle), stream->device,
                                            stream->native);
  }
  ScopedContext scope;
  if (const anydev_status_t s = scope.Enter(stream->device, "memory_free_async");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const CUresult r = Driver().MemFreeAsync(ToDevicePtr(handle), stream->native);
  if (r != CUDA_SUCCESS) {
    return ReportFailure(r, "cuMemFreeAsync",
                         cat("memory_free_async of device memory ", handle, " (cuda device ",
                             device, ") on a stream of device ", stream->device));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cuda
