// SPDX-License-Identifier: Apache-2.0
// The validation layer (ANYDEV_VALIDATE=1, or =backtrace to also keep each
// handle's creation backtrace). Off: one predictable branch per C entry
// point, nothing else. On, it adds:
//
//  - a live-handle set (api/handle_tracking.h): every handle is registered
//    while it lives and every C entry point checks its handle arguments
//    against it, so a released handle is INVALID_STATE, never a crash;
//  - a table layer (see layer_stack.h) that remembers every copy or fill
//    that writes pinned host memory until an event recorded after it
//    completes, so that anydev_buffer_check_host_access (called by
//    HostBuffer::at() and operator[] when validation is on) reports host
//    access to elements an enqueued operation is still writing; and that
//    refuses a copy or fill on a stream of a device that cannot access the
//    memory (another device without peer access);
//  - a leak table at exit (api/handle_tracking.h).
//
// Reports go through the logger at error level ("[anydev] [error]
// validation: ...") and, for a failing call, into its last error.
// This file declares the switch, the table layer and the peer checks; the
// handle set lives with the handles it tracks (api/handle_tracking.h), so
// the layers never include the core's objects. Thread-safe: one mutex
// guards the pending writes, another the peers.
#ifndef ANYDEV_SRC_LAYERS_VALIDATION_H_
#define ANYDEV_SRC_LAYERS_VALIDATION_H_

#include <atomic>
#include <cstddef>
#include <optional>

#include "anydev/anydev.h"
#include "anydev/backend.h"

namespace anydev::core::layers {

namespace detail {
// -1 until the first validation_enabled(), then 0 (off) or 1 (on).
extern std::atomic<int> g_validation;
// Reads ANYDEV_VALIDATE (once; thread-safe), stores the answer in
// g_validation and returns it.
int read_validation() noexcept;
}  // namespace detail

// Whether ANYDEV_VALIDATE turned validation on: read from the environment at
// the first call, then one load (inline, since every C entry point asks).
inline bool validation_enabled() noexcept {
  int enabled = detail::g_validation.load(std::memory_order_relaxed);
  if (enabled < 0) [[unlikely]]
    enabled = detail::read_validation();
  return enabled != 0;
}

// Peer access enabled through anydev_context_enable_peer_access, recorded
// only while validation is on: streams of `device` may use `peer`'s memory.
void note_peer_enabled(const void* backend, int device, int peer);
// ANYDEV_SUCCESS when a stream of `stream_device` may write device memory of
// `memory_device` (the same device, or peer access enabled); else
// INVALID_ARGUMENT with the report naming `op` and both devices.
anydev_status_t check_peer_write(const char* op, const void* backend, const char* backend_name,
                                 int stream_device, int memory_device);

// The table layer (pending host writes, device checks): a table wrapping
// `inner` (layer_table.h). Called under the registry lock.
const anydev_backend_table_t* wrap_validation(const anydev_backend_table_t* inner);

// A copy or fill into pinned host memory that the table layer saw enqueued
// and whose event has not completed yet.
struct PendingHostWrite {
  std::size_t offset;  // into the allocation
  std::size_t bytes;
  const char* what;  // "fill", "copy from device memory", ...
  anydev_bk_stream_t stream;
  int device;
};
// The first still-running write overlapping bytes [begin, end) of the host
// memory `handle`, if any.
std::optional<PendingHostWrite> running_host_write(void* handle, std::size_t begin,
                                                   std::size_t end);

}  // namespace anydev::core::layers

#endif  // ANYDEV_SRC_LAYERS_VALIDATION_H_
