// SPDX-License-Identifier: Apache-2.0
// C entry points: buffers and events shared between processes
// (docs/sharing.md). The handle's bytes are support/share_handle.h's, the
// memory's lifetime memory/shared_memory.h's; the backend opens and maps.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "anydev/anydev.h"
#include "api/buffer_access.h"
#include "memory/shared_memory.h"
#include "support/backend_calls.h"
#include "support/dtype.h"
#include "support/range_check.h"
#include "support/share_handle.h"
#include "support/share_transport.h"

using namespace anydev::core;

namespace {

const char* kind_name(anydev_memory_kind_t kind) {
  return kind == ANYDEV_MEMORY_HOST ? "host" : "device";
}

anydev_bk_memory_kind_t to_bk(anydev_memory_kind_t kind) {
  return kind == ANYDEV_MEMORY_HOST ? ANYDEV_BK_MEMORY_HOST : ANYDEV_BK_MEMORY_DEVICE;
}

// UNSUPPORTED naming the entry the backend lacks. A backend that has the
// entry but cannot share (opencl) answers UNSUPPORTED itself, with its reason.
anydev_status_t require_entry(const char* op, const Backend* backend, bool present,
                              const char* entry, const char* what) {
  if (present) return ANYDEV_SUCCESS;
  return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the ", backend->name, " backend does not share ", what,
              " between processes (its table has no ", entry, " entry)");
}

// Fills `out` from `record` and a backend description whose fds are kept
// by the core: the handle gets its own duplicates.
anydev_status_t fill_handle(const char* op, ShareRecord& record, const anydev_bk_share_t& share,
                            anydev_share_handle_t* out) {
  if (share.fd_count > ANYDEV_BK_SHARE_MAX_FDS ||
      share.payload_size > ANYDEV_BK_SHARE_PAYLOAD_MAX) {
    return fail(ANYDEV_ERROR_INTERNAL, op, "the ", record.backend, " backend described the ",
                shared_object_name(record.object), " with ", share.fd_count, " fds and a ",
                share.payload_size, "-byte payload; at most ", ANYDEV_BK_SHARE_MAX_FDS, " and ",
                ANYDEV_BK_SHARE_PAYLOAD_MAX);
  }
  record.exporter_pid = static_cast<std::int32_t>(::getpid());
  record.fd_count = share.fd_count;
  record.payload_size = share.payload_size;
  std::memcpy(record.payload, share.payload, share.payload_size);
  int fds[ANYDEV_SHARE_MAX_FDS] = {-1, -1};
  for (std::uint32_t i = 0; i < share.fd_count; ++i) {
    record.exporter_fds[i] = share.fds[i];
    fds[i] = ::fcntl(share.fds[i], F_DUPFD_CLOEXEC, 0);
    if (fds[i] < 0) {
      const int error = errno;
      for (std::uint32_t j = 0; j < i; ++j) ::close(fds[j]);
      return fail(ANYDEV_ERROR_OUT_OF_MEMORY, op, "duplicating file descriptor ", share.fds[i],
                  " failed: ", std::strerror(error), " (errno ", error, ")");
    }
  }
  encode_share_record(record, out->data);
  out->fd_count = share.fd_count;
  for (int i = 0; i < ANYDEV_SHARE_MAX_FDS; ++i) out->fds[i] = fds[i];
  return ANYDEV_SUCCESS;
}

// Decodes `handle` for an import of `object` into `state`'s backend and
// fills `share` with the payload and the handle's (borrowed) fds.
anydev_status_t read_handle(const char* op, const ContextState& state,
                            const anydev_share_handle_t& handle, SharedObject object,
                            ShareRecord* record, anydev_bk_share_t* share) {
  std::string why;
  std::optional<ShareRecord> decoded = decode_share_record(handle.data, &why);
  if (!decoded) return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the handle is damaged: ", why);
  if (decoded->object != object) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the handle describes ",
                shared_object_name(decoded->object), ", not ", shared_object_name(object));
  }
  if (decoded->backend != state.backend->name) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the handle is of the ", decoded->backend,
                " backend (device ", decoded->device, ") but the context is on ",
                describe_device(state.backend, state.device));
  }
  if (handle.fd_count != decoded->fd_count) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the handle carries ", handle.fd_count,
                " file descriptor(s) but its exporter gave ", decoded->fd_count,
                " (send them with anydev_share_handle_send, or fetch them with "
                "anydev_share_handle_fetch_fds)");
  }
  for (std::uint32_t i = 0; i < handle.fd_count; ++i) {
    if (!fd_is_open(handle.fds[i])) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "handle->fds[", i, "] = ", handle.fds[i],
                  " is not an open file descriptor (closed, or never received)");
    }
  }
  *share = anydev_bk_share_t{};
  share->struct_size = sizeof *share;
  share->payload_size = decoded->payload_size;
  std::memcpy(share->payload, decoded->payload, decoded->payload_size);
  share->fd_count = handle.fd_count;
  for (int i = 0; i < ANYDEV_BK_SHARE_MAX_FDS; ++i) {
    share->fds[i] = static_cast<std::uint32_t>(i) < handle.fd_count ? handle.fds[i] : -1;
  }
  *record = std::move(*decoded);
  return ANYDEV_SUCCESS;
}

anydev_buffer_t new_buffer(anydev_memory_kind_t kind, anydev_dtype_t dtype, std::size_t count,
                           std::size_t size_bytes, std::size_t offset_bytes,
                           std::shared_ptr<const ContextState> context,
                           std::shared_ptr<Allocation> allocation) {
  auto* buf = new anydev_buffer_s;
  buf->fork_generation = fork_generation();
  buf->kind = kind;
  buf->dtype = dtype;
  buf->count = count;
  buf->size_bytes = size_bytes;
  buf->offset_bytes = offset_bytes;
  buf->context = std::move(context);
  buf->allocation = std::move(allocation);
  return buf;
}

anydev_event_t new_event(const ContextState& state, anydev_bk_event_t native) {
  auto* event = new anydev_event_s;
  event->fork_generation = fork_generation();
  event->backend = state.backend;
  event->device = state.device;
  event->native = native;
  event->share = std::make_shared<ShareState>();
  return event;
}

}  // namespace

extern "C" {

anydev_status_t anydev_buffer_create_shareable(anydev_context_t ctx, anydev_memory_kind_t kind,
                                               anydev_dtype_t dtype, size_t count,
                                               anydev_buffer_t* out) {
  static constexpr const char* op = "anydev_buffer_create_shareable";
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
  if (count == 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op,
                "count is 0: a shareable buffer holds at least one element");
  }
  std::size_t bytes = 0;
  if (auto error = check_byte_count(op, count, traits->size, &bytes)) {
    return set_error(error->status, error->message);
  }
  const ContextState& state = *ctx->state;
  const anydev_backend_table_t* table = state.backend->table;
  if (anydev_status_t s = require_entry(
          op, state.backend, table->shareable_alloc != nullptr && table->memory_unshare != nullptr,
          table->shareable_alloc == nullptr ? "shareable_alloc" : "memory_unshare", "memory");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  return guarded(op, [&] {
    const anydev_bk_memory_kind_t bk_kind = to_bk(kind);
    void* handle = nullptr;
    void* address = nullptr;
    if (anydev_status_t s = bk(state.backend->table)
                                .shareable_alloc(state.device, bk_kind, bytes, &handle, &address);
        s != ANYDEV_SUCCESS) {
      return fail(s, op, "allocating ", count, " shareable ", traits->name, " elements (", bytes,
                  " bytes) of ", kind_name(kind), " memory on ",
                  describe_device(state.backend, state.device), ": ", last_error_message());
    }
    std::shared_ptr<Allocation> allocation;
    try {
      allocation = make_shared_allocation(state.backend, state.device, bk_kind, handle, address,
                                          bytes, state.stream);
    } catch (...) {
      bk(state.backend->table).memory_unshare(state.device, bk_kind, handle);
      throw;
    }
    *out = new_buffer(kind, dtype, count, bytes, 0, ctx->state, std::move(allocation));
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_buffer_export(anydev_buffer_t buf, anydev_share_handle_t* out) {
  static constexpr const char* op = "anydev_buffer_export";
  ANYDEV_REQUIRE_ARG(op, out);
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  Allocation& allocation = *view.allocation;
  ShareState* const state = share_state_of(allocation);
  if (state == nullptr) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the buffer's memory on ",
                describe_device(allocation.backend, allocation.device),
                " is not shareable: create it with anydev_buffer_create_shareable (or import "
                "it) to export it");
  }
  const anydev_backend_table_t* table = allocation.backend->table;
  if (anydev_status_t s = require_entry(op, allocation.backend, table->memory_export != nullptr,
                                        "memory_export", "memory");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  return guarded(op, [&] {
    anydev_bk_share_t share;
    if (anydev_status_t s = state->describe(
            [&](anydev_bk_share_t* fresh) {
              return bk(table).memory_export(allocation.device, allocation.kind, allocation.handle,
                                             fresh);
            },
            &share);
        s != ANYDEV_SUCCESS) {
      return fail(s, op, "exporting ", allocation.bytes, " bytes on ",
                  describe_device(allocation.backend, allocation.device), ": ",
                  last_error_message());
    }
    ShareRecord record;
    record.object = SharedObject::memory;
    record.backend = allocation.backend->name;
    record.device = allocation.device;
    record.memory_kind = buf->kind;
    record.dtype = buf->dtype;
    record.count = buf->count;
    record.offset_bytes = buf->offset_bytes;
    record.allocation_bytes = allocation.bytes;
    return fill_handle(op, record, share, out);
  });
}

anydev_status_t anydev_buffer_import(anydev_context_t ctx, const anydev_share_handle_t* handle,
                                     anydev_buffer_t* out) {
  static constexpr const char* op = "anydev_buffer_import";
  ANYDEV_REQUIRE_ARG(op, ctx);
  ANYDEV_REQUIRE_ARG(op, handle);
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  const ContextState& state = *ctx->state;
  ShareRecord record;
  anydev_bk_share_t share;
  if (anydev_status_t s = read_handle(op, state, *handle, SharedObject::memory, &record, &share);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const auto kind = static_cast<anydev_memory_kind_t>(record.memory_kind);
  const auto dtype = static_cast<anydev_dtype_t>(record.dtype);
  const auto traits = dtype_traits(dtype);
  if ((kind != ANYDEV_MEMORY_HOST && kind != ANYDEV_MEMORY_DEVICE) || !traits) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the handle names memory kind ",
                record.memory_kind, " and dtype ", record.dtype,
                ", which this anydev does not know");
  }
  std::size_t view_bytes = 0;
  if (record.count > SIZE_MAX / traits->size ||
      (view_bytes = record.count * traits->size,
       record.offset_bytes > record.allocation_bytes ||
           view_bytes > record.allocation_bytes - record.offset_bytes) ||
      record.offset_bytes % traits->alignment != 0 || record.allocation_bytes == 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the handle's view (", record.count, " ",
                traits->name, " elements at byte ", record.offset_bytes,
                ") does not lie aligned inside its ", record.allocation_bytes, "-byte allocation");
  }
  const anydev_backend_table_t* table = state.backend->table;
  if (anydev_status_t s = require_entry(op, state.backend, table->memory_import != nullptr,
                                        "memory_import", "memory");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  return guarded(op, [&] {
    const anydev_bk_memory_kind_t bk_kind = to_bk(kind);
    void* mapped = nullptr;
    void* address = nullptr;
    if (anydev_status_t s = bk(state.backend->table)
                                .memory_import(state.device, bk_kind, &share,
                                               record.allocation_bytes, &mapped, &address);
        s != ANYDEV_SUCCESS) {
      return fail(s, op, "opening ", record.allocation_bytes, " bytes of ", kind_name(kind),
                  " memory exported by process ", record.exporter_pid, " on ",
                  describe_device(state.backend, state.device), ": ", last_error_message());
    }
    if (table->memory_unshare == nullptr) {
      return fail(ANYDEV_ERROR_INTERNAL, op, "the ", state.backend->name,
                  " backend imported memory but has no memory_unshare entry to release it");
    }
    std::shared_ptr<Allocation> allocation;
    try {
      allocation = make_shared_allocation(state.backend, state.device, bk_kind, mapped, address,
                                          record.allocation_bytes, state.stream);
    } catch (...) {
      bk(state.backend->table).memory_unshare(state.device, bk_kind, mapped);
      throw;
    }
    *out = new_buffer(kind, dtype, record.count, view_bytes, record.offset_bytes, ctx->state,
                      std::move(allocation));
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_create_shareable_event(anydev_context_t ctx, anydev_event_t* out) {
  static constexpr const char* op = "anydev_context_create_shareable_event";
  ANYDEV_REQUIRE_ARG(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  const ContextState& state = *ctx->state;
  if (anydev_status_t s =
          require_entry(op, state.backend, state.backend->table->event_create_shareable != nullptr,
                        "event_create_shareable", "events");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  return guarded(op, [&] {
    anydev_bk_event_t native = nullptr;
    if (anydev_status_t s = bk(state.backend->table).event_create_shareable(state.device, &native);
        s != ANYDEV_SUCCESS) {
      return fail(s, op, "on ", describe_device(state.backend, state.device), ": ",
                  last_error_message());
    }
    try {
      *out = new_event(state, native);
    } catch (...) {
      bk(state.backend->table).event_destroy(native);
      throw;
    }
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_event_export(anydev_event_t event, anydev_share_handle_t* out) {
  static constexpr const char* op = "anydev_event_export";
  ANYDEV_REQUIRE_ARG(op, event);
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_fork(op, event, "event"); s != ANYDEV_SUCCESS) return s;
  if (!event->share) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the event on ",
                describe_device(event->backend, event->device),
                " is not shareable: create it with anydev_context_create_shareable_event (or "
                "import it) to export it");
  }
  const anydev_backend_table_t* table = event->backend->table;
  if (anydev_status_t s = require_entry(op, event->backend, table->event_export != nullptr,
                                        "event_export", "events");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  return guarded(op, [&] {
    anydev_bk_share_t share;
    if (anydev_status_t s = event->share->describe(
            [&](anydev_bk_share_t* fresh) { return bk(table).event_export(event->native, fresh); },
            &share);
        s != ANYDEV_SUCCESS) {
      return fail(s, op, "on ", describe_device(event->backend, event->device), ": ",
                  last_error_message());
    }
    ShareRecord record;
    record.object = SharedObject::event;
    record.backend = event->backend->name;
    record.device = event->device;
    return fill_handle(op, record, share, out);
  });
}

anydev_status_t anydev_event_import(anydev_context_t ctx, const anydev_share_handle_t* handle,
                                    anydev_event_t* out) {
  static constexpr const char* op = "anydev_event_import";
  ANYDEV_REQUIRE_ARG(op, ctx);
  ANYDEV_REQUIRE_ARG(op, handle);
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  const ContextState& state = *ctx->state;
  ShareRecord record;
  anydev_bk_share_t share;
  if (anydev_status_t s = read_handle(op, state, *handle, SharedObject::event, &record, &share);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (anydev_status_t s =
          require_entry(op, state.backend, state.backend->table->event_import != nullptr,
                        "event_import", "events");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  return guarded(op, [&] {
    anydev_bk_event_t native = nullptr;
    if (anydev_status_t s = bk(state.backend->table).event_import(state.device, &share, &native);
        s != ANYDEV_SUCCESS) {
      return fail(s, op, "opening the event exported by process ", record.exporter_pid, " on ",
                  describe_device(state.backend, state.device), ": ", last_error_message());
    }
    try {
      *out = new_event(state, native);
    } catch (...) {
      bk(state.backend->table).event_destroy(native);
      throw;
    }
    return ANYDEV_SUCCESS;
  });
}

void anydev_share_handle_close(anydev_share_handle_t* handle) {
  if (handle == nullptr) return;
  for (int& fd : handle->fds) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  handle->fd_count = 0;
}

anydev_status_t anydev_share_handle_send(int socket, const anydev_share_handle_t* handle) {
  static constexpr const char* op = "anydev_share_handle_send";
  ANYDEV_REQUIRE_ARG(op, handle);
  return guarded(op, [&] { return send_share_handle(op, socket, *handle); });
}

anydev_status_t anydev_share_handle_receive(int socket, anydev_share_handle_t* out) {
  static constexpr const char* op = "anydev_share_handle_receive";
  ANYDEV_REQUIRE_ARG(op, out);
  return guarded(op, [&] { return receive_share_handle(op, socket, out); });
}

anydev_status_t anydev_share_handle_fetch_fds(anydev_share_handle_t* handle) {
  static constexpr const char* op = "anydev_share_handle_fetch_fds";
  ANYDEV_REQUIRE_ARG(op, handle);
  std::string why;
  const std::optional<ShareRecord> record = decode_share_record(handle->data, &why);
  if (!record) return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the handle is damaged: ", why);
  return guarded(op, [&] {
    int fds[ANYDEV_SHARE_MAX_FDS] = {-1, -1};
    for (std::uint32_t i = 0; i < record->fd_count; ++i) {
      if (anydev_status_t s =
              fetch_process_fd(op, record->exporter_pid, record->exporter_fds[i], &fds[i]);
          s != ANYDEV_SUCCESS) {
        for (std::uint32_t j = 0; j < i; ++j) ::close(fds[j]);
        return s;
      }
    }
    anydev_share_handle_close(handle);
    handle->fd_count = record->fd_count;
    for (int i = 0; i < ANYDEV_SHARE_MAX_FDS; ++i) handle->fds[i] = fds[i];
    return ANYDEV_SUCCESS;
  });
}

}  // extern "C"
