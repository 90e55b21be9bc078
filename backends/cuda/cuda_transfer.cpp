// SPDX-License-Identifier: Apache-2.0
// copies (cuMemcpyAsync with unified addressing; cuMemcpyPeerAsync between
// devices) and fills (cuda_fill_plan.h), ordered on a stream.
#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "cuda_entries.h"
#include "cuda_errors.h"
#include "cuda_fill_plan.h"
#include "cuda_objects.h"
#include "cuda_state.h"

namespace anydev::cuda {
namespace {

CUdeviceptr address(const anydev_bk_memory_ref_t& ref) {
  return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(ref.handle) + ref.offset);
}

std::string describe(const anydev_bk_memory_ref_t& ref) {
  switch (ref.kind) {
    case ANYDEV_BK_MEMORY_USER_HOST:
      return cat("host memory ", ref.handle);
    case ANYDEV_BK_MEMORY_HOST:
      return cat("pinned memory ", ref.handle, "+", ref.offset, " (device ", ref.device, ")");
    case ANYDEV_BK_MEMORY_DEVICE:
      return cat("device ", ref.device, " memory ", ref.handle, "+", ref.offset);
  }
  return cat("memory of unknown kind ", static_cast<int>(ref.kind));
}

std::string describe_copy(const anydev_bk_memory_ref_t& dst, const anydev_bk_memory_ref_t& src,
                          std::size_t bytes, int stream_device) {
  return cat("copy of ", bytes, " bytes from ", describe(src), " to ", describe(dst),
             " on a stream of cuda device ", stream_device);
}

}  // namespace

anydev_status_t copy(anydev_bk_stream_t stream_token, anydev_bk_memory_ref_t dst,
                     anydev_bk_memory_ref_t src, std::size_t bytes) {
  const CudaStream* stream = as_stream(stream_token);
  if (stream == nullptr) return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "copy: null stream");
  // One driver call in steady state: the stream names its context
  // (call_on_stream, cuda_state.h).
  const bool direct = names_its_context(stream->native);
  const CudaDriver& drv = driver();
  if (dst.kind == ANYDEV_BK_MEMORY_DEVICE && src.kind == ANYDEV_BK_MEMORY_DEVICE &&
      dst.device != src.device) {
    CUcontext dst_context = nullptr;
    CUcontext src_context = nullptr;
    if (const anydev_status_t s = primary_context(dst.device, &dst_context); s != ANYDEV_SUCCESS) {
      return s;
    }
    if (const anydev_status_t s = primary_context(src.device, &src_context); s != ANYDEV_SUCCESS) {
      return s;
    }
    const CUresult r = call_on_stream(stream->device, direct, "copy", [&] {
      return drv.MemcpyPeerAsync(address(dst), dst_context, address(src), src_context, bytes,
                                 stream->native);
    });
    if (r != CUDA_SUCCESS) {
      return report_failure(r, "cuMemcpyPeerAsync", describe_copy(dst, src, bytes, stream->device));
    }
    return ANYDEV_SUCCESS;
  }
  const CUresult r = call_on_stream(stream->device, direct, "copy", [&] {
    return drv.MemcpyAsync(address(dst), address(src), bytes, stream->native);
  });
  if (r != CUDA_SUCCESS) {
    return report_failure(r, "cuMemcpyAsync", describe_copy(dst, src, bytes, stream->device));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t fill(anydev_bk_stream_t stream_token, anydev_bk_memory_ref_t dst,
                     const void* pattern, std::size_t pattern_size, std::size_t bytes) {
  const CudaStream* stream = as_stream(stream_token);
  if (stream == nullptr || pattern == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "fill: null stream or pattern");
  }
  const bool size_ok = pattern_size == 1 || pattern_size == 2 || pattern_size == 4 ||
                       pattern_size == 8 || pattern_size == 16;
  // Every memset pass needs its address aligned to its element (at most 4 bytes).
  const std::size_t alignment = pattern_size < 4 ? pattern_size : 4;
  if (!size_ok || bytes % pattern_size != 0 || dst.offset % alignment != 0) {
    return report_error(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat("fill: a ", pattern_size, "-byte pattern over ", bytes, " bytes at offset ", dst.offset,
            " (the pattern must be 1, 2, 4, 8 or 16 bytes and divide the byte"
            " count; the offset must be a multiple of ",
            alignment, ")"));
  }
  const bool direct = names_its_context(stream->native);
  const CudaDriver& drv = driver();
  if (dst.kind == ANYDEV_BK_MEMORY_USER_HOST) {
    // Host memory the driver does not know (imported, e.g. a NumPy array):
    // no cuMemset can write it, so the fill waits for the stream's earlier
    // work and writes on this thread; later work on the stream comes after.
    if (const CUresult r = call_on_stream(stream->device, direct, "fill",
                                          [&] { return drv.StreamSynchronize(stream->native); });
        r != CUDA_SUCCESS) {
      return report_failure(r, "cuStreamSynchronize",
                            cat("fill of ", bytes, " bytes of ", describe(dst),
                                " on a stream of cuda device ", stream->device));
    }
    char* const at = static_cast<char*>(dst.handle) + dst.offset;
    for (std::size_t done = 0; done < bytes; done += pattern_size) {
      std::memcpy(at + done, pattern, pattern_size);
    }
    return ANYDEV_SUCCESS;
  }
  const CUdeviceptr base = address(dst);
  const FillPlan plan = plan_fill(pattern, pattern_size, bytes);
  for (int i = 0; i < plan.size; ++i) {
    const FillPass& pass = plan.passes[static_cast<std::size_t>(i)];
    const CUdeviceptr at = base + pass.offset;
    const char* call = "";
    const CUresult r = call_on_stream(stream->device, direct, "fill", [&] {
      switch (pass.kind) {
        case FillPass::Kind::kD8:
          call = "cuMemsetD8Async";
          return drv.MemsetD8Async(at, static_cast<unsigned char>(pass.value), pass.count,
                                   stream->native);
        case FillPass::Kind::kD16:
          call = "cuMemsetD16Async";
          return drv.MemsetD16Async(at, static_cast<unsigned short>(pass.value), pass.count,
                                    stream->native);
        case FillPass::Kind::kD32:
          call = "cuMemsetD32Async";
          return drv.MemsetD32Async(at, pass.value, pass.count, stream->native);
        case FillPass::Kind::kD2D32:
          call = "cuMemsetD2D32Async";
          return drv.MemsetD2D32Async(at, pass.pitch, pass.value, 1, pass.count, stream->native);
      }
      call = "a memset";
      return CUDA_ERROR_INVALID_VALUE;
    });
    if (r != CUDA_SUCCESS) {
      return report_failure(
          r, call,
          cat("fill of ", bytes, " bytes of ", describe(dst), " with a ", pattern_size,
              "-byte pattern on a stream of cuda device ", stream->device));
    }
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cuda
