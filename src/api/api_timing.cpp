// SPDX-License-Identifier: Apache-2.0
// C entry points: timed events (flags, elapsed time, execution_time).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "anydev/anydev.h"
#include "api/api_common.h"
#include "api/capture.h"
#include "api/event_timing.h"
#include "support/backend_calls.h"

using namespace anydev::core;

namespace {

constexpr unsigned kKnownEventFlags = ANYDEV_EVENT_TIMING | ANYDEV_EVENT_BLOCKING_SYNC;

#define ANYDEV_CHECK_TIMING_HANDLE(op, handle, what)                                        \
  do {                                                                                      \
    ANYDEV_REQUIRE_ARG(op, handle);                                                         \
    if (anydev_status_t s_ = check_fork(op, handle, what); s_ != ANYDEV_SUCCESS) return s_; \
  } while (0)

// The checks elapsed_time makes of one of its events, before the backend.
anydev_status_t check_timed(const char* op, const anydev_event_s& event, const char* which) {
  if ((event.flags & ANYDEV_EVENT_TIMING) == 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the ", which, " event (",
                describe_device(event.backend, event.device),
                ") was created without ANYDEV_EVENT_TIMING; create it with "
                "anydev_context_create_event_with_flags(ctx, ANYDEV_EVENT_TIMING, ...)");
  }
  if (!event.recorded.load(std::memory_order_acquire)) {
    return fail(ANYDEV_ERROR_INVALID_STATE, op, "the ", which, " event (",
                describe_device(event.backend, event.device),
                ") was never recorded: record it on a stream first");
  }
  return ANYDEV_SUCCESS;
}

// Releases an event handle at the end of a scope.
struct EventGuard {
  anydev_event_t event = nullptr;
  ~EventGuard() {
    if (event != nullptr) anydev_event_release(event);
  }
};

}  // namespace

anydev_status_t anydev::core::synchronize_by_polling(const anydev_event_s& event) {
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    int complete = 0;
    if (anydev_status_t s = bk(event.backend->table).event_query(event.native, &complete);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    if (complete != 0) return ANYDEV_SUCCESS;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

extern "C" {

anydev_status_t anydev_context_create_event_with_flags(anydev_context_t ctx, unsigned flags,
                                                       anydev_event_t* out) {
  static constexpr const char* op = "anydev_context_create_event_with_flags";
  ANYDEV_CHECK_TIMING_HANDLE(op, ctx, "context");
  ANYDEV_REQUIRE_ARG(op, out);
  if ((flags & ~kKnownEventFlags) != 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown event flag bits ",
                flags & ~kKnownEventFlags, " in flags ", flags,
                " (known: ANYDEV_EVENT_TIMING 1, ANYDEV_EVENT_BLOCKING_SYNC 2)");
  }
  if (flags == 0) return anydev_context_create_event(ctx, out);
  return guarded(op, [&] {
    const ContextState& state = *ctx->state;
    const anydev_backend_table_t* table = state.backend->table;
    anydev_bk_event_t native = nullptr;
    bool emulated = false;
    anydev_status_t s = ANYDEV_BK_DECLINED;
    if (table->event_create_flags != nullptr) {
      s = bk(table).event_create_flags(state.device, flags, &native);
    }
    if (s == ANYDEV_BK_DECLINED) {
      if ((flags & ANYDEV_EVENT_TIMING) != 0) {
        return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the ", state.backend->name,
                    " backend cannot time events on ", describe_device(state.backend, state.device),
                    " (it offers no timed events: backend entry event_create_flags)");
      }
      s = bk(table).event_create(state.device, &native);
      emulated = true;
    }
    if (s != ANYDEV_SUCCESS) return s;
    auto* event = new anydev_event_s;
    event->fork_generation = fork_generation();
    event->backend = state.backend;
    event->device = state.device;
    event->native = native;
    event->flags = flags;
    event->emulated_blocking_sync = emulated;
    *out = event;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_event_flags(anydev_event_t event, unsigned* out) {
  static constexpr const char* op = "anydev_event_flags";
  ANYDEV_CHECK_TIMING_HANDLE(op, event, "event");
  ANYDEV_REQUIRE_ARG(op, out);
  *out = event->flags;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_event_elapsed_time(anydev_event_t start, anydev_event_t end, float* ms) {
  static constexpr const char* op = "anydev_event_elapsed_time";
  ANYDEV_CHECK_TIMING_HANDLE(op, start, "event");
  ANYDEV_CHECK_TIMING_HANDLE(op, end, "event");
  ANYDEV_REQUIRE_ARG(op, ms);
  if (start->backend != end->backend || start->device != end->device) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the start event belongs to ",
                describe_device(start->backend, start->device), " but the end event to ",
                describe_device(end->backend, end->device));
  }
  if (anydev_status_t s = check_timed(op, *start, "start"); s != ANYDEV_SUCCESS) return s;
  if (anydev_status_t s = check_timed(op, *end, "end"); s != ANYDEV_SUCCESS) return s;
  const anydev_backend_table_t* table = start->backend->table;
  if (table->event_elapsed_time == nullptr) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the ", start->backend->name,
                " backend cannot measure time between events (no event_elapsed_time entry)");
  }
  float got = 0.0F;
  if (anydev_status_t s = bk(table).event_elapsed_time(start->native, end->native, &got);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (!std::isfinite(got)) {
    return fail(ANYDEV_ERROR_INTERNAL, op, "the ", start->backend->name,
                " backend measured a time that is not a finite number");
  }
  *ms = got;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_context_execution_time(anydev_context_t ctx, anydev_timed_fn_t fn,
                                              void* user_data, size_t iterations,
                                              int64_t* nanoseconds) {
  static constexpr const char* op = "anydev_context_execution_time";
  ANYDEV_CHECK_TIMING_HANDLE(op, ctx, "context");
  ANYDEV_REQUIRE_ARG(op, fn);
  ANYDEV_REQUIRE_ARG(op, nanoseconds);
  if (iterations == 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "iterations is 0 (time at least one call)");
  }
  if (anydev_status_t s = check_not_capturing(op, *ctx->stream, "timing work on it");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  EventGuard start;
  EventGuard end;
  anydev_stream_t stream = nullptr;
  if (anydev_status_t s =
          anydev_context_create_event_with_flags(ctx, ANYDEV_EVENT_TIMING, &start.event);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (anydev_status_t s =
          anydev_context_create_event_with_flags(ctx, ANYDEV_EVENT_TIMING, &end.event);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (anydev_status_t s = anydev_context_stream(ctx, &stream); s != ANYDEV_SUCCESS) return s;
  struct StreamGuard {
    anydev_stream_t stream;
    ~StreamGuard() { anydev_stream_release(stream); }
  } hold{stream};
  if (anydev_status_t s = anydev_stream_record_event(stream, start.event); s != ANYDEV_SUCCESS) {
    return s;
  }
  for (size_t i = 0; i < iterations; ++i) {
    if (anydev_status_t s = fn(ctx, user_data); s != ANYDEV_SUCCESS) return s;
  }
  if (anydev_status_t s = anydev_stream_record_event(stream, end.event); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (anydev_status_t s = anydev_event_synchronize(end.event); s != ANYDEV_SUCCESS) return s;
  float ms = 0.0F;
  if (anydev_status_t s = anydev_event_elapsed_time(start.event, end.event, &ms);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  *nanoseconds = std::llround(static_cast<double>(ms) * 1e6);
  return ANYDEV_SUCCESS;
}

}  // extern "C"
