// SPDX-License-Identifier: Apache-2.0
// Caller integers that become native stream handles: the consumer stream of
// anydev_buffer_make_ready (Python: __dlpack__(stream=...)) and the stream of
// anydev_context_wrap_native_stream. A value is passed to the backend, which
// may dereference it, only when it has a defined meaning there: an address
// (a CUstream, a cl_command_queue, ...), or the reserved default streams 1
// and 2 that DLPack names, on a backend whose table declares them
// (ANYDEV_BK_FLAG_RESERVED_DEFAULT_STREAMS). Any other small non-zero value
// is refused, naming it. Pure; thread-safe.
#ifndef ANYDEV_SRC_API_NATIVE_STREAM_VALUE_H_
#define ANYDEV_SRC_API_NATIVE_STREAM_VALUE_H_

#include <cstdint>
#include <string>

#include "anydev/anydev.h"
#include "anydev/backend.h"
#include "support/status.h"

namespace anydev::core {

// No platform anydev runs on maps the first page: a non-zero value below
// this is never the address of a stream object.
inline constexpr std::uintptr_t kLowestObjectAddress = 4096;

// SUCCESS when `native` (non-NULL) may be handed to the stream_wrap_native
// of `backend`, whose table has `flags`; else INVALID_ARGUMENT naming op, the
// value and the backend.
inline anydev_status_t check_native_stream_value(const char* op, const std::string& backend,
                                                 std::uint64_t flags, const void* native) {
  const auto value = reinterpret_cast<std::uintptr_t>(native);
  if (value >= kLowestObjectAddress) return ANYDEV_SUCCESS;
  const bool reserved = value == 1 || value == 2;
  if (reserved && (flags & ANYDEV_BK_FLAG_RESERVED_DEFAULT_STREAMS) != 0) return ANYDEV_SUCCESS;
  return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "native stream ", value,
              " is not a stream of the ", backend, " backend: ",
              reserved ? "1 and 2 are the reserved default streams of backends that have them "
                         "(CUDA's CU_STREAM_LEGACY and CU_STREAM_PER_THREAD), and the "
                       : "no stream object lives below address 4096",
              reserved ? backend : "", reserved ? " backend has none" : "",
              "; pass the address of a native stream (or NULL to wait on the host where allowed)");
}

}  // namespace anydev::core

#endif  // ANYDEV_SRC_API_NATIVE_STREAM_VALUE_H_
