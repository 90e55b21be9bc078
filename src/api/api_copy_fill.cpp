// SPDX-License-Identifier: Apache-2.0
// C entry points: copies and fills. Each checks every argument before it
// enqueues anything, so a rejected call changes no buffer. On a capturing
// stream (api/capture.h) a checked copy or fill is recorded instead. The buffers'
// handles stay locked (BufferHold) from the checks until the operation is
// enqueued.
#include <algorithm>

#include "anydev/anydev.h"
#include "anydev/kit/capabilities.h"
#include "api/buffer_access.h"
#include "api/capture.h"
#include "support/backend_calls.h"
#include "support/range_check.h"

using namespace anydev::core;

namespace {

bool overlap(std::uintptr_t a, std::uintptr_t b, std::size_t bytes) {
  return a < b + bytes && b < a + bytes;
}

// The stream an operation runs on: ctx's, else the buffer's context's.
[[gnu::hot]] anydev_status_t pick_stream(const char* op, anydev_context_t ctx,
                                         const HeldBuffer& buffer, StreamUse* out) {
  if (ctx == nullptr) {
    out->shared = &buffer.context->stream;
    out->stream = out->shared->get();
  } else {
    if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
    out->stream = ctx->stream;
    out->shared = &ctx->state->stream;  // an address: the state is read only if needed
  }
  const Backend* backend = buffer.allocation->backend;
  if (out->stream->backend != backend) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "a buffer of backend ", backend->name,
                " cannot be used on a stream of backend ", out->stream->backend->name);
  }
  return ANYDEV_SUCCESS;
}

// The start of an enqueue on one buffer: hold its handle, pick the stream.
anydev_status_t hold_and_pick(const char* op, anydev_context_t ctx, const anydev_buffer_s* buf,
                              const char* what, BufferHold& hold, HeldBuffer* held,
                              StreamUse* use) {
  if (anydev_status_t st = hold.hold(op, buf, what, held); st != ANYDEV_SUCCESS) return st;
  return pick_stream(op, ctx, *held, use);
}

anydev_status_t report(const std::optional<RangeError>& error) {
  return set_error(error->status, error->message);
}

// `what()` describes the operation for the message; called only on failure,
// so a successful enqueue builds no string.
template <class What>
[[gnu::cold, gnu::noinline]] anydev_status_t wrap_failure(anydev_status_t status, const char* op,
                                                          What& what, const Stream& stream) {
  return fail(status, op, what(), " on ", describe_device(stream.backend, stream.device), ": ",
              last_error_message());
}

template <class What>
anydev_status_t wrap(anydev_status_t status, const char* op, What&& what, const Stream& stream) {
  if (status == ANYDEV_SUCCESS) [[likely]]
    return status;
  return wrap_failure(status, op, what, stream);  // out of line: the message is built there
}

}  // namespace

extern "C" {

[[gnu::hot]] anydev_status_t anydev_enqueue_copy(anydev_context_t ctx, anydev_buffer_t dst,
                                                 anydev_buffer_t src) {
  static constexpr const char* op = "anydev_enqueue_copy";
  BufferHold hold;
  HeldBuffer d, s;
  if (anydev_status_t st = hold.hold(op, dst, "dst", &d, src, "src", &s); st != ANYDEV_SUCCESS) {
    return st;
  }
  if (d.allocation->backend != s.allocation->backend) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "cannot copy between backends (source on ",
                describe_device(s.allocation->backend, s.allocation->device), ", destination on ",
                describe_device(d.allocation->backend, d.allocation->device), ")");
  }
  StreamUse use;
  if (anydev_status_t st = pick_stream(op, ctx, d, &use); st != ANYDEV_SUCCESS) return st;
  Stream* const stream = use.stream;
  const std::size_t bytes = dst->size_bytes;
  if (auto error = check_copy_size(op, "source", bytes, src->size_bytes)) return report(error);
  if (bytes == 0) return ANYDEV_SUCCESS;
  if (d.allocation == s.allocation && overlap(dst->offset_bytes, src->offset_bytes, bytes)) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "source bytes ", src->offset_bytes, "..",
                src->offset_bytes + bytes, " and destination bytes ", dst->offset_bytes, "..",
                dst->offset_bytes + bytes, " of the same memory overlap");
  }
  if (stream->capture.active()) [[unlikely]]
    if (const Captured c = capture_copy(op, *stream, d, s); c.handled) return c.status;
  return guarded(op, [&] {
    Allocation* const both[] = {d.allocation, s.allocation};
    const anydev_backend_table_t* table = stream->table;
    return wrap(
        use_allocations(use, both,
                        [&] { return bk(table).copy(stream->native, d.ref(), s.ref(), bytes); }),
        op, [&] { return cat("copying ", bytes, " bytes"); }, *stream);
  });
}

anydev_status_t anydev_enqueue_copy_from_host(anydev_context_t ctx, anydev_buffer_t dst,
                                              const void* src, size_t src_bytes) {
  static constexpr const char* op = "anydev_enqueue_copy_from_host";
  BufferHold hold;
  HeldBuffer d;
  StreamUse use;
  if (anydev_status_t st = hold_and_pick(op, ctx, dst, "dst", hold, &d, &use);
      st != ANYDEV_SUCCESS) {
    return st;
  }
  Stream* const stream = use.stream;
  const std::size_t bytes = dst->size_bytes;
  if (bytes > 0) ANYDEV_REQUIRE_ARG(op, src);  // an empty span may have no data
  if (auto error = check_copy_size(op, "source span", bytes, src_bytes)) return report(error);
  if (bytes == 0) return ANYDEV_SUCCESS;
  if (dst->kind == ANYDEV_MEMORY_HOST && d.address() != nullptr &&
      overlap(reinterpret_cast<std::uintptr_t>(src), reinterpret_cast<std::uintptr_t>(d.address()),
              bytes)) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the source ", src,
                " overlaps the destination buffer's memory");
  }
  if (stream->capture.active()) [[unlikely]]
    if (const Captured c = capture_host_copy(op, *stream); c.handled) return c.status;
  return guarded(op, [&] {
    Allocation* const one[] = {d.allocation};
    const anydev_bk_memory_ref_t from{const_cast<void*>(src), 0, ANYDEV_BK_MEMORY_USER_HOST, -1};
    const anydev_backend_table_t* table = stream->table;
    return wrap(
        use_allocations(use, one,
                        [&] { return bk(table).copy(stream->native, d.ref(), from, bytes); }),
        op, [&] { return cat("copying ", bytes, " bytes from host memory"); }, *stream);
  });
}

anydev_status_t anydev_enqueue_copy_to_host(anydev_context_t ctx, void* dst, size_t dst_bytes,
                                            anydev_buffer_t src) {
  static constexpr const char* op = "anydev_enqueue_copy_to_host";
  BufferHold hold;
  HeldBuffer s;
  StreamUse use;
  if (anydev_status_t st = hold_and_pick(op, ctx, src, "src", hold, &s, &use);
      st != ANYDEV_SUCCESS) {
    return st;
  }
  Stream* const stream = use.stream;
  const std::size_t bytes = src->size_bytes;
  if (bytes > 0) ANYDEV_REQUIRE_ARG(op, dst);  // an empty span may have no data
  if (auto error = check_copy_size(op, "destination span", bytes, dst_bytes)) {
    return report(error);
  }
  if (bytes == 0) return ANYDEV_SUCCESS;
  if (src->kind == ANYDEV_MEMORY_HOST && s.address() != nullptr &&
      overlap(reinterpret_cast<std::uintptr_t>(dst), reinterpret_cast<std::uintptr_t>(s.address()),
              bytes)) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the destination ", dst,
                " overlaps the source buffer's memory");
  }
  if (stream->capture.active()) [[unlikely]]
    if (const Captured c = capture_host_copy(op, *stream); c.handled) return c.status;
  return guarded(op, [&] {
    Allocation* const one[] = {s.allocation};
    const anydev_bk_memory_ref_t to{dst, 0, ANYDEV_BK_MEMORY_USER_HOST, -1};
    const anydev_backend_table_t* table = stream->table;
    return wrap(
        use_allocations(use, one,
                        [&] { return bk(table).copy(stream->native, to, s.ref(), bytes); }),
        op, [&] { return cat("copying ", bytes, " bytes to host memory"); }, *stream);
  });
}

[[gnu::hot]] anydev_status_t anydev_enqueue_fill(anydev_context_t ctx, anydev_buffer_t buf,
                                                 const void* pattern, size_t pattern_size) {
  static constexpr const char* op = "anydev_enqueue_fill";
  BufferHold hold;
  HeldBuffer b;
  StreamUse use;
  if (anydev_status_t st = hold_and_pick(op, ctx, buf, "buf", hold, &b, &use);
      st != ANYDEV_SUCCESS) {
    return st;
  }
  ANYDEV_REQUIRE_ARG(op, pattern);
  Stream* const stream = use.stream;
  if (!anydev::kit::valid_fill_pattern_size(pattern_size)) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "pattern size ", pattern_size, " is not ",
                anydev::kit::kFillPatternSizes, " bytes");
  }
  // The device's own limit (its backend's max_fill_pattern capability).
  if (const std::size_t most = stream->backend->devices[stream->device].max_fill_pattern;
      pattern_size > most) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "a ", pattern_size, "-byte pattern is larger than ",
                describe_device(stream->backend, stream->device), " fills (at most ", most,
                " bytes)");
  }
  const std::size_t bytes = buf->size_bytes;
  if ((bytes & (pattern_size - 1)) != 0) {  // pattern sizes are powers of two
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the buffer's ", bytes,
                " bytes are not a whole number of ", pattern_size, "-byte patterns");
  }
  if ((buf->offset_bytes & (std::min<std::size_t>(pattern_size, 4) - 1)) != 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the view starts at byte ", buf->offset_bytes,
                ", not aligned for a ", pattern_size, "-byte pattern");
  }
  // A fill writes device memory from the stream's device: another device's
  // memory needs peer access (copies do not; the backend's peer copy moves
  // them). Checked by the validation layer only.
  if (layers::validation_enabled() && buf->kind == ANYDEV_MEMORY_DEVICE) {
    if (anydev_status_t st =
            layers::check_peer_write(op, stream->backend, stream->backend->name.c_str(),
                                     stream->device, b.allocation->device);
        st != ANYDEV_SUCCESS) {
      return st;
    }
  }
  if (bytes == 0) return ANYDEV_SUCCESS;
  if (stream->capture.active()) [[unlikely]]
    if (const Captured c = capture_fill(op, *stream, b, pattern, pattern_size); c.handled) {
      return c.status;
    }
  return guarded(op, [&] {
    Allocation* const one[] = {b.allocation};
    const anydev_backend_table_t* table = stream->table;
    return wrap(
        use_allocations(
            use, one,
            [&] { return bk(table).fill(stream->native, b.ref(), pattern, pattern_size, bytes); }),
        op, [&] { return cat("filling ", bytes, " bytes with a ", pattern_size, "-byte pattern"); },
        *stream);
  });
}

}  // extern "C"
