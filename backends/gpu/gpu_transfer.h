// SPDX-License-Identifier: Apache-2.0
// Copies (one unified-address copy; a peer copy between devices) and fills
// (gpu_fill_plan.h; anydev's fill kernel where the API offers it,
// gpu_fill_kernel.h), ordered on a stream: the copy and fill entries of a GPU
// backend. One driver call in steady state for a copy, for a fill of a 1-,
// 2- or 4-byte period and, with the kernel, for a fill of an 8- or 16-byte
// one (the stream names its device: call_on_stream). Thread-safe.
#ifndef ANYDEV_BACKENDS_GPU_GPU_TRANSFER_H_
#define ANYDEV_BACKENDS_GPU_GPU_TRANSFER_H_

#include <concepts>
#include <cstdint>
#include <cstring>
#include <string>

#include "anydev/kit/capabilities.h"
#include "anydev/kit/memory_ref.h"
#include "gpu_fill_kernel.h"
#include "gpu_fill_plan.h"
#include "gpu_objects.h"
#include "gpu_state.h"

namespace anydev::gpu {

using kit::describe_memory;

template <class Api>
[[gnu::cold]] anydev_status_t copy_failure(typename Api::status_t r, const char* call,
                                           const anydev_bk_memory_ref_t& dst,
                                           const anydev_bk_memory_ref_t& src, std::size_t bytes,
                                           int stream_device) {
  return report_failure<Api>(
      r, call,
      cat("copy of ", bytes, " bytes from ", describe_memory(src), " to ", describe_memory(dst),
          " on a stream of ", Api::kName, " device ", stream_device));
}

template <class Api>
typename Api::device_ptr address_of(const anydev_bk_memory_ref_t& ref) {
  return device_address<Api>(ref.handle, ref.offset);
}

template <class Api>
anydev_status_t copy(anydev_bk_stream_t stream_token, anydev_bk_memory_ref_t dst,
                     anydev_bk_memory_ref_t src, std::size_t bytes) {
  using names = typename Api::driver_t::names;
  const Stream<Api>* stream = as_stream<Api>(stream_token);
  if (stream == nullptr) return null_argument<Api>("copy", "stream");
  const bool direct = Api::names_its_device(stream->native);
  const auto& drv = driver<Api>();
  if (dst.kind == ANYDEV_BK_MEMORY_DEVICE && src.kind == ANYDEV_BK_MEMORY_DEVICE &&
      dst.device != src.device) {
    typename Api::peer_t dst_side{};
    typename Api::peer_t src_side{};
    if (const anydev_status_t s = Api::peer(dst.device, &dst_side); s != ANYDEV_SUCCESS) return s;
    if (const anydev_status_t s = Api::peer(src.device, &src_side); s != ANYDEV_SUCCESS) return s;
    const auto r = call_on_stream<Api>(stream->device, direct, "copy", [&] {
      return drv.MemcpyPeerAsync(address_of<Api>(dst), dst_side, address_of<Api>(src), src_side,
                                 bytes, stream->native);
    });
    if (r != Api::kSuccess) {
      return copy_failure<Api>(r, names::MemcpyPeerAsync, dst, src, bytes, stream->device);
    }
    return ANYDEV_SUCCESS;
  }
  const auto r = call_on_stream<Api>(stream->device, direct, "copy", [&] {
    return Api::memcpy(drv, address_of<Api>(dst), address_of<Api>(src), bytes, stream->native);
  });
  if (r != Api::kSuccess) {
    return copy_failure<Api>(r, names::MemcpyAsync, dst, src, bytes, stream->device);
  }
  return ANYDEV_SUCCESS;
}

template <class Api>
[[gnu::cold]] anydev_status_t fill_failure(typename Api::status_t r, const char* call,
                                           const anydev_bk_memory_ref_t& dst,
                                           std::size_t pattern_size, std::size_t bytes,
                                           int stream_device) {
  return report_failure<Api>(
      r, call,
      cat("fill of ", bytes, " bytes of ", describe_memory(dst), " with a ", pattern_size,
          "-byte pattern on a stream of ", Api::kName, " device ", stream_device));
}

// Host memory the driver does not know (imported, e.g. a NumPy array): no
// memset can write it, so the fill waits for the stream's earlier work and
// writes on this thread; later work on the stream comes after.
template <class Api>
anydev_status_t fill_user_host(const Stream<Api>& stream, const anydev_bk_memory_ref_t& dst,
                               const void* pattern, std::size_t pattern_size, std::size_t bytes) {
  const auto r =
      call_on_stream<Api>(stream.device, Api::names_its_device(stream.native), "fill",
                          [&] { return driver<Api>().StreamSynchronize(stream.native); });
  if (r != Api::kSuccess) {
    return fill_failure<Api>(r, Api::driver_t::names::StreamSynchronize, dst, pattern_size, bytes,
                             stream.device);
  }
  char* const at = static_cast<char*>(dst.handle) + dst.offset;
  for (std::size_t done = 0; done < bytes; done += pattern_size) {
    std::memcpy(at + done, pattern, pattern_size);
  }
  return ANYDEV_SUCCESS;
}

// One pass of a fill plan; *call names the driver call made.
template <class Api>
typename Api::status_t run_fill_pass(const typename Api::driver_t& drv, const FillPass& pass,
                                     typename Api::device_ptr at, typename Api::stream_t stream,
                                     const char** call) {
  using names = typename Api::driver_t::names;
  switch (pass.kind) {
    case FillPass::Kind::kD8:
      *call = names::MemsetD8Async;
      return drv.MemsetD8Async(at, static_cast<unsigned char>(pass.value), pass.count, stream);
    case FillPass::Kind::kD16:
      *call = names::MemsetD16Async;
      return drv.MemsetD16Async(at, static_cast<unsigned short>(pass.value), pass.count, stream);
    case FillPass::Kind::kD32:
      *call = names::MemsetD32Async;
      return drv.MemsetD32Async(at, pass.value, pass.count, stream);
    case FillPass::Kind::kD2D32:
      *call = names::MemsetD2D32Async;
      return drv.MemsetD2D32Async(at, pass.pitch, pass.value, 1, pass.count, stream);
  }
  *call = "a memset";
  return Api::kInvalidValue;
}

// A traits type may offer anydev's wide fill kernel (gpu_fill_kernel.h):
//   static KernelFill fill_kernel(const Stream<Api>&, const WideFillArgs&,
//                                 status_t* r, const char** call)
// kUnavailable (nothing enqueued): the fill plan writes the fill instead;
// kFailed: *r and *call say what the driver refused.
template <class Api>
concept HasFillKernel = requires(const Stream<Api>& s, const WideFillArgs& a,
                                 typename Api::status_t* r, const char** call) {
  { Api::fill_kernel(s, a, r, call) } -> std::same_as<KernelFill>;
};

template <class Api>
anydev_status_t fill(anydev_bk_stream_t stream_token, anydev_bk_memory_ref_t dst,
                     const void* pattern, std::size_t pattern_size, std::size_t bytes) {
  const Stream<Api>* stream = as_stream<Api>(stream_token);
  if (stream == nullptr || pattern == nullptr)
    return null_argument<Api>("fill", "stream or pattern");
  const bool size_ok = kit::valid_fill_pattern_size(pattern_size);
  // Every memset pass needs its address aligned to its element (at most 4 bytes).
  const std::size_t alignment = pattern_size < 4 ? pattern_size : 4;
  if (!size_ok || bytes % pattern_size != 0 || dst.offset % alignment != 0) {
    return report_error<Api>(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat("fill: a ", pattern_size, "-byte pattern over ", bytes, " bytes at offset ", dst.offset,
            " (the pattern must be ", kit::kFillPatternSizes,
            " bytes and divide the byte count; the offset must be a multiple of ", alignment, ")"));
  }
  if (dst.kind == ANYDEV_BK_MEMORY_USER_HOST) {
    return fill_user_host<Api>(*stream, dst, pattern, pattern_size, bytes);
  }
  const bool direct = Api::names_its_device(stream->native);
  const auto& drv = driver<Api>();
  const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(dst.handle) + dst.offset;
  // One kernel launch instead of the plan's memsets and copies, which read
  // every byte they write. Only the stream's own device memory: pinned host
  // memory and a peer's memory keep the plan's driver calls.
  if constexpr (HasFillKernel<Api>) {
    if (bytes != 0 && dst.kind == ANYDEV_BK_MEMORY_DEVICE && dst.device == stream->device) {
      const std::size_t period = fill_period(pattern, pattern_size);
      if (period > 4) {
        typename Api::status_t r{};
        const char* call = "";
        switch (
            Api::fill_kernel(*stream, wide_fill_args(base, pattern, period, bytes), &r, &call)) {
          case KernelFill::kLaunched:
            return ANYDEV_SUCCESS;
          case KernelFill::kFailed:
            return fill_failure<Api>(r, call, dst, pattern_size, bytes, stream->device);
          case KernelFill::kUnavailable:
            break;
        }
      }
    }
  }
  const FillPlan plan = plan_fill(pattern, pattern_size, bytes, drv.MemsetD2D32Async != nullptr);
  for (int i = 0; i < plan.size; ++i) {
    const FillPass& pass = plan.passes[static_cast<std::size_t>(i)];
    const char* call = "";
    const auto r = call_on_stream<Api>(stream->device, direct, "fill", [&] {
      return run_fill_pass<Api>(drv, pass, device_address<Api>(nullptr, base + pass.offset),
                                stream->native, &call);
    });
    if (r != Api::kSuccess)
      return fill_failure<Api>(r, call, dst, pattern_size, bytes, stream->device);
  }
  for (std::size_t written = plan.replicate_from; written != 0 && written < bytes;) {
    const FillCopy c = next_replica(written, bytes);
    const auto r = call_on_stream<Api>(stream->device, direct, "fill", [&] {
      return Api::memcpy(drv, device_address<Api>(nullptr, base + c.offset),
                         device_address<Api>(nullptr, base), c.bytes, stream->native);
    });
    if (r != Api::kSuccess) {
      return fill_failure<Api>(r, Api::driver_t::names::MemcpyAsync, dst, pattern_size, bytes,
                               stream->device);
    }
    written += c.bytes;
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_TRANSFER_H_
