// SPDX-License-Identifier: Apache-2.0
// Caller integers that become native stream handles: the consumer stream of
// anydev_buffer_make_ready (Python: __dlpack__(stream=...)) and the stream of
// anydev_context_wrap_native_stream. A value is passed to the backend, which
// may dereference it, only when it has a defined meaning there: an address
// (a CUstream, a cl_command_queue, ...), or on cuda the reserved handles 1
// (CU_STREAM_LEGACY) and 2 (CU_STREAM_PER_THREAD) that DLPack names. Any
// other small non-zero value is refused, naming it. Pure; thread-safe.
#ifndef ANYDEV_SRC_API_NATIVE_STREAM_VALUE_H_
#define ANYDEV_SRC_API_NATIVE_STREAM_VALUE_H_

#include <cstdint>
#include <string>

#include "anydev/anydev.h"
#include "support/status.h"

namespace anydev::core {

// No platform anydev runs on maps the first page: a non-zero value below
// this is never the address of a stream object.
inline constexpr std::uintptr_t kLowestObjectAddress = 4096;

// SUCCESS when `native` (non-NULL) may be handed to `backend`'s
// stream_wrap_native; else INVALID_ARGUMENT naming op, the value and the
// backend.
inline anydev_status_t check_native_stream_value(const char* op, const std::string& backend,
                                                 const void* native) {
  const auto value = reinterpret_cast<std::uintptr_t>(native);
  if (value >= kLowestObjectAddress) return ANYDEV_SUCCESS;
  const bool cuda_reserved = value == 1 || value == 2;
  if (cuda_reserved && backend == "cuda") return ANYDEV_SUCCESS;
  return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "native stream ", value,
              " is not a stream of the ", backend, " backend: ",
              cuda_reserved ? "1 and 2 are CUDA's reserved default streams (CU_STREAM_LEGACY, "
                              "CU_STREAM_PER_THREAD) and mean nothing to other backends"
                            : "no stream object lives below address 4096",
              "; pass the address of a native stream (or NULL to wait on the host where allowed)");
}

}  // namespace anydev::core

#endif  // ANYDEV_SRC_API_NATIVE_STREAM_VALUE_H_
