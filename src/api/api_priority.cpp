// SPDX-License-Identifier: Apache-2.0
// C entry points: stream priorities (docs/timing.md). A backend without
// priorities has the one priority 0; a priority outside the range is
// clamped into it, as CUDA clamps.
#include <algorithm>

#include "anydev/anydev.h"
#include "api/api_common.h"
#include "support/backend_calls.h"

using namespace anydev::core;

namespace {

#define ANYDEV_CHECK_PRIORITY_HANDLE(op, handle, what)                                      \
  do {                                                                                      \
    ANYDEV_REQUIRE_ARG(op, handle);                                                         \
    if (anydev_status_t s_ = check_fork(op, handle, what); s_ != ANYDEV_SUCCESS) return s_; \
  } while (0)

// The device's range from the backend, checked: {0, 0} without the entry.
anydev_status_t priority_range(const char* op, const ContextState& state, int* least,
                               int* greatest) {
  const anydev_backend_table_t* table = state.backend->table;
  if (table->stream_priority_range == nullptr) {
    *least = 0;
    *greatest = 0;
    return ANYDEV_SUCCESS;
  }
  int lo = 0;
  int hi = 0;
  if (anydev_status_t s = bk(table).stream_priority_range(state.device, &lo, &hi);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (lo != 0 || hi > 0) {
    return fail(ANYDEV_ERROR_INTERNAL, op, "the ", state.backend->name,
                " backend gave the priority range least ", lo, ", greatest ", hi,
                " (least must be 0, the normal priority, and greatest <= 0)");
  }
  *least = lo;
  *greatest = hi;
  return ANYDEV_SUCCESS;
}

}  // namespace

extern "C" {

anydev_status_t anydev_context_stream_priority_range(anydev_context_t ctx, int* least,
                                                     int* greatest) {
  static constexpr const char* op = "anydev_context_stream_priority_range";
  ANYDEV_CHECK_PRIORITY_HANDLE(op, ctx, "context");
  int lo = 0;
  int hi = 0;
  if (anydev_status_t s = priority_range(op, *ctx->state, &lo, &hi); s != ANYDEV_SUCCESS) return s;
  if (least != nullptr) *least = lo;
  if (greatest != nullptr) *greatest = hi;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_context_create_stream_with_priority(anydev_context_t ctx, int priority,
                                                           anydev_stream_t* out) {
  static constexpr const char* op = "anydev_context_create_stream_with_priority";
  ANYDEV_CHECK_PRIORITY_HANDLE(op, ctx, "context");
  ANYDEV_REQUIRE_ARG(op, out);
  return guarded(op, [&] {
    const ContextState& state = *ctx->state;
    int least = 0;
    int greatest = 0;
    if (anydev_status_t s = priority_range(op, state, &least, &greatest); s != ANYDEV_SUCCESS) {
      return s;
    }
    // CUDA's rule: a priority outside the range is clamped into it.
    const int clamped = std::clamp(priority, greatest, least);
    std::shared_ptr<Stream> created;
    if (anydev_status_t s = create_stream(state.backend, state.device, clamped, least, &created);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    created->priority = clamped;
    auto* stream = new anydev_stream_s;
    stream->fork_generation = fork_generation();
    stream->stream = std::move(created);
    *out = stream;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_stream_priority(anydev_stream_t stream, int* out) {
  static constexpr const char* op = "anydev_stream_priority";
  ANYDEV_CHECK_PRIORITY_HANDLE(op, stream, "stream");
  ANYDEV_REQUIRE_ARG(op, out);
  *out = stream->stream->priority;
  return ANYDEV_SUCCESS;
}

}  // extern "C"
