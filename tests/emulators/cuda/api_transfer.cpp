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

CUresult Freed(const char* api, const Span& span) {
  anydev_emu::ReportMisuse(std::string(api) + ": " + span.Describe() +
                           " was freed before the operation ran");
  return CUDA_ERROR_ILLEGAL_ADDRESS;
}

CUresult EnqueueCopy(const char* api, CUstream stream, std::uintptr_t dst, Access dst_access,
                     std::uintptr_t src, Access src_access, size_t bytes) {
  if (const CUresult r = anydev_emu::CheckInitialized(); r != CUDA_SUCCESS) return r;
  StreamRef s;
  if (const CUresult r = anydev_emu::LookupStream(stream, api, &s); r != CUDA_SUCCESS) return r;
  if (bytes == 0) return CUDA_SUCCESS;
  Span to;
  Span from;
  if (const CUresult r = anydev_emu::Resolve(dst, bytes, dst_access, api, &to); r != CUDA_SUCCESS) {
    return r;
  }
  if (const CUresult r = anydev_emu::Resolve(src, bytes, src_access, api, &from);
      r != CUDA_SUCCESS) {
    return r;
  }
  s->Enqueue(api, [api, to, from, bytes] {
    std::byte* d = to.Bytes();
    const std::byte* f = from.Bytes();
    if (d == nullptr) return Freed(api, to);
    if (f == nullptr) return Freed(api, from);
    std::memmove(d, f, bytes);
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

// Writes `width` elements of `element` bytes (the low bytes of `value`) in
// each of `height` rows `pitch` bytes apart.
CUresult EnqueueMemset(const char* api, CUstream stream, CUdeviceptr dst, std::uint32_t value,
                       size_t element, size_t width, size_t height, size_t pitch) {
  if (const CUresult r = anydev_emu::CheckInitialized(); r != CUDA_SUCCESS) return r;
  StreamRef s;
  if (const CUresult r = anydev_emu::LookupStream(stream, api, &s); r != CUDA_SUCCESS) return r;
  if (width == 0 || height == 0) return CUDA_SUCCESS;
  if (dst % element != 0 || (height > 1 && (pitch % element != 0 || pitch < width * element))) {
    anydev_emu::ReportMisuse(std::string(api) + ": misaligned address or pitch");
    return CUDA_ERROR_INVALID_VALUE;
  }
  const size_t extent = (height - 1) * pitch + width * element;
  Span span;
  if (const CUresult r = anydev_emu::Resolve(static_cast<std::uintptr_t>(dst), extent,
                                             Access::kDeviceOrPinned, api, &span);
      r != CUDA_SUCCESS) {
    return r;
  }
  s->Enqueue(api, [api, span, value, element, width, height, pitch] {
    std::byte* base = span.Bytes();
    if (base == nullptr) return Freed(api, span);
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
  return EnqueueCopy("cuMemcpyAsync", stream, U(dst), Access::kAny, U(src), Access::kAny, bytes);
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) {
  return EnqueueCopy("cuMemcpyHtoDAsync", stream, U(dst), Access::kDeviceOrPinned, U(src),
                     Access::kHost, bytes);
}

CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return EnqueueCopy("cuMemcpyDtoHAsync", stream, U(dst), Access::kHost, U(src),
                     Access::kDeviceOrPinned, bytes);
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_context, CUdeviceptr src,
                           CUcontext src_context, size_t bytes, CUstream stream) {
  if (const CUresult r = anydev_emu::CheckInitialized(); r != CUDA_SUCCESS) return r;
  anydev_emu::Context* to = anydev_emu::AsContext(dst_context);
  anydev_emu::Context* from = anydev_emu::AsContext(src_context);
  if (to == nullptr || from == nullptr) {
    anydev_emu::ReportMisuse("cuMemcpyPeerAsync: not a context of this driver");
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  // Each pointer must be device memory of its context's device.
  Span d;
  Span s;
  if (bytes > 0) {
    if (const CUresult r =
            anydev_emu::Resolve(U(dst), bytes, Access::kDeviceOrPinned, "cuMemcpyPeerAsync", &d);
        r != CUDA_SUCCESS) {
      return r;
    }
    if (const CUresult r =
            anydev_emu::Resolve(U(src), bytes, Access::kDeviceOrPinned, "cuMemcpyPeerAsync", &s);
        r != CUDA_SUCCESS) {
      return r;
    }
    if (d.block->device != to->device || s.block->device != from->device) {
      anydev_emu::ReportMisuse(
          "cuMemcpyPeerAsync: a pointer is not memory of its context's device");
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return EnqueueCopy("cuMemcpyPeerAsync", stream, U(dst), Access::kDeviceOrPinned, U(src),
                     Access::kDeviceOrPinned, bytes);
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream) {
  return EnqueueMemset("cuMemsetD8Async", stream, dst, value, 1, count, 1, 0);
}

CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count, CUstream stream) {
  return EnqueueMemset("cuMemsetD16Async", stream, dst, value, 2, count, 1, 0);
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream) {
  return EnqueueMemset("cuMemsetD32Async", stream, dst, value, 4, count, 1, 0);
}

CUresult cuMemsetD2D32Async(CUdeviceptr dst, size_t pitch, unsigned int value, size_t width,
                            size_t height, CUstream stream) {
  return EnqueueMemset("cuMemsetD2D32Async", stream, dst, value, 4, width, height, pitch);
}

}  // extern "C"
