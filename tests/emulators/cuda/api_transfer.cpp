// SPDX-License-Identifier: Apache-2.0
// Copies and memsets, queued by the core (core_transfer.h) on the stream's
// worker: checked when enqueued (CUDA_ERROR_INVALID_VALUE) and when run
// (CUDA_ERROR_ILLEGAL_ADDRESS for memory freed in between).
#include <cuda.h>

#include <cstdint>

#include "core_config.h"
#include "core_transfer.h"
#include "emu_state.h"

using anydev_emu::cu;
using anydev_emu::core::Access;
namespace core = anydev_emu::core;

namespace {

CUresult enqueue_copy(const char* api, CUstream stream, std::uintptr_t dst, Access dst_access,
                      std::uintptr_t src, Access src_access, size_t bytes) {
  core::StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, api, &s); r != CUDA_SUCCESS) return r;
  return cu(core::enqueue_copy(api, s, dst, dst_access, src, src_access, bytes));
}

CUresult enqueue_memset(const char* api, CUstream stream, CUdeviceptr dst, std::uint32_t value,
                        size_t element, size_t width, size_t height, size_t pitch) {
  core::StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, api, &s); r != CUDA_SUCCESS) return r;
  return cu(core::enqueue_memset(api, s, static_cast<std::uintptr_t>(dst), value, element, width,
                                 height, pitch));
}

std::uintptr_t U(CUdeviceptr p) { return static_cast<std::uintptr_t>(p); }
std::uintptr_t U(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace

extern "C" {

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return enqueue_copy("cuMemcpyAsync", stream, U(dst), Access::kAny, U(src), Access::kAny, bytes);
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) {
  return enqueue_copy("cuMemcpyHtoDAsync", stream, U(dst), Access::kDeviceOrPinned, U(src),
                      Access::kHost, bytes);
}

CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return enqueue_copy("cuMemcpyDtoHAsync", stream, U(dst), Access::kHost, U(src),
                      Access::kDeviceOrPinned, bytes);
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_context, CUdeviceptr src,
                           CUcontext src_context, size_t bytes, CUstream stream) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  anydev_emu::Context* to = anydev_emu::as_context(dst_context);
  anydev_emu::Context* from = anydev_emu::as_context(src_context);
  if (to == nullptr || from == nullptr) {
    core::report_misuse("cuMemcpyPeerAsync: not a context of this driver");
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  // Each pointer must be device memory of its context's device.
  if (const CUresult r = cu(core::check_peer_copy("cuMemcpyPeerAsync", U(dst), to->device, U(src),
                                                  from->device, bytes));
      r != CUDA_SUCCESS) {
    return r;
  }
  return enqueue_copy("cuMemcpyPeerAsync", stream, U(dst), Access::kDeviceOrPinned, U(src),
                      Access::kDeviceOrPinned, bytes);
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream) {
  return enqueue_memset("cuMemsetD8Async", stream, dst, value, 1, count, 1, 0);
}

CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count, CUstream stream) {
  return enqueue_memset("cuMemsetD16Async", stream, dst, value, 2, count, 1, 0);
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream) {
  return enqueue_memset("cuMemsetD32Async", stream, dst, value, 4, count, 1, 0);
}

CUresult cuMemsetD2D32Async(CUdeviceptr dst, size_t pitch, unsigned int value, size_t width,
                            size_t height, CUstream stream) {
  return enqueue_memset("cuMemsetD2D32Async", stream, dst, value, 4, width, height, pitch);
}

}  // extern "C"
