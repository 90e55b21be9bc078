// SPDX-License-Identifier: Apache-2.0
// Copies and memsets, run in order on the stream's worker. Pointers are
// checked when the operation is enqueued (CUDA_ERROR_INVALID_VALUE) and again
// when it runs: memory freed in between makes the stream fail with
// CUDA_ERROR_ILLEGAL_ADDRESS.
#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "emu_config.h"
#include "emu_memory.h"
#include "emu_state.h"
#include "emu_stream.h"

using anydev_emu::Access;
using anydev_emu::Span;
using anydev_emu::StreamRef;

namespace {

CUresult freed(const char* api, const Span& span) {
  anydev_emu::report_misuse(std::string(api) + ": " + span.describe() +
                            " was freed before the operation ran");
  return CUDA_ERROR_ILLEGAL_ADDRESS;
}

CUresult enqueue_copy(const char* api, CUstream stream, std::uintptr_t dst, Access dst_access,
                      std::uintptr_t src, Access src_access, size_t bytes) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, api, &s); r != CUDA_SUCCESS) return r;
  if (bytes == 0) return CUDA_SUCCESS;
  Span to;
  Span from;
  if (const CUresult r = anydev_emu::resolve(dst, bytes, dst_access, api, &to); r != CUDA_SUCCESS) {
    return r;
  }
  if (const CUresult r = anydev_emu::resolve(src, bytes, src_access, api, &from);
      r != CUDA_SUCCESS) {
    return r;
  }
  s->enqueue(api, [api, to, from, bytes] {
    std::byte* d = to.bytes();
    const std::byte* f = from.bytes();
    if (d == nullptr) return freed(api, to);
    if (f == nullptr) return freed(api, from);
    std::memmove(d, f, bytes);
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

// Writes `width` elements of `element` bytes (the low bytes of `value`) in
// each of `height` rows `pitch` bytes apart.
CUresult enqueue_memset(const char* api, CUstream stream, CUdeviceptr dst, std::uint32_t value,
                        size_t element, size_t width, size_t height, size_t pitch) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, api, &s); r != CUDA_SUCCESS) return r;
  if (width == 0 || height == 0) return CUDA_SUCCESS;
  if (dst % element != 0 || (height > 1 && (pitch % element != 0 || pitch < width * element))) {
    anydev_emu::report_misuse(std::string(api) + ": misaligned address or pitch");
    return CUDA_ERROR_INVALID_VALUE;
  }
  const size_t extent = (height - 1) * pitch + width * element;
  Span span;
  if (const CUresult r = anydev_emu::resolve(static_cast<std::uintptr_t>(dst), extent,
                                             Access::kDeviceOrPinned, api, &span);
      r != CUDA_SUCCESS) {
    return r;
  }
  s->enqueue(api, [api, span, value, element, width, height, pitch] {
    std::byte* base = span.bytes();
    if (base == nullptr) return freed(api, span);
    if (element == 1 && height == 1) {
      std::memset(base, static_cast<int>(value & 0xff), width);
      return CUDA_SUCCESS;
    }
    for (size_t row = 0; row < height; ++row) {
      std::byte* p = base + row * pitch;
      for (size_t i = 0; i < width; ++i) std::memcpy(p + i * element, &value, element);
    }
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
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
    anydev_emu::report_misuse("cuMemcpyPeerAsync: not a context of this driver");
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  // Each pointer must be device memory of its context's device.
  Span d;
  Span s;
  if (bytes > 0) {
    if (const CUresult r =
            anydev_emu::resolve(U(dst), bytes, Access::kDeviceOrPinned, "cuMemcpyPeerAsync", &d);
        r != CUDA_SUCCESS) {
      return r;
    }
    if (const CUresult r =
            anydev_emu::resolve(U(src), bytes, Access::kDeviceOrPinned, "cuMemcpyPeerAsync", &s);
        r != CUDA_SUCCESS) {
      return r;
    }
    if (d.block->device != to->device || s.block->device != from->device) {
      anydev_emu::report_misuse(
          "cuMemcpyPeerAsync: a pointer is not memory of its context's device");
      return CUDA_ERROR_INVALID_VALUE;
    }
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
