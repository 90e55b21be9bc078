// SPDX-License-Identifier: Apache-2.0
// C entry points: contexts.
#include "anydev/anydev.h"
#include "api/api_common.h"
#include "api/capture.h"
#include "api/native_stream_value.h"
#include "api/taken_memory.h"
#include "runtime/device_selection.h"
#include "support/backend_calls.h"

using namespace anydev::core;

anydev_context_t anydev::core::new_context(std::shared_ptr<const ContextState> state) {
  auto* ctx = new anydev_context_s;
  ctx->fork_generation = fork_generation();
  ctx->state = std::move(state);
  ctx->stream = ctx->state->stream.get();
  return ctx;
}

namespace {

// Checks a context handle argument: non-NULL and not from before a fork.
#define ANYDEV_CHECK_CONTEXT(op, ctx)                                                         \
  do {                                                                                        \
    ANYDEV_REQUIRE_ARG(op, ctx);                                                              \
    if (anydev_status_t s_ = check_fork(op, ctx, "context"); s_ != ANYDEV_SUCCESS) return s_; \
  } while (0)

anydev_status_t same_device(const char* op, const ContextState& a, const ContextState& b,
                            const char* what) {
  if (a.backend != b.backend || a.device != b.device) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the ", what, " is on ",
                describe_device(b.backend, b.device), " but the context is on ",
                describe_device(a.backend, a.device));
  }
  return ANYDEV_SUCCESS;
}

// -1 is the one "default device" value; any other negative index is an
// error, never device 0 in silence.
anydev_status_t check_device_index(const char* op, int device) {
  if (device >= -1) return ANYDEV_SUCCESS;
  return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "device index ", device,
              " is negative (pass an index >= 0, or -1 for the default device)");
}

}  // namespace

extern "C" {

anydev_status_t anydev_context_create(const char* api, int device, anydev_context_t* out) {
  static constexpr const char* op = "anydev_context_create";
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_device_index(op, device); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] {
    const Backend* backend = nullptr;
    int index = 0;
    if (anydev_status_t s = select_device(op, api, device, &backend, &index); s != ANYDEV_SUCCESS) {
      return s;
    }
    std::shared_ptr<Stream> stream;
    if (anydev_status_t s = create_stream(backend, index, &stream); s != ANYDEV_SUCCESS) {
      return fail(s, op, "creating the stream on ", describe_device(backend, index), ": ",
                  last_error_message());
    }
    *out = new_context(std::make_shared<const ContextState>(ContextState{backend, index, stream}));
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_wrap_native_stream(const char* api, int device, void* native_stream,
                                                  anydev_context_t* out) {
  static constexpr const char* op = "anydev_context_wrap_native_stream";
  ANYDEV_REQUIRE_ARG(op, api);
  ANYDEV_REQUIRE_ARG(op, native_stream);
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_device_index(op, device); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] {
    const Backend* backend = nullptr;
    int index = 0;
    if (anydev_status_t s = select_device(op, api, device, &backend, &index); s != ANYDEV_SUCCESS) {
      return s;
    }
    if (backend->table->stream_wrap_native == nullptr) {
      return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the ", backend->name,
                  " backend cannot wrap native streams");
    }
    if (anydev_status_t s =
            check_native_stream_value(op, backend->name, backend->flags, native_stream);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    anydev_bk_stream_t wrapped = nullptr;
    if (anydev_status_t s = bk(backend->table).stream_wrap_native(index, native_stream, &wrapped);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    auto stream = adopt_stream(backend, index, wrapped);
    *out = new_context(std::make_shared<const ContextState>(ContextState{backend, index, stream}));
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_retain(anydev_context_t ctx) {
  return retain_handle("anydev_context_retain", ctx);
}

anydev_status_t anydev_context_release(anydev_context_t ctx) {
  return release_handle("anydev_context_release", ctx);
}

anydev_status_t anydev_context_api(anydev_context_t ctx, const char** out) {
  static constexpr const char* op = "anydev_context_api";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  *out = ctx->state->backend->name.c_str();
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_context_device_name(anydev_context_t ctx, const char** out) {
  static constexpr const char* op = "anydev_context_device_name";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  *out = ctx->state->backend->devices[ctx->state->device].name.c_str();
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_context_device_description(anydev_context_t ctx, const char** out) {
  static constexpr const char* op = "anydev_context_device_description";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  *out = ctx->state->backend->devices[ctx->state->device].description.c_str();
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_context_device_id(anydev_context_t ctx, int* out) {
  static constexpr const char* op = "anydev_context_device_id";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  *out = ctx->state->device;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_context_memory_info(anydev_context_t ctx, anydev_memory_info_t* out) {
  static constexpr const char* op = "anydev_context_memory_info";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  if (out->struct_size < sizeof(anydev_memory_info_t)) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "out->struct_size is ", out->struct_size,
                ", expected at least ", sizeof(anydev_memory_info_t));
  }
  std::size_t free_bytes = 0, total_bytes = 0;
  const ContextState& state = *ctx->state;
  if (anydev_status_t s =
          bk(state.backend->table).memory_info(state.device, &free_bytes, &total_bytes);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  out->free_bytes = free_bytes;
  out->total_bytes = total_bytes;
  return ANYDEV_SUCCESS;
}

[[gnu::hot]] anydev_status_t anydev_context_synchronize(anydev_context_t ctx) {
  static constexpr const char* op = "anydev_context_synchronize";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  Stream& stream = *ctx->stream;
  if (anydev_status_t s = check_not_capturing(op, stream, "synchronizing it");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  return bk(stream.table).stream_synchronize(stream.native);
}

anydev_status_t anydev_context_stream(anydev_context_t ctx, anydev_stream_t* out) {
  static constexpr const char* op = "anydev_context_stream";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  return guarded(op, [&] {
    auto* stream = new anydev_stream_s;
    stream->fork_generation = fork_generation();
    stream->stream = ctx->state->stream;
    *out = stream;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_create_stream(anydev_context_t ctx, anydev_stream_t* out) {
  static constexpr const char* op = "anydev_context_create_stream";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  return guarded(op, [&] {
    std::shared_ptr<Stream> created;
    if (anydev_status_t s = create_stream(ctx->state->backend, ctx->state->device, &created);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    auto* stream = new anydev_stream_s;
    stream->fork_generation = fork_generation();
    stream->stream = std::move(created);
    *out = stream;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_with_stream(anydev_context_t ctx, anydev_stream_t stream,
                                           anydev_context_t* out) {
  static constexpr const char* op = "anydev_context_with_stream";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_REQUIRE_ARG(op, stream);
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_fork(op, stream, "stream"); s != ANYDEV_SUCCESS) return s;
  const ContextState& state = *ctx->state;
  const ContextState other{stream->stream->backend, stream->stream->device, stream->stream};
  if (anydev_status_t s = same_device(op, state, other, "stream"); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] {
    *out = new_context(std::make_shared<const ContextState>(other));
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_create_event(anydev_context_t ctx, anydev_event_t* out) {
  static constexpr const char* op = "anydev_context_create_event";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  return guarded(op, [&] {
    const ContextState& state = *ctx->state;
    anydev_bk_event_t native = nullptr;
    if (anydev_status_t s = bk(state.backend->table).event_create(state.device, &native);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    auto* event = new anydev_event_s;
    event->fork_generation = fork_generation();
    event->backend = state.backend;
    event->device = state.device;
    event->native = native;
    *out = event;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_wait_for(anydev_context_t ctx, anydev_context_t other) {
  static constexpr const char* op = "anydev_context_wait_for";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_CHECK_CONTEXT(op, other);
  const ContextState& a = *ctx->state;
  const ContextState& b = *other->state;
  if (a.backend != b.backend) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "cannot wait for a context of backend ",
                b.backend->name, " on a stream of backend ", a.backend->name);
  }
  if (anydev_status_t s = check_not_capturing(op, *a.stream, "waiting for another stream on it");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (anydev_status_t s = check_not_capturing(op, *b.stream, "marking the point to wait for on it");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  return order_after(*a.stream, *b.stream);
}

anydev_status_t anydev_context_can_access(anydev_context_t ctx, anydev_context_t peer, int* out) {
  static constexpr const char* op = "anydev_context_can_access";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_CHECK_CONTEXT(op, peer);
  ANYDEV_REQUIRE_ARG(op, out);
  const ContextState& a = *ctx->state;
  const ContextState& b = *peer->state;
  if (a.backend != b.backend || a.device == b.device) {
    *out = 0;
    return ANYDEV_SUCCESS;
  }
  int can = 0;
  if (anydev_status_t s = bk(a.backend->table).can_access_peer(a.device, b.device, &can);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  *out = can ? 1 : 0;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_context_enable_peer_access(anydev_context_t ctx, anydev_context_t peer) {
  static constexpr const char* op = "anydev_context_enable_peer_access";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_CHECK_CONTEXT(op, peer);
  const ContextState& a = *ctx->state;
  const ContextState& b = *peer->state;
  if (a.backend != b.backend) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "peer access between backends ", a.backend->name,
                " and ", b.backend->name, " is impossible");
  }
  if (a.device == b.device) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "a device is not its own peer (",
                describe_device(a.backend, a.device), ")");
  }
  const anydev_status_t s = bk(a.backend->table).enable_peer_access(a.device, b.device);
  if (s == ANYDEV_SUCCESS && layers::validation_enabled()) {
    layers::note_peer_enabled(a.backend, a.device, b.device);
  }
  return s;
}

anydev_status_t anydev_context_free(anydev_context_t ctx, void* taken) {
  static constexpr const char* op = "anydev_context_free";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_REQUIRE_ARG(op, taken);
  return guarded(op, [&] {
    const ContextState& state = *ctx->state;
    std::shared_ptr<Allocation> allocation = forget_taken(state.backend, state.device, taken);
    if (!allocation) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "pointer ", taken, " is not memory taken ",
                  "with take_ptr(): ", explain_not_taken(state.backend, state.device, taken));
    }
    {
      std::lock_guard lock(allocation->mutex);
      allocation->owner_stream = state.stream;
      // Work on the taken pointer was enqueued outside anydev: a shared
      // release event must be recorded after now.
      allocation->use_epoch = state.stream->release.epoch();
    }
    allocation.reset();  // stream-ordered release on ctx's stream
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_native_handle(anydev_context_t ctx, anydev_native_kind_t kind,
                                             void** out) {
  static constexpr const char* op = "anydev_context_native_handle";
  ANYDEV_CHECK_CONTEXT(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  const ContextState& state = *ctx->state;
  if (kind != ANYDEV_NATIVE_DEVICE && kind != ANYDEV_NATIVE_CONTEXT) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "kind ", static_cast<int>(kind),
                " is not ANYDEV_NATIVE_DEVICE or ANYDEV_NATIVE_CONTEXT");
  }
  if (state.backend->table->native_handle == nullptr) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the ", state.backend->name,
                " backend has no native handles");
  }
  return bk(state.backend->table).native_handle(state.device, kind, nullptr, out);
}

}  // extern "C"
