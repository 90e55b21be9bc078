// SPDX-License-Identifier: Apache-2.0
// C entry points: buffers and views.
#include <cstddef>
#include <cstring>
#include <vector>

#include "anydev/anydev.h"
#include "api/buffer_access.h"
#include "api/capture.h"
#include "api/taken_memory.h"
#include "memory/host_memory_locks.h"
#include "memory/pool/pooled_allocation.h"
#include "memory/shared_memory.h"
#include "support/backend_calls.h"
#include "support/dtype.h"
#include "support/format.h"
#include "support/range_check.h"

using namespace anydev::core;

namespace {

anydev_status_t report(const std::optional<RangeError>& error) {
  return set_error(error->status, error->message);
}

anydev_buffer_t new_buffer(const anydev_buffer_s& like, std::shared_ptr<const ContextState> context,
                           std::shared_ptr<Allocation> allocation) {
  auto* buf = new anydev_buffer_s;
  buf->fork_generation = fork_generation();
  buf->kind = like.kind;
  buf->dtype = like.dtype;
  buf->count = like.count;
  buf->size_bytes = like.size_bytes;
  buf->offset_bytes = like.offset_bytes;
  buf->context = std::move(context);
  buf->allocation = std::move(allocation);
  return buf;
}

const char* kind_name(anydev_memory_kind_t kind) {
  return kind == ANYDEV_MEMORY_HOST ? "host" : "device";
}

}  // namespace

extern "C" {

anydev_status_t anydev_buffer_create(anydev_context_t ctx, anydev_memory_kind_t kind,
                                     anydev_dtype_t dtype, size_t count, anydev_buffer_t* out) {
  static constexpr const char* op = "anydev_buffer_create";
  ANYDEV_REQUIRE_ARG(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  if (kind != ANYDEV_MEMORY_HOST && kind != ANYDEV_MEMORY_DEVICE) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown memory kind ", static_cast<int>(kind));
  }
  const auto traits = dtype_traits(dtype);
  if (!traits) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown dtype ", static_cast<int>(dtype));
  }
  std::size_t bytes = 0;
  if (auto error = check_byte_count(op, count, traits->size, &bytes)) return report(error);
  return guarded(op, [&] {
    const ContextState& state = *ctx->state;
    const anydev_bk_memory_kind_t bk_kind =
        kind == ANYDEV_MEMORY_HOST ? ANYDEV_BK_MEMORY_HOST : ANYDEV_BK_MEMORY_DEVICE;
    PoolBlock block;  // from the caching pool of the device (pool/caching_pool.h)
    if (bytes > 0) {
      const anydev_status_t s =
          pool_allocate(state.backend, state.device, bk_kind, state.stream, bytes, &block);
      if (s != ANYDEV_SUCCESS) {
        return fail(s, op, "allocating ", count, " ", traits->name, " elements (", bytes,
                    " bytes) of ", kind_name(kind), " memory on ",
                    describe_device(state.backend, state.device), ": ", last_error_message());
      }
    }
    auto allocation =
        make_pooled_allocation(state.backend, state.device, bk_kind, block, bytes, state.stream);
    // Device memory is ordered on the allocating stream.
    if (kind == ANYDEV_MEMORY_DEVICE) note_use(*allocation, *state.stream, state.stream);
    anydev_buffer_s like;
    like.kind = kind;
    like.dtype = dtype;
    like.count = count;
    like.size_bytes = bytes;
    like.offset_bytes = 0;
    *out = new_buffer(like, ctx->state, std::move(allocation));
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_buffer_retain(anydev_buffer_t buf) {
  return retain_handle("anydev_buffer_retain", buf);
}

anydev_status_t anydev_buffer_release(anydev_buffer_t buf) {
  // The allocation's last reference (if this was it) releases the memory in
  // stream order; see allocation.h.
  return release_handle("anydev_buffer_release", buf);
}

anydev_status_t anydev_buffer_get_info(anydev_buffer_t buf, anydev_buffer_info_t* out) {
  static constexpr const char* op = "anydev_buffer_get_info";
  ANYDEV_REQUIRE_ARG(op, out);
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  // The struct before native_offset_bytes was added is still accepted.
  constexpr std::size_t kOldest = offsetof(anydev_buffer_info_t, native_offset_bytes);
  if (out->struct_size < kOldest) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "out->struct_size is ", out->struct_size,
                ", expected at least ", kOldest);
  }
  out->kind = buf->kind;
  out->dtype = buf->dtype;
  out->count = buf->count;
  out->size_bytes = buf->size_bytes;
  out->address = view.address();
  out->offset_bytes = buf->offset_bytes;
  if (out->struct_size >= sizeof(anydev_buffer_info_t)) {
    out->native_offset_bytes = view.allocation->object_offset() + buf->offset_bytes;
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_buffer_context(anydev_buffer_t buf, anydev_context_t* out) {
  static constexpr const char* op = "anydev_buffer_context";
  ANYDEV_REQUIRE_ARG(op, out);
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] {
    *out = new_context(view.context);
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_buffer_create_sub_buffer(anydev_buffer_t buf, anydev_dtype_t dtype,
                                                size_t offset, size_t count, anydev_buffer_t* out) {
  static constexpr const char* op = "anydev_buffer_create_sub_buffer";
  ANYDEV_REQUIRE_ARG(op, out);
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  const auto traits = dtype_traits(dtype);
  if (!traits) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown dtype ", static_cast<int>(dtype));
  }
  std::size_t view_offset = 0;
  if (auto error = check_sub_buffer(op, buf->size_bytes, buf->offset_bytes, offset, count,
                                    traits->size, traits->alignment, &view_offset)) {
    return report(error);
  }
  return guarded(op, [&] {
    anydev_buffer_s like;
    like.kind = buf->kind;
    like.dtype = dtype;
    like.count = count;
    like.size_bytes = count * traits->size;
    like.offset_bytes = view_offset;
    *out = new_buffer(like, view.context, view.allocation);
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_buffer_reassign_ownership(anydev_buffer_t buf, anydev_context_t ctx) {
  static constexpr const char* op = "anydev_buffer_reassign_ownership";
  ANYDEV_REQUIRE_ARG(op, ctx);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  const ContextState& to = *ctx->state;
  if (to.backend != view.allocation->backend || to.device != view.allocation->device) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the buffer's memory is on ",
                describe_device(view.allocation->backend, view.allocation->device),
                " but the new context is on ", describe_device(to.backend, to.device));
  }
  {
    std::lock_guard lock(buf->mutex);
    buf->context = ctx->state;
  }
  std::lock_guard lock(view.allocation->mutex);
  view.allocation->owner_stream = to.stream;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_buffer_take_ptr(anydev_buffer_t buf, void** out) {
  static constexpr const char* op = "anydev_buffer_take_ptr";
  ANYDEV_REQUIRE_ARG(op, buf);
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_fork(op, buf, "buffer"); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] {
    std::lock_guard lock(buf->mutex);
    if (buf->taken) {
      return fail(ANYDEV_ERROR_INVALID_STATE, op, "the buffer's memory was already taken");
    }
    const long handles = buf->refs.load();
    const long users = buf->allocation.use_count();
    if (handles != 1 || users != 1) {
      return fail(ANYDEV_ERROR_INVALID_STATE, op,
                  "take_ptr needs the only handle to the memory, but ", handles - 1,
                  " other reference(s) to this handle and ", users - 1,
                  " other buffer(s) or view(s) of the same memory are alive");
    }
    const Allocation& allocation = *buf->allocation;
    // Only a whole allocation changes hands: a view (even an empty one, whose
    // address may be where another allocation starts) would hand out memory
    // it does not own and make free() ambiguous.
    if (buf->offset_bytes != 0 || buf->size_bytes != allocation.bytes) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the buffer is a view of bytes [",
                  buf->offset_bytes, ", ", buf->offset_bytes + buf->size_bytes, ") of a ",
                  allocation.bytes, "-byte allocation; take_ptr hands over whole allocations only");
    }
    if (allocation.foreign()) {
      return fail(ANYDEV_ERROR_UNSUPPORTED, op,
                  "the buffer wraps imported (DLPack) memory that its producer owns; release the "
                  "buffer instead");
    }
    if (allocation.registered()) {
      return fail(ANYDEV_ERROR_UNSUPPORTED, op,
                  "the buffer is registered host memory that the caller owns; release the "
                  "buffer to unregister it instead");
    }
    if (share_state_of(allocation) != nullptr) {
      return fail(ANYDEV_ERROR_UNSUPPORTED, op,
                  "the buffer's memory is shared between processes (shareable or imported); it "
                  "is unmapped when the buffer is released, so it cannot be taken");
    }
    void* const address = allocation.address;
    if (address != nullptr && !remember_taken(buf->allocation)) {
      return fail(ANYDEV_ERROR_INVALID_STATE, op, "memory at ", address,
                  " is already recorded as taken from another allocation");
    }
    buf->allocation.reset();
    buf->taken = true;
    *out = address;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_buffer_format(anydev_buffer_t buf, char* out, size_t capacity,
                                     size_t* needed) {
  static constexpr const char* op = "anydev_buffer_format";
  ANYDEV_REQUIRE_ARG(op, out);
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] {
    const char* name = buf->kind == ANYDEV_MEMORY_HOST ? "HostBuffer" : "DeviceBuffer";
    std::string text;
    void* address = view.address();
    if (buf->kind == ANYDEV_MEMORY_HOST && (address != nullptr || buf->count == 0)) {
      text = format_buffer(name, buf->dtype, address, buf->count);
    } else {
      if (anydev_status_t s = check_not_capturing(op, *view.context->stream,
                                                  "copying the buffer to the host to format it");
          s != ANYDEV_SUCCESS) {
        return s;
      }
      std::vector<unsigned char> staging(buf->size_bytes);
      if (anydev_status_t s =
              anydev_enqueue_copy_to_host(nullptr, staging.data(), staging.size(), buf);
          s != ANYDEV_SUCCESS) {
        return s;
      }
      const Stream& stream = *view.context->stream;
      if (anydev_status_t s = bk(stream.backend->table).stream_synchronize(stream.native);
          s != ANYDEV_SUCCESS) {
        return s;
      }
      text = format_buffer(name, buf->dtype, staging.data(), buf->count);
    }
    if (needed != nullptr) *needed = text.size() + 1;
    if (capacity == 0) {
      return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "capacity 0; ", text.size() + 1, " bytes needed");
    }
    const std::size_t n = std::min(capacity - 1, text.size());
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
    if (n < text.size()) {
      return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "capacity ", capacity, " bytes; ", text.size() + 1,
                  " bytes needed");
    }
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_buffer_native_handle(anydev_buffer_t buf, void** out) {
  static constexpr const char* op = "anydev_buffer_native_handle";
  ANYDEV_REQUIRE_ARG(op, out);
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  const Backend* backend = view.allocation->backend;
  if (view.allocation->foreign()) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the buffer wraps imported (DLPack) memory at ",
                view.allocation->address, ": it has no native handle of the ", backend->name,
                " backend; its producer holds the native object");
  }
  if (backend->table->native_handle == nullptr) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the ", backend->name,
                " backend has no native handles");
  }
  return bk(backend->table)
      .native_handle(view.allocation->device, ANYDEV_NATIVE_MEMORY, view.allocation->handle, out);
}

anydev_status_t anydev_buffer_is_locked(anydev_buffer_t buf, int* locked) {
  static constexpr const char* op = "anydev_buffer_is_locked";
  ANYDEV_REQUIRE_ARG(op, locked);
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  const Allocation& allocation = *view.allocation;
  if (buf->kind != ANYDEV_MEMORY_HOST) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "buf is a device buffer on ",
                describe_device(allocation.backend, allocation.device),
                "; only host memory is page-locked or pageable");
  }
  if (allocation.handle == nullptr || allocation.foreign()) {
    *locked = 0;  // empty, or memory anydev did not allocate
    return ANYDEV_SUCCESS;
  }
  return guarded(op, [&] {
    int value = 0;
    if (anydev_status_t s = backend_memory_is_locked(allocation.backend, allocation.device,
                                                     allocation.handle, &value);
        s != ANYDEV_SUCCESS) {
      return fail(s, op, "asking ", describe_device(allocation.backend, allocation.device), ": ",
                  last_error_message());
    }
    *locked = value;
    return ANYDEV_SUCCESS;
  });
}

}  // extern "C"
