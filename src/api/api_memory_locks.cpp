// SPDX-License-Identifier: Apache-2.0
// C entry point: how much of the host memory held from a device is locked.
#include "anydev/anydev.h"
#include "api/api_common.h"
#include "memory/host_memory_locks.h"

using namespace anydev::core;

extern "C" {

anydev_status_t anydev_context_host_memory_locks(anydev_context_t ctx, size_t* locked_bytes,
                                                 size_t* total_bytes) {
  static constexpr const char* op = "anydev_context_host_memory_locks";
  ANYDEV_REQUIRE_ARG(op, ctx);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  const ContextState& state = *ctx->state;
  const HostMemoryLocks locks = host_memory_locks(state.backend, state.device);
  if (locked_bytes != nullptr) *locked_bytes = locks.locked_bytes;
  if (total_bytes != nullptr) *total_bytes = locks.total_bytes;
  return ANYDEV_SUCCESS;
}

}  // extern "C"
