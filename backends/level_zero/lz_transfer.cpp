// SPDX-License-Identifier: Apache-2.0
// Copies (zeCommandListAppendMemoryCopy, every direction: pinned, pageable
// and device memory, and between devices of one driver) and fills
// (zeCommandListAppendMemoryFill), appended to a stream's command list.
//
// A fill pattern is first reduced to its shortest period (a 16-byte pattern
// of four equal words is a 4-byte pattern). A period no wider than the queue
// group's maxMemoryFillPatternSize is one native fill. A wider one in the
// stream's device memory is one launch of anydev's fill kernel
// (lz_fill_kernel.h) where the driver takes it; otherwise it follows the
// GPU core's API-neutral fill plan (backends/gpu/gpu_fill_plan.h, replicated:
// Level Zero has no strided fill): one 4-byte fill per word writes the first
// period, then copies within the destination double what is written. A group
// that cannot fill even 4 bytes gets the first 4 KiB staged in pinned host
// memory and copied instead. The pattern words and the staging memory are
// kept alive until the commands that read them ran (hold_locked,
// lz_objects.h); a barrier follows each command that a later one reads,
// unless the stream's list is in order (order_locked).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "anydev/kit/capabilities.h"
#include "anydev/kit/memory_ref.h"
#include "gpu_fill_plan.h"
#include "lz_entries.h"
#include "lz_errors.h"
#include "lz_fill_kernel.h"
#include "lz_fill_period.h"
#include "lz_objects.h"
#include "lz_state.h"

namespace anydev::level_zero {
namespace {

constexpr std::size_t kStagedBytes = 4096;

using kit::describe_memory;
void* address(const anydev_bk_memory_ref_t& ref) { return kit::address_of(ref); }

}  // namespace

anydev_status_t copy(anydev_bk_stream_t stream_token, anydev_bk_memory_ref_t dst,
                     anydev_bk_memory_ref_t src, std::size_t bytes) {
  LzStream* stream = as_stream(stream_token);
  if (stream == nullptr) return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "copy: null stream");
  ze_result_t r = ZE_RESULT_SUCCESS;
  {
    const std::lock_guard<std::mutex> lock(stream->mutex);
    r = api().zeCommandListAppendMemoryCopy(stream->list, address(dst), address(src), bytes,
                                            nullptr, 0, nullptr);
    if (r == ZE_RESULT_SUCCESS && (r = order_locked(*stream)) != ZE_RESULT_SUCCESS) {
      return report_failure(
          r, "zeCommandListAppendBarrier",
          cat("ordering a copy of ", bytes, " bytes on level_zero device ", stream->device));
    }
  }
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(
        r, "zeCommandListAppendMemoryCopy",
        cat("copy of ", bytes, " bytes from ", describe_memory(src), " to ", describe_memory(dst),
            " on a stream of level_zero device ", stream->device));
  }
  return ANYDEV_SUCCESS;
}

namespace {

// The fallback of a group that fills less than 4 bytes, with the stream's
// mutex held: the first up to 4 KiB staged in pinned memory, then doubled.
anydev_status_t fill_by_staging(LzStream& stream, char* at, const unsigned char* pattern,
                                std::size_t period, std::size_t bytes, const std::string& what) {
  const LoaderApi& ze = api();
  const DeviceState& d = device_at(stream.device);
  const std::size_t staged = std::min(bytes, kStagedBytes - kStagedBytes % period);
  ze_host_mem_alloc_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
  void* host = nullptr;
  ze_result_t r = ze.zeMemAllocHost(d.driver->context, &desc, staged, 64, &host);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeMemAllocHost", cat(what, " (staging ", staged, " bytes)"));
  }
  for (std::size_t i = 0; i < staged; i += period) {
    std::memcpy(static_cast<char*>(host) + i, pattern, period);
  }
  ze_context_handle_t context = d.driver->context;
  hold_locked(stream,
              std::shared_ptr<void>(host, [context](void* p) { api().zeMemFree(context, p); }));
  r = ze.zeCommandListAppendMemoryCopy(stream.list, at, host, staged, nullptr, 0, nullptr);
  const char* call = "zeCommandListAppendMemoryCopy";
  for (std::size_t done = staged; r == ZE_RESULT_SUCCESS;) {
    // Each copy reads what the ones before it wrote.
    if ((r = order_locked(stream)) != ZE_RESULT_SUCCESS) {
      call = "zeCommandListAppendBarrier";
      break;
    }
    if (done == bytes) break;
    const std::size_t next = std::min(done, bytes - done);
    r = ze.zeCommandListAppendMemoryCopy(stream.list, at + done, at, next, nullptr, 0, nullptr);
    done += next;
  }
  if (r != ZE_RESULT_SUCCESS) return report_failure(r, call, what);
  return ANYDEV_SUCCESS;
}

// Copies within the destination that double its first `written` bytes up
// to `bytes`, each after a barrier (it reads what the commands before wrote).
ze_result_t replicate(LzStream& stream, char* at, std::size_t written, std::size_t bytes,
                      const char** call) {
  const LoaderApi& ze = api();
  while (written < bytes) {
    ze_result_t r = order_locked(stream);
    if (r != ZE_RESULT_SUCCESS) {
      *call = "zeCommandListAppendBarrier";
      return r;
    }
    const gpu::FillCopy next = gpu::next_replica(written, bytes);
    r = ze.zeCommandListAppendMemoryCopy(stream.list, at + next.offset, at, next.bytes, nullptr, 0,
                                         nullptr);
    if (r != ZE_RESULT_SUCCESS) {
      *call = "zeCommandListAppendMemoryCopy";
      return r;
    }
    written += next.bytes;
  }
  *call = "zeCommandListAppendBarrier";
  return order_locked(stream);
}

// A period wider than the group fills, when it fills 4 bytes: the GPU core's
// replicated plan, with the stream's mutex held.
anydev_status_t fill_by_plan(LzStream& stream, char* at, const void* pattern,
                             std::size_t pattern_size, std::size_t bytes, const std::string& what) {
  const gpu::FillPlan plan = gpu::plan_fill(pattern, pattern_size, bytes, /*strided=*/false);
  // The words the fills read when they run.
  auto words = std::make_shared<std::array<std::uint32_t, 4>>();
  for (int i = 0; i < plan.size; ++i) {
    const gpu::FillPass& pass = plan.passes[static_cast<std::size_t>(i)];
    if (pass.kind != gpu::FillPass::Kind::kD32) {
      return report_error(ANYDEV_ERROR_INTERNAL,
                          cat(what, ": the fill plan gave a pass other than a 32-bit fill"));
    }
    (*words)[static_cast<std::size_t>(i)] = pass.value;
    const ze_result_t r = api().zeCommandListAppendMemoryFill(
        stream.list, at + pass.offset, &(*words)[static_cast<std::size_t>(i)], 4, pass.count * 4,
        nullptr, 0, nullptr);
    if (r != ZE_RESULT_SUCCESS) return report_failure(r, "zeCommandListAppendMemoryFill", what);
  }
  hold_locked(stream, std::move(words));
  const char* call = "";
  const std::size_t written = plan.replicate_from != 0 ? plan.replicate_from : bytes;
  if (const ze_result_t r = replicate(stream, at, written, bytes, &call); r != ZE_RESULT_SUCCESS) {
    return report_failure(r, call, what);
  }
  return ANYDEV_SUCCESS;
}

}  // namespace

anydev_status_t fill(anydev_bk_stream_t stream_token, anydev_bk_memory_ref_t dst,
                     const void* pattern, std::size_t pattern_size, std::size_t bytes) {
  LzStream* stream = as_stream(stream_token);
  if (stream == nullptr || pattern == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "fill: null stream or pattern");
  }
  if (!kit::valid_fill_pattern_size(pattern_size) || bytes % pattern_size != 0) {
    return report_error(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat("fill: a ", pattern_size, "-byte pattern over ", bytes, " bytes (the pattern must be ",
            kit::kFillPatternSizes, " bytes and divide the byte count)"));
  }
  auto what = [&] {
    return cat("fill of ", bytes, " bytes of ", describe_memory(dst), " with a ", pattern_size,
               "-byte pattern on a stream of level_zero device ", stream->device);
  };
  char* const at = static_cast<char*>(address(dst));
  if (dst.kind == ANYDEV_BK_MEMORY_USER_HOST) {
    // Host memory the driver did not allocate (imported, e.g. a NumPy array):
    // no device fill may write it, so the fill waits for the stream's earlier
    // work and writes on this thread; later work on the stream comes after.
    if (const anydev_status_t s = drain(*stream, "fill of imported host memory");
        s != ANYDEV_SUCCESS) {
      return s;
    }
    for (std::size_t done = 0; done < bytes; done += pattern_size) {
      std::memcpy(at + done, pattern, pattern_size);
    }
    return ANYDEV_SUCCESS;
  }
  const auto* bytes_of = static_cast<const unsigned char*>(pattern);
  const std::size_t period = shortest_period(bytes_of, pattern_size);
  const std::lock_guard<std::mutex> lock(stream->mutex);
  const std::size_t native = device_at(stream->device).max_native_fill;
  if (period > native) {
    // One kernel launch instead of the plan's fills and copies, which read
    // every byte they write; only the stream's own device memory.
    if (bytes != 0 && dst.kind == ANYDEV_BK_MEMORY_DEVICE && dst.device == stream->device) {
      ze_result_t r = ZE_RESULT_SUCCESS;
      const char* call = "";
      switch (fill_by_kernel_locked(*stream, at, pattern, period, bytes, &r, &call)) {
        case gpu::KernelFill::kLaunched:
          return ANYDEV_SUCCESS;
        case gpu::KernelFill::kFailed:
          return report_failure(r, call, what());
        case gpu::KernelFill::kUnavailable:
          break;
      }
    }
    return native >= 4 ? fill_by_plan(*stream, at, pattern, pattern_size, bytes, what())
                       : fill_by_staging(*stream, at, bytes_of, period, bytes, what());
  }
  // The driver may read the pattern when the command runs: keep a copy alive.
  auto kept = std::make_shared<std::array<unsigned char, 16>>();
  std::memcpy(kept->data(), pattern, period);
  ze_result_t r = api().zeCommandListAppendMemoryFill(stream->list, at, kept->data(), period, bytes,
                                                      nullptr, 0, nullptr);
  if (r != ZE_RESULT_SUCCESS) return report_failure(r, "zeCommandListAppendMemoryFill", what());
  hold_locked(*stream, std::move(kept));
  if ((r = order_locked(*stream)) != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeCommandListAppendBarrier", what());
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::level_zero
