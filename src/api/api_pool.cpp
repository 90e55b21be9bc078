// SPDX-License-Identifier: Apache-2.0
// C entry points: the caching pools (pool/caching_pool.h) and the record
// slab's figures (record_slab.h).
#include <cstddef>

#include "anydev/anydev.h"
#include "api/api_common.h"
#include "memory/pool/pool_registry.h"
#include "memory/record_slab.h"

using namespace anydev::core;

namespace {

anydev_bk_memory_kind_t backend_kind(anydev_memory_kind_t kind) {
  return kind == ANYDEV_MEMORY_HOST ? ANYDEV_BK_MEMORY_HOST : ANYDEV_BK_MEMORY_DEVICE;
}

}  // namespace

extern "C" {

anydev_status_t anydev_record_memory(anydev_record_memory_t* out) {
  static constexpr const char* op = "anydev_record_memory";
  ANYDEV_REQUIRE_ARG(op, out);
  if (out->struct_size < sizeof(anydev_record_memory_t)) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "out->struct_size is ", out->struct_size,
                ", expected at least ", sizeof(anydev_record_memory_t));
  }
  const RecordSlab::Stats stats = record_stats();
  out->bytes_in_use = stats.bytes_in_use;
  out->bytes_reserved = stats.bytes_reserved;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_context_pool_stats(anydev_context_t ctx, anydev_memory_kind_t kind,
                                          anydev_pool_stats_t* out) {
  static constexpr const char* op = "anydev_context_pool_stats";
  ANYDEV_REQUIRE_ARG(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  if (kind != ANYDEV_MEMORY_HOST && kind != ANYDEV_MEMORY_DEVICE) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown memory kind ", static_cast<int>(kind));
  }
  // The struct grew at its end: a caller built against the shorter one gets
  // the fields it has.
  constexpr std::size_t kFirstSize = offsetof(anydev_pool_stats_t, bytes_waiting_for_release);
  if (out->struct_size < kFirstSize) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "out->struct_size is ", out->struct_size,
                ", expected at least ", kFirstSize);
  }
  const bool with_waiting =
      out->struct_size >= offsetof(anydev_pool_stats_t, blocks_waiting_for_release) +
                              sizeof(out->blocks_waiting_for_release);
  const bool with_segments = out->struct_size >= sizeof(anydev_pool_stats_t);
  return guarded(op, [&] {
    const ContextState& state = *ctx->state;
    const CachingPool& pool = pool_for(state.backend, state.device, backend_kind(kind));
    const PoolStats stats = pool.stats();
    out->bytes_in_use = stats.bytes_in_use;
    out->bytes_cached = stats.bytes_cached;
    out->peak_bytes_in_use = stats.peak_bytes_in_use;
    out->allocation_count = stats.allocation_count;
    out->cache_hits = stats.cache_hits;
    out->cache_misses = stats.cache_misses;
    if (with_waiting) {
      out->bytes_waiting_for_release = stats.bytes_waiting;
      out->blocks_waiting_for_release = stats.blocks_waiting;
    }
    if (with_segments) out->bytes_in_segments = pool.carver_stats().bytes_reserved;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_release_cached_memory(anydev_context_t ctx) {
  static constexpr const char* op = "anydev_context_release_cached_memory";
  ANYDEV_REQUIRE_ARG(op, ctx);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] {
    release_cached_memory(ctx->state->backend, ctx->state->device);
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_set_pool_release_threshold(anydev_context_t ctx,
                                                          anydev_memory_kind_t kind, size_t bytes) {
  static constexpr const char* op = "anydev_context_set_pool_release_threshold";
  ANYDEV_REQUIRE_ARG(op, ctx);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  if (kind != ANYDEV_MEMORY_HOST && kind != ANYDEV_MEMORY_DEVICE) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown memory kind ", static_cast<int>(kind));
  }
  return guarded(op, [&] {
    pool_for(ctx->state->backend, ctx->state->device, backend_kind(kind))
        .set_release_threshold(bytes);
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_pool_release_threshold(anydev_context_t ctx,
                                                      anydev_memory_kind_t kind, size_t* out) {
  static constexpr const char* op = "anydev_context_pool_release_threshold";
  ANYDEV_REQUIRE_ARG(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  if (kind != ANYDEV_MEMORY_HOST && kind != ANYDEV_MEMORY_DEVICE) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown memory kind ", static_cast<int>(kind));
  }
  return guarded(op, [&] {
    *out =
        pool_for(ctx->state->backend, ctx->state->device, backend_kind(kind)).release_threshold();
    return ANYDEV_SUCCESS;
  });
}

int anydev_pool_enabled(void) {
  try {
    return pools_enabled() ? 1 : 0;
  } catch (...) {  // std::bad_alloc while reading the environment: the default
    return 1;
  }
}

}  // extern "C"
