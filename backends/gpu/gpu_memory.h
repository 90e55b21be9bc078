// SPDX-License-Identifier: Apache-2.0
// Pinned host memory (portable) and device memory (stream-ordered from
// anydev's pool on the device, or a plain allocation): host_alloc,
// device_alloc, memory_free and memory_free_async of a GPU backend.
// Thread-safe.
//
// Zero sizes and null frees have one defined behaviour in every GPU backend,
// whatever the vendor does with them (cuMemAlloc(0) fails while hipMalloc(0)
// and hipMallocAsync(0) succeed with a null pointer; hipFreeAsync(nullptr)
// succeeds): INVALID_ARGUMENT naming the operation, before any driver call.
#ifndef ANYDEV_BACKENDS_GPU_GPU_MEMORY_H_
#define ANYDEV_BACKENDS_GPU_GPU_MEMORY_H_

#include <unistd.h>

#include <cstdint>
#include <string>

#include "gpu_objects.h"
#include "gpu_state.h"

namespace anydev::gpu {

inline std::size_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return SIZE_MAX;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size);
}

// A real driver may answer an invalid-value error, not out of memory, for a
// size it can never satisfy (cuda.h lists it for cuMemHostAlloc and
// cuMemAllocAsync). The backend passes every other argument valid, so for a
// request larger than all the memory there is (`limit` bytes of `what`) that
// is out of memory, like any other size too large.
template <class Api>
[[gnu::cold]] anydev_status_t allocation_failure(typename Api::status_t r, const char* call,
                                                 std::size_t bytes, std::size_t limit,
                                                 const char* what, const std::string& operation) {
  if (r == Api::kInvalidValue && bytes > limit) {
    return report_failure<Api>(ANYDEV_ERROR_OUT_OF_MEMORY, r, call,
                               cat(operation, " (more than the ", limit, " bytes of ", what,
                                   " there are: out of memory)"));
  }
  return report_failure<Api>(r, call, operation);
}

template <class Api>
[[gnu::cold]] anydev_status_t zero_bytes(const char* operation, int device) {
  return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                           cat(operation, " of 0 bytes on ", Api::kName, " device ", device,
                               " (an allocation has at least one byte)"));
}

template <class Api>
anydev_status_t host_alloc(int device, std::size_t bytes, void** handle, void** address) {
  if (handle == nullptr || address == nullptr) return null_argument<Api>("host_alloc", "out");
  if (bytes == 0) return zero_bytes<Api>("host_alloc", device);
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "host_alloc"); s != ANYDEV_SUCCESS) return s;
  void* p = nullptr;
  const auto r = driver<Api>().MemHostAlloc(&p, bytes, Api::kHostAllocFlags);
  if (r != Api::kSuccess) {
    return allocation_failure<Api>(r, Api::driver_t::names::MemHostAlloc, bytes, physical_memory(),
                                   "host memory",
                                   cat("host_alloc of ", bytes, " bytes of pinned memory for ",
                                       Api::kName, " device ", device));
  }
  *handle = p;
  *address = p;
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t device_alloc(int device, std::size_t bytes, anydev_bk_stream_t stream_token,
                             void** handle, void** address) {
  using names = typename Api::driver_t::names;
  if (handle == nullptr || address == nullptr) return null_argument<Api>("device_alloc", "out");
  if (const anydev_status_t s = check_device<Api>(device, "device_alloc"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (bytes == 0) return zero_bytes<Api>("device_alloc", device);
  const DeviceState<Api>& d = device_state<Api>(device);
  const Stream<Api>* stream = as_stream<Api>(stream_token);
  if (d.memory_pools && stream == nullptr) return null_argument<Api>("device_alloc", "stream");
  if (stream != nullptr && stream->device != device) {
    return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                             cat("device_alloc on ", Api::kName, " device ", device,
                                 " ordered on a stream of device ", stream->device));
  }
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "device_alloc"); s != ANYDEV_SUCCESS) return s;
  typename Api::device_ptr p{};
  const auto& drv = driver<Api>();
  const auto r = d.memory_pools ? drv.MemAllocFromPoolAsync(&p, bytes, d.pool, stream->native)
                                : drv.MemAlloc(&p, bytes);
  if (r != Api::kSuccess) {
    return allocation_failure<Api>(
        r, d.memory_pools ? names::MemAllocFromPoolAsync : names::MemAlloc, bytes, d.total_memory,
        "device memory",
        cat("device_alloc of ", bytes, " bytes on ", Api::kName, " device ", device));
  }
  *handle = to_handle<Api>(p);
  *address = *handle;
  return ANYDEV_SUCCESS;
}

// The core calls this only once every operation on the memory has completed.
template <class Api>
anydev_status_t memory_free(int device, anydev_bk_memory_kind_t kind, void* handle) {
  using names = typename Api::driver_t::names;
  if (handle == nullptr) return null_argument<Api>("memory_free", "memory");
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "memory_free"); s != ANYDEV_SUCCESS) return s;
  const auto& drv = driver<Api>();
  switch (kind) {
    case ANYDEV_BK_MEMORY_HOST:
      if (const auto r = drv.MemFreeHost(handle); r != Api::kSuccess) {
        return report_failure<Api>(r, names::MemFreeHost,
                                   cat("memory_free of pinned memory ", handle, " (", Api::kName,
                                       " device ", device, ")"));
      }
      return ANYDEV_SUCCESS;
    case ANYDEV_BK_MEMORY_DEVICE:
      if (const auto r = drv.MemFree(device_address<Api>(handle)); r != Api::kSuccess) {
        return report_failure<Api>(
            r, names::MemFree,
            cat("memory_free of device memory ", handle, " on ", Api::kName, " device ", device));
      }
      return ANYDEV_SUCCESS;
    default:
      return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                               cat("memory_free: memory kind ", static_cast<int>(kind),
                                   " was not allocated by the ", Api::kName, " backend"));
  }
}

template <class Api>
anydev_status_t memory_free_async(int device, void* handle, anydev_bk_stream_t stream_token) {
  const Stream<Api>* stream = as_stream<Api>(stream_token);
  if (handle == nullptr || stream == nullptr) {
    return null_argument<Api>("memory_free_async", "memory or stream");
  }
  if (const anydev_status_t s = check_device<Api>(device, "memory_free_async");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  // Without memory pools there is no stream-ordered free for plain
  // allocations: declined, and the core's stream-ordered release calls
  // memory_free.
  if (!device_state<Api>(device).memory_pools) return ANYDEV_BK_DECLINED;
  const auto r = call_on_stream<Api>(
      stream->device, Api::names_its_device(stream->native), "memory_free_async",
      [&] { return driver<Api>().MemFreeAsync(device_address<Api>(handle), stream->native); });
  if (r != Api::kSuccess) {
    return report_failure<Api>(r, Api::driver_t::names::MemFreeAsync,
                               cat("memory_free_async of device memory ", handle, " (", Api::kName,
                                   " device ", device, ") on a stream of device ", stream->device));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_MEMORY_H_
