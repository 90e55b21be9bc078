// SPDX-License-Identifier: Apache-2.0
// C entry points of anydev_dlpack.h: DLPack export and import of buffers,
// and ordering a consumer after the work on a buffer.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "anydev/anydev_dlpack.h"
#include "api/buffer_access.h"
#include "api/dlpack_types.h"
#include "api/native_stream_value.h"
#include "memory/foreign_memory.h"
#include "memory/stream_ordered_release.h"
#include "support/backend_calls.h"
#include "support/dtype.h"

using namespace anydev::core;

namespace {

// What an exported tensor points to: the tensor itself (the unversioned
// `managed` or the versioned `versioned`, whichever was asked for), its shape
// and strides, and one reference to the buffer. Owned by the consumer until
// it calls the deleter (from any thread).
struct ExportedTensor {
  DLManagedTensor managed{};
  anydev_dlpack_managed_tensor_versioned_t versioned{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  anydev_buffer_t buffer = nullptr;
};

void release_exported(void* manager_ctx) noexcept {
  auto* exported = static_cast<ExportedTensor*>(manager_ctx);
  if (exported == nullptr) return;
  anydev_buffer_release(exported->buffer);
  delete exported;
}

void delete_exported(DLManagedTensor* self) {
  if (self != nullptr) release_exported(self->manager_ctx);
}

void delete_exported_versioned(anydev_dlpack_managed_tensor_versioned_t* self) {
  if (self != nullptr) release_exported(self->manager_ctx);
}

std::string hex_text(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string shape_text(int ndim, const std::int64_t* shape) {
  std::string text = "[";
  for (int i = 0; i < ndim; ++i) text += cat(i == 0 ? "" : ", ", shape[i]);
  return text + "]";
}

// The product of the extents, or an error naming the shape.
anydev_status_t element_count(const char* op, const char* what, int ndim, const std::int64_t* shape,
                              std::size_t* out) {
  std::size_t count = 1;
  bool overflow = false;
  bool has_zero_extent = false;  // then the product is 0 whatever the others are
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, what, " ", shape_text(ndim, shape),
                  " has the negative extent ", shape[i], " at dimension ", i);
    }
    const auto extent = static_cast<std::size_t>(shape[i]);
    if (extent == 0) has_zero_extent = true;
    if (extent != 0 && count > std::numeric_limits<std::size_t>::max() / extent) overflow = true;
    count *= extent;
  }
  if (overflow && !has_zero_extent) {
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, what, " ", shape_text(ndim, shape),
                " has more elements than a size_t can count");
  }
  // DLPack counts in int64: a buffer must stay exportable as a 1-D tensor.
  if (count > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())) {
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, what, " ", shape_text(ndim, shape), " has ", count,
                " elements, more than DLPack's int64 extents can count");
  }
  *out = count;
  return ANYDEV_SUCCESS;
}

// A context for an imported tensor: ctx itself, or a new one on api:device.
anydev_status_t import_context(const char* op, anydev_context_t ctx, const char* api, int device,
                               const std::string& tensor,
                               std::shared_ptr<const ContextState>* out) {
  if (ctx != nullptr) {
    *out = ctx->state;
    return ANYDEV_SUCCESS;
  }
  anydev_context_t created = nullptr;
  if (anydev_status_t s = anydev_context_create(api, device, &created); s != ANYDEV_SUCCESS) {
    return fail(s, op, "a ", tensor, " tensor needs a context on ", api, ":", device, ": ",
                last_error_message());
  }
  *out = created->state;
  anydev_context_release(created);
  return ANYDEV_SUCCESS;
}

}  // namespace

extern "C" {

anydev_status_t anydev_buffer_dlpack_device(anydev_buffer_t buf, int* device_type, int* device_id) {
  static constexpr const char* op = "anydev_buffer_dlpack_device";
  ANYDEV_REQUIRE_ARG(op, device_type);
  ANYDEV_REQUIRE_ARG(op, device_id);
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  const Backend* backend = view.allocation->backend;
  const auto placement = dlpack_placement(backend->devices[view.allocation->device], buf->kind);
  if (!placement) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the ", backend->name, " backend's ",
                buf->kind == ANYDEV_MEMORY_HOST ? "host" : "device", " memory of device ",
                view.allocation->device,
                " has no DLPack device type (its device_props declare none)");
  }
  *device_type = placement->device_type;
  *device_id = placement->device_id;
  return ANYDEV_SUCCESS;
}

}  // extern "C"

namespace {

// Both exports: checks buf and the shape, then makes the tensor of the kind
// asked for (`versioned`: DLPack 1.x with `flags`, else 0.x); the caller
// hands on that kind's struct, whose deleter frees the whole record.
anydev_status_t export_tensor(const char* op, anydev_buffer_t buf, int ndim, const int64_t* shape,
                              bool versioned, std::uint64_t flags, ExportedTensor** out) {
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  const auto dtype = to_dlpack_dtype(buf->dtype, versioned);
  if (!dtype) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "dtype ", anydev_dtype_name(buf->dtype),
                " has no DLPack 0.6 type (kDLBool is DLPack 1.x): export it as a versioned "
                "tensor (anydev_buffer_to_dlpack_versioned; Python: __dlpack__(max_version=(1, "
                "0))) or a uint8 view of it (create_sub_buffer)");
  }
  const std::int64_t flat = static_cast<std::int64_t>(buf->count);
  if (shape == nullptr) {
    if (ndim != 0 && ndim != 1) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "shape is NULL but ndim is ", ndim,
                  " (NULL means one dimension: pass ndim 0 or 1, or the extents)");
    }
    ndim = 1;
    shape = &flat;
  } else if (ndim < 0 || ndim > ANYDEV_DLPACK_MAX_NDIM) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "ndim ", ndim, " is outside 0..",
                ANYDEV_DLPACK_MAX_NDIM);
  }
  std::size_t count = 0;
  if (anydev_status_t s = element_count(op, "shape", ndim, shape, &count); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (count != buf->count) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "shape ", shape_text(ndim, shape), " holds ",
                count, " elements but the buffer holds ", buf->count);
  }
  int device_type = 0;
  int device_id = 0;
  if (anydev_status_t s = anydev_buffer_dlpack_device(buf, &device_type, &device_id);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const Allocation& allocation = *view.allocation;
  void* data = view.address();
  std::uint64_t byte_offset = 0;
  if (dlpack_placement(allocation.backend->devices[allocation.device], buf->kind)
          ->data_is_native_memory &&
      allocation.handle != nullptr) {
    const anydev_backend_table_t* table = allocation.backend->table;
    void* mem = nullptr;
    const anydev_status_t s =
        table->native_handle == nullptr
            ? fail(ANYDEV_ERROR_UNSUPPORTED, op, "the backend has no native handles")
            : bk(table).native_handle(allocation.device, ANYDEV_NATIVE_MEMORY, allocation.handle,
                                      &mem);
    if (s != ANYDEV_SUCCESS) {
      return fail(s, op, "the native memory object of the buffer: ", last_error_message());
    }
    data = mem;
    byte_offset = allocation.object_offset() + buf->offset_bytes;
  }
  return guarded(op, [&] {
    auto* exported = new ExportedTensor;
    exported->shape.assign(shape, shape + ndim);
    exported->strides.assign(static_cast<std::size_t>(ndim), 1);
    for (int i = ndim - 2; i >= 0; --i) {
      exported->strides[i] = exported->strides[i + 1] * std::max<std::int64_t>(shape[i + 1], 1);
    }
    DLTensor& t = versioned ? exported->versioned.dl_tensor : exported->managed.dl_tensor;
    t.data = data;
    t.device = DLDevice{static_cast<DLDeviceType>(device_type), device_id};
    t.ndim = ndim;
    t.dtype = *dtype;
    t.shape = exported->shape.data();
    t.strides = exported->strides.data();
    t.byte_offset = byte_offset;
    exported->managed.manager_ctx = exported;
    exported->managed.deleter = delete_exported;
    exported->versioned.version = {ANYDEV_DLPACK_MAJOR_VERSION, ANYDEV_DLPACK_MINOR_VERSION};
    exported->versioned.manager_ctx = exported;
    exported->versioned.deleter = delete_exported_versioned;
    exported->versioned.flags = flags;
    anydev_buffer_retain(buf);
    exported->buffer = buf;
    *out = exported;
    return ANYDEV_SUCCESS;
  });
}

}  // namespace

extern "C" {

anydev_status_t anydev_buffer_to_dlpack(anydev_buffer_t buf, int ndim, const int64_t* shape,
                                        DLManagedTensor** out) {
  static constexpr const char* op = "anydev_buffer_to_dlpack";
  ANYDEV_REQUIRE_ARG(op, out);
  ExportedTensor* exported = nullptr;
  if (anydev_status_t s = export_tensor(op, buf, ndim, shape, false, 0, &exported);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  *out = &exported->managed;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_buffer_to_dlpack_versioned(anydev_buffer_t buf, int ndim,
                                                  const int64_t* shape, uint64_t flags,
                                                  anydev_dlpack_managed_tensor_versioned_t** out) {
  static constexpr const char* op = "anydev_buffer_to_dlpack_versioned";
  ANYDEV_REQUIRE_ARG(op, out);
  if ((flags & ~ANYDEV_DLPACK_FLAG_READ_ONLY) != 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "flags ", hex_text(flags),
                " hold bits other than ANYDEV_DLPACK_FLAG_READ_ONLY (0x1): anydev exports its "
                "memory without copying, so IS_COPIED (0x2) and unknown bits cannot be set");
  }
  ExportedTensor* exported = nullptr;
  if (anydev_status_t s = export_tensor(op, buf, ndim, shape, true, flags, &exported);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  *out = &exported->versioned;
  return ANYDEV_SUCCESS;
}

}  // extern "C"

namespace {

// What check_tensor learns about a tensor: its anydev dtype, its element
// count and its size in bytes.
struct TensorExtent {
  anydev_dtype_t dtype{};
  std::size_t count = 0;
  std::size_t bytes = 0;
};

// The tensor's DLPack device, read as an int: a C producer may store any
// value there, and loading an out-of-range value as the C++ enum would be
// undefined behaviour.
int dlpack_device_type(const DLTensor& t) {
  int device_type = 0;
  static_assert(sizeof(device_type) == sizeof(t.device.device_type));
  std::memcpy(&device_type, &t.device.device_type, sizeof(device_type));
  return device_type;
}

// Finds what provides the tensor's device into *found. Asked first: the
// context's backend, then (for a tensor anydev exported) the exporting
// buffer's backend, since several backends may declare the same DLPack
// device type (kDLExtDev).
anydev_status_t find_source(const char* op, anydev_context_t ctx, const DLTensor& t,
                            const ExportedTensor* exported, DlpackSource* found) {
  const Backend* first[2] = {ctx != nullptr ? ctx->state->backend : nullptr,
                             exported != nullptr ? exported->buffer->allocation->backend : nullptr};
  return dlpack_source(op, dlpack_device_type(t), t.device.device_id, first, found);
}

// Checks that the strides of a tensor with elements are row-major
// contiguous (dimensions of extent 1 may have any stride).
anydev_status_t check_contiguous(const char* op, const DLTensor& t) {
  std::int64_t expected = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) {
      return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the tensor is not row-major contiguous: shape ",
                  shape_text(t.ndim, t.shape), ", strides ", shape_text(t.ndim, t.strides),
                  " (dimension ", i, " needs stride ", expected,
                  "); make it contiguous first (e.g. .contiguous() or numpy.ascontiguousarray)");
    }
    expected *= t.shape[i];
  }
  return ANYDEV_SUCCESS;
}

// Checks that the tensor's dtype, shape, strides and data describe one
// contiguous, aligned range of addresses anydev can hold, and fills *out.
anydev_status_t check_tensor(const char* op, const DLTensor& t, TensorExtent* out) {
  const auto dtype = from_dlpack_dtype(t.dtype);
  if (!dtype) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the tensor's dtype (",
                describe_dlpack_dtype(t.dtype),
                ") has no anydev dtype (anydev takes int, uint, float, bfloat and complex "
                "types of its sizes, and kDLBool of 8 bits, with 1 lane)");
  }
  if (t.ndim < 0 || t.ndim > ANYDEV_DLPACK_MAX_NDIM) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the tensor's ndim ", t.ndim, " is outside 0..",
                ANYDEV_DLPACK_MAX_NDIM);
  }
  if (t.ndim > 0 && t.shape == nullptr) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the tensor has ndim ", t.ndim,
                " but a NULL shape");
  }
  std::size_t count = 0;
  if (anydev_status_t s = element_count(op, "the tensor's shape", t.ndim, t.shape, &count);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const DTypeTraits traits = *dtype_traits(*dtype);
  if (count > std::numeric_limits<std::size_t>::max() / traits.size) {
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "the tensor's ", count, " ", traits.name,
                " elements overflow a byte count");
  }
  const std::size_t bytes = count * traits.size;
  if (t.strides != nullptr && count > 0) {
    if (anydev_status_t s = check_contiguous(op, t); s != ANYDEV_SUCCESS) return s;
  }
  if (t.data == nullptr && bytes > 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the tensor's data is NULL but it holds ", count,
                " elements");
  }
  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  if ((base + t.byte_offset) % traits.alignment != 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the tensor's data ", t.data, " + byte_offset ",
                t.byte_offset, " is not aligned to ", traits.alignment, " bytes, as ", traits.name,
                " needs");
  }
  if (t.byte_offset > std::numeric_limits<std::size_t>::max() - bytes) {
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "the tensor's byte_offset ", t.byte_offset, " + ",
                bytes, " bytes overflow");
  }
  // The memory [data + byte_offset, + bytes) must be a range of addresses:
  // a sum past the end of the address space would wrap around.
  if (bytes > 0 && t.byte_offset + bytes > std::numeric_limits<std::uintptr_t>::max() - base) {
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "the tensor's data ", t.data, " + byte_offset ",
                t.byte_offset, " + ", bytes, " bytes runs past the end of the address space");
  }
  *out = TensorExtent{*dtype, count, bytes};
  return ANYDEV_SUCCESS;
}

// The context the buffer over the tensor belongs to, into *context: `ctx`
// when given (it must be on the source's device), else one on the source's
// device, or on the host-memory backend for a host tensor.
anydev_status_t resolve_context(const char* op, anydev_context_t ctx, const DLTensor& t,
                                const DlpackSource& source,
                                std::shared_ptr<const ContextState>* context) {
  const std::string device_text = describe_dlpack_device(dlpack_device_type(t));
  if (source.backend != nullptr) {
    if (ctx != nullptr &&
        (ctx->state->backend != source.backend || ctx->state->device != source.device)) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "a tensor on ", device_text, " device ",
                  t.device.device_id, " needs a context on ", source.backend->name, ":",
                  source.device, ", not ",
                  describe_device(ctx->state->backend, ctx->state->device));
    }
    return import_context(op, ctx, source.backend->name.c_str(), source.device, device_text,
                          context);
  }
  if (ctx == nullptr && source.host_default == nullptr) {
    return fail(ANYDEV_ERROR_BACKEND_UNAVAILABLE, op, "a ", device_text,
                " tensor without a context needs a backend whose device memory is host memory "
                "(kDLCPU); none is available\n",
                Registry::instance().describe_known());
  }
  return import_context(op, ctx, ctx != nullptr ? nullptr : source.host_default->name.c_str(), 0,
                        device_text, context);
}

// The backend memory kind of the tensor's memory as `context` sees it.
anydev_bk_memory_kind_t memory_kind(const DlpackSource& source, const ContextState& context) {
  const DeviceRecord& record = context.backend->devices[context.device];
  if (source.device_memory) return ANYDEV_BK_MEMORY_DEVICE;
  if (record.device_memory_is_host_accessible ||
      (source.pinned_by != nullptr && context.backend == source.pinned_by)) {
    return ANYDEV_BK_MEMORY_HOST;  // the backend's own kind of host memory
  }
  return ANYDEV_BK_MEMORY_USER_HOST;
}

// Makes the buffer over the checked tensor in `context`; `release` is called
// once its memory is no longer used (not on failure).
anydev_status_t make_buffer(const char* op, const DLTensor& t, const TensorExtent& extent,
                            const DlpackSource& source, std::shared_ptr<const ContextState> context,
                            std::function<void()> release, anydev_buffer_t* out) {
  const anydev_bk_memory_kind_t kind = memory_kind(source, *context);
  const std::size_t bytes = extent.bytes;
  return guarded(op, [&] {
    auto allocation = make_foreign_allocation(
        context->backend, context->device, kind, bytes == 0 ? nullptr : t.data,
        bytes == 0 ? 0 : static_cast<std::size_t>(t.byte_offset) + bytes, context->stream,
        std::move(release));
    auto* buf = new anydev_buffer_s;
    buf->fork_generation = fork_generation();
    buf->kind = source.device_memory ? ANYDEV_MEMORY_DEVICE : ANYDEV_MEMORY_HOST;
    buf->dtype = extent.dtype;
    buf->count = extent.count;
    buf->size_bytes = bytes;
    buf->offset_bytes = bytes == 0 ? 0 : static_cast<std::size_t>(t.byte_offset);
    buf->context = std::move(context);
    buf->allocation = std::move(allocation);
    *out = buf;
    return ANYDEV_SUCCESS;
  });
}

// Both imports: checks the tensor `t` and makes the buffer over it, which
// calls `release` (the tensor's deleter) once the memory is no longer used.
// `exported`: anydev's own tensor when it is one (its backend is asked
// first), else nullptr. On failure `release` is not called.
anydev_status_t import_tensor(const char* op, anydev_context_t ctx, const DLTensor& t,
                              const ExportedTensor* exported, std::function<void()> release,
                              anydev_buffer_t* out) {
  if (ctx != nullptr) {
    if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  }
  DlpackSource source;
  if (anydev_status_t s = find_source(op, ctx, t, exported, &source); s != ANYDEV_SUCCESS) {
    return s;
  }
  TensorExtent extent;
  if (anydev_status_t s = check_tensor(op, t, &extent); s != ANYDEV_SUCCESS) return s;
  std::shared_ptr<const ContextState> context;
  if (anydev_status_t s = resolve_context(op, ctx, t, source, &context); s != ANYDEV_SUCCESS) {
    return s;
  }
  return make_buffer(op, t, extent, source, std::move(context), std::move(release), out);
}

}  // namespace

extern "C" {

anydev_status_t anydev_buffer_from_dlpack(anydev_context_t ctx, DLManagedTensor* tensor,
                                          anydev_buffer_t* out) {
  static constexpr const char* op = "anydev_buffer_from_dlpack";
  ANYDEV_REQUIRE_ARG(op, tensor);
  ANYDEV_REQUIRE_ARG(op, out);
  const ExportedTensor* exported = tensor->deleter == delete_exported
                                       ? static_cast<ExportedTensor*>(tensor->manager_ctx)
                                       : nullptr;
  return import_tensor(
      op, ctx, tensor->dl_tensor, exported,
      [tensor] {
        if (tensor->deleter != nullptr) tensor->deleter(tensor);
      },
      out);
}

anydev_status_t anydev_buffer_from_dlpack_versioned(
    anydev_context_t ctx, anydev_dlpack_managed_tensor_versioned_t* tensor, anydev_buffer_t* out) {
  static constexpr const char* op = "anydev_buffer_from_dlpack_versioned";
  ANYDEV_REQUIRE_ARG(op, tensor);
  ANYDEV_REQUIRE_ARG(op, out);
  if (tensor->version.major != 1) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the tensor's DLPack version is ",
                tensor->version.major, ".", tensor->version.minor,
                "; anydev imports versioned tensors of major version 1");
  }
  if ((tensor->flags & ANYDEV_DLPACK_FLAG_READ_ONLY) != 0) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the tensor is read-only (flags ",
                hex_text(tensor->flags),
                " hold DLPACK_FLAG_BITMASK_READ_ONLY) and anydev buffers are writable; import a "
                "writable copy of it instead");
  }
  const std::uint64_t known = ANYDEV_DLPACK_FLAG_READ_ONLY | ANYDEV_DLPACK_FLAG_IS_COPIED;
  if ((tensor->flags & ~known) != 0) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the tensor's flags ", hex_text(tensor->flags),
                " hold bits DLPack 1.0 does not define (", hex_text(tensor->flags & ~known),
                "); anydev cannot tell what they ask of it");
  }
  const ExportedTensor* exported = tensor->deleter == delete_exported_versioned
                                       ? static_cast<ExportedTensor*>(tensor->manager_ctx)
                                       : nullptr;
  return import_tensor(
      op, ctx, tensor->dl_tensor, exported,
      [tensor] {
        if (tensor->deleter != nullptr) tensor->deleter(tensor);
      },
      out);
}

anydev_status_t anydev_buffer_make_ready(anydev_buffer_t buf, void* consumer_stream) {
  static constexpr const char* op = "anydev_buffer_make_ready";
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  Allocation& allocation = *view.allocation;
  const anydev_backend_table_t* table = allocation.backend->table;
  if (consumer_stream != nullptr && table->stream_wrap_native == nullptr) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the ", allocation.backend->name,
                " backend cannot wrap a consumer's native stream (", consumer_stream,
                "); pass NULL to wait on the host");
  }
  if (consumer_stream != nullptr) {
    if (anydev_status_t s = check_native_stream_value(op, allocation.backend->name,
                                                      allocation.backend->flags, consumer_stream);
        s != ANYDEV_SUCCESS) {
      return s;
    }
  }
  std::shared_ptr<Stream> last;
  {
    std::lock_guard lock(allocation.mutex);
    last = allocation.last_stream;
  }
  if (!last) return ANYDEV_SUCCESS;  // no anydev work ever used the memory
  anydev_bk_event_t event = nullptr;
  anydev_status_t s = bk(table).event_create(last->device, &event);
  if (s == ANYDEV_SUCCESS) s = bk(table).event_record(event, last->native);
  if (s == ANYDEV_SUCCESS && consumer_stream == nullptr) s = bk(table).event_synchronize(event);
  if (s == ANYDEV_SUCCESS && consumer_stream != nullptr) {
    anydev_bk_stream_t wrapped = nullptr;
    s = bk(table).stream_wrap_native(allocation.device, consumer_stream, &wrapped);
    if (s == ANYDEV_SUCCESS) {
      s = bk(table).stream_wait_event(wrapped, event);
      release_stream(allocation.backend, wrapped);  // off this thread; the native stays
    }
  }
  const std::string message = s == ANYDEV_SUCCESS ? "" : last_error_message();
  if (event != nullptr) bk(table).event_destroy(event);
  if (s != ANYDEV_SUCCESS) {
    return fail(s, op,
                consumer_stream == nullptr
                    ? cat("waiting for the work on the buffer")
                    : cat("making the consumer's stream ", consumer_stream, " wait for the buffer"),
                " on ", describe_device(allocation.backend, allocation.device), ": ", message);
  }
  return ANYDEV_SUCCESS;
}

}  // extern "C"
