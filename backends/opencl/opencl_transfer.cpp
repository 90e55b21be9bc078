// SPDX-License-Identifier: Apache-2.0
// Copies and fills (see opencl_memory.h for the memory model):
//
//   device <- device               clEnqueueCopyBuffer
//   device <- host (pinned / user) clEnqueueWriteBuffer, non-blocking
//   host   <- device               clEnqueueReadBuffer, non-blocking
//   host   <- host                 memcpy in a host task
//   fill device                    clEnqueueFillBuffer (exact pattern bits; split
//                                  in up to a few commands at an offset that is
//                                  not a multiple of the pattern size:
//                                  opencl_fill_pieces.h)
//   fill pinned host               pattern writes in a host task
#include <array>
#include <cstring>

#include "anydev/kit/capabilities.h"
#include "opencl_entries.h"
#include "opencl_errors.h"
#include "opencl_fill_pieces.h"
#include "opencl_host_tasks.h"
#include "opencl_memory.h"
#include "opencl_services.h"

namespace anydev::opencl {
namespace {

// One side of a copy or fill, resolved.
struct Side {
  anydev_bk_memory_kind_t kind = ANYDEV_BK_MEMORY_USER_HOST;
  char* host = nullptr;  // host address (offset applied) when on the host
  cl_mem mem = nullptr;  // device buffer
  size_t offset = 0;

  bool on_host() const { return kind != ANYDEV_BK_MEMORY_DEVICE; }
};

std::string side_text(const Side& side) {
  return cat(kind_name(side.kind), " (offset ", side.offset, ")");
}

anydev_status_t resolve(const Stream& stream, const anydev_bk_memory_ref_t& ref,
                        const char* operation, const char* role, size_t bytes, Side* out) {
  out->kind = ref.kind;
  out->offset = ref.offset;
  if (ref.handle == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat(operation, ": the ", role, " (", kind_name(ref.kind), ") is NULL"));
  }
  if (ref.kind == ANYDEV_BK_MEMORY_USER_HOST) {
    out->host = static_cast<char*>(ref.handle) + ref.offset;
    return ANYDEV_SUCCESS;
  }
  if (ref.kind != ANYDEV_BK_MEMORY_HOST && ref.kind != ANYDEV_BK_MEMORY_DEVICE) {
    return set_error(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat(operation, ": the ", role, " has unknown memory kind ", static_cast<int>(ref.kind)));
  }
  Allocation allocation;
  if (!find_allocation(ref.handle, &allocation) || allocation.kind != ref.kind) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat(operation, ": the ", role, " ", ref.handle, " is not a live OpenCL ",
                         kind_name(ref.kind)));
  }
  if (ref.offset > allocation.bytes || bytes > allocation.bytes - ref.offset) {
    return set_error(ANYDEV_ERROR_OUT_OF_RANGE,
                     cat(operation, " of ", bytes, " bytes at offset ", ref.offset, ": the ", role,
                         " ", kind_name(ref.kind), " holds only ", allocation.bytes, " bytes"));
  }
  if (ref.kind == ANYDEV_BK_MEMORY_HOST) {
    out->host = allocation.host + ref.offset;
    return ANYDEV_SUCCESS;
  }
  if (allocation.device != stream.device) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat(operation, ": the ", role, " device buffer belongs to OpenCL device ",
                         allocation.device->index, " (", allocation.device->name,
                         ") but the stream is on OpenCL device ", stream.device->index, " (",
                         stream.device->name,
                         "); each OpenCL device has its own cl_context, so its buffers "
                         "cannot be used by another device's streams"));
  }
  out->mem = static_cast<cl_mem>(ref.handle);
  return ANYDEV_SUCCESS;
}

// Writes `size` pattern bytes repeatedly over `bytes` bytes at dst.
void fill_host(char* dst, const std::array<unsigned char, 16>& pattern, size_t size, size_t bytes) {
  if (size == 1) {
    std::memset(dst, pattern[0], bytes);
    return;
  }
  std::memcpy(dst, pattern.data(), size);
  size_t done = size;
  while (done < bytes) {
    const size_t chunk = done < bytes - done ? done : bytes - done;
    std::memcpy(dst + done, dst, chunk);
    done += chunk;
  }
}

// One clEnqueueFillBuffer; `offset` and `bytes` are multiples of `size`.
anydev_status_t fill_command(Stream& stream, cl_mem mem, const void* pattern, size_t size,
                             size_t offset, size_t bytes) {
  admit_command(stream);
  cl_event event = nullptr;
  const cl_int err =
      cl().clEnqueueFillBuffer(stream.queue, mem, pattern, size, offset, bytes, 0, nullptr, &event);
  if (err != CL_SUCCESS) {
    return report_cl("clEnqueueFillBuffer", err,
                     cat(describe(stream, "fill", bytes), " with a ", size,
                         "-byte pattern at offset ", offset, " of a device buffer"));
  }
  track_command(stream, event, "clEnqueueFillBuffer", "fill", bytes);
  return ANYDEV_SUCCESS;
}

}  // namespace

anydev_status_t copy(anydev_bk_stream_t stream_handle, anydev_bk_memory_ref_t dst_ref,
                     anydev_bk_memory_ref_t src_ref, size_t bytes) {
  Stream* stream = as_stream(stream_handle);
  if (stream == nullptr)
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "copy: the stream is NULL");
  Side dst, src;
  if (anydev_status_t s = resolve(*stream, dst_ref, "copy", "destination", bytes, &dst);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (anydev_status_t s = resolve(*stream, src_ref, "copy", "source", bytes, &src);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (dst.on_host() && src.on_host()) {
    char* to = dst.host;
    const char* from = src.host;
    return enqueue_host_task(
        *stream, [to, from, bytes] { std::memcpy(to, from, bytes); }, "copy", bytes);
  }
  admit_command(*stream);
  cl_event event = nullptr;
  cl_int err = CL_SUCCESS;
  const char* call = nullptr;
  if (!dst.on_host() && !src.on_host()) {
    call = "clEnqueueCopyBuffer";
    err = cl().clEnqueueCopyBuffer(stream->queue, src.mem, dst.mem, src.offset, dst.offset, bytes,
                                   0, nullptr, &event);
  } else if (!dst.on_host()) {
    call = "clEnqueueWriteBuffer";
    err = cl().clEnqueueWriteBuffer(stream->queue, dst.mem, CL_FALSE, dst.offset, bytes, src.host,
                                    0, nullptr, &event);
  } else {
    call = "clEnqueueReadBuffer";
    err = cl().clEnqueueReadBuffer(stream->queue, src.mem, CL_FALSE, src.offset, bytes, dst.host, 0,
                                   nullptr, &event);
  }
  if (err != CL_SUCCESS) {
    return report_cl(
        call, err,
        cat(describe(*stream, "copy", bytes), " from ", side_text(src), " to ", side_text(dst)));
  }
  track_command(*stream, event, call, "copy", bytes);
  return ANYDEV_SUCCESS;
}

anydev_status_t fill(anydev_bk_stream_t stream_handle, anydev_bk_memory_ref_t dst_ref,
                     const void* pattern, size_t pattern_size, size_t bytes) {
  Stream* stream = as_stream(stream_handle);
  if (stream == nullptr)
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "fill: the stream is NULL");
  if (pattern == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "fill: the pattern is NULL");
  }
  if (!kit::valid_fill_pattern_size(pattern_size)) {
    return set_error(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat("fill: pattern size ", pattern_size, " bytes is not one of ", kit::kFillPatternSizes));
  }
  if (bytes % pattern_size != 0) {
    return set_error(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat("fill of ", bytes, " bytes: not a whole number of ", pattern_size, "-byte patterns"));
  }
  Side dst;
  if (anydev_status_t s = resolve(*stream, dst_ref, "fill", "destination", bytes, &dst);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (dst.on_host()) {
    std::array<unsigned char, 16> bits{};
    std::memcpy(bits.data(), pattern, pattern_size);
    char* to = dst.host;
    return enqueue_host_task(
        *stream, [to, bits, pattern_size, bytes] { fill_host(to, bits, pattern_size, bytes); },
        "fill", bytes);
  }
  const FillPieces pieces =
      fill_pieces(static_cast<const unsigned char*>(pattern), pattern_size, dst.offset, bytes);
  for (std::size_t i = 0; i < pieces.count; ++i) {
    const FillPiece& p = pieces.piece[i];
    if (anydev_status_t s =
            fill_command(*stream, dst.mem, p.pattern.data(), p.size, p.offset, p.bytes);
        s != ANYDEV_SUCCESS) {
      return s;
    }
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::opencl
