// SPDX-License-Identifier: Apache-2.0
// Copies and memsets, queued by the core (core_transfer.h) on the stream's
// worker: checked when enqueued (hipErrorInvalidValue) and when run
// (hipErrorIllegalAddress for memory freed in between).
#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <string>

#include "core_config.h"
#include "core_transfer.h"
#include "hip_face.h"

namespace hip = anydev_emu::hip;
namespace core = anydev_emu::core;
using core::Access;
using hip::Call;

namespace {

std::uintptr_t U(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

hipError_t copy(const char* api, hipStream_t stream, void* dst, Access dst_access, const void* src,
                Access src_access, size_t bytes) {
  core::StreamRef s;
  if (const hipError_t e = hip::stream_of(stream, api, &s); e != hipSuccess) return e;
  return hip::to_hip(core::enqueue_copy(api, s, U(dst), dst_access, U(src), src_access, bytes));
}

}  // namespace

namespace anydev_emu::hip {
bool copy_access(hipMemcpyKind kind, Access* dst, Access* src) {
  const bool dst_device = kind == hipMemcpyHostToDevice || kind == hipMemcpyDeviceToDevice;
  const bool src_device = kind == hipMemcpyDeviceToHost || kind == hipMemcpyDeviceToDevice;
  *dst = dst_device ? Access::kDeviceOrPinned : Access::kHost;
  *src = src_device ? Access::kDeviceOrPinned : Access::kHost;
  if (kind == hipMemcpyDefault) *dst = *src = Access::kAny;
  return kind >= hipMemcpyHostToHost && kind <= hipMemcpyDefault;
}

// `count` elements of `element` bytes in each of `height` rows `pitch` bytes apart.
hipError_t fill(const char* api, hipStream_t stream, void* dst, std::uint32_t value, size_t element,
                size_t count, size_t height, size_t pitch) {
  core::StreamRef s;
  if (const hipError_t e = stream_of(stream, api, &s); e != hipSuccess) return e;
  return to_hip(core::enqueue_memset(api, s, U(dst), value, element, count, height, pitch));
}
}  // namespace anydev_emu::hip

extern "C" {

// The kind must describe the pointers (hipMemcpyDefault: any); stricter than
// HIP, which may ignore a wrong one.
hipError_t hipMemcpyAsync(void* dst, const void* src, size_t bytes, hipMemcpyKind kind,
                          hipStream_t stream) {
  hip::count(Call::hipMemcpyAsync);
  Access to = Access::kAny;
  Access from = Access::kAny;
  if (!hip::copy_access(kind, &to, &from)) {
    core::report_misuse("hipMemcpyAsync: unknown hipMemcpyKind " +
                        std::to_string(static_cast<int>(kind)));
    return hipErrorInvalidMemcpyDirection;
  }
  return copy("hipMemcpyAsync", stream, dst, to, src, from, bytes);
}

// Device ordinals, not contexts: each pointer must be memory of its device.
hipError_t hipMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device,
                              size_t bytes, hipStream_t stream) {
  hip::count(Call::hipMemcpyPeerAsync);
  core::Device* to = nullptr;
  core::Device* from = nullptr;
  if (const hipError_t e = hip::device_of(dst_device, &to); e != hipSuccess) return e;
  if (const hipError_t e = hip::device_of(src_device, &from); e != hipSuccess) return e;
  if (const hipError_t e = hip::to_hip(core::check_peer_copy(
          "hipMemcpyPeerAsync", U(dst), to->index, U(src), from->index, bytes));
      e != hipSuccess) {
    return e;
  }
  return copy("hipMemcpyPeerAsync", stream, dst, Access::kDeviceOrPinned, src,
              Access::kDeviceOrPinned, bytes);
}

hipError_t hipMemsetD8Async(hipDeviceptr_t dst, unsigned char value, size_t count,
                            hipStream_t stream) {
  hip::count(Call::hipMemsetD8Async);
  return hip::fill("hipMemsetD8Async", stream, dst, value, 1, count, 1, 0);
}

hipError_t hipMemsetD16Async(hipDeviceptr_t dst, unsigned short value, size_t count,
                             hipStream_t stream) {
  hip::count(Call::hipMemsetD16Async);
  return hip::fill("hipMemsetD16Async", stream, dst, value, 2, count, 1, 0);
}

hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count, hipStream_t stream) {
  hip::count(Call::hipMemsetD32Async);
  return hip::fill("hipMemsetD32Async", stream, dst, static_cast<std::uint32_t>(value), 4, count, 1,
                   0);
}

}  // extern "C"
