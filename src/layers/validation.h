// SPDX-License-Identifier: Apache-2.0
// The validation layer (ANYDEV_VALIDATE=1, or =backtrace to also keep each
// handle's creation backtrace). Off: one predictable branch per C entry
// point, nothing else. On, it adds:
//
//  - a live-handle set: every context, stream, event and buffer handle is
//    registered when created and removed when its last reference goes, and
//    every C entry point checks its handle arguments against it first, so a
//    released handle or a pointer anydev never made is INVALID_STATE with a
//    message naming the call, the argument's kind and the pointer -- never a
//    crash (a freed handle whose memory was reused for a new handle of the
//    same kind cannot be told apart);
//  - a table layer (see layer_stack.h) that remembers every copy or fill
//    that writes pinned host memory until an event recorded after it
//    completes, so that anydev_buffer_check_host_access (called by
//    HostBuffer::at() and operator[] when validation is on) reports host
//    access to elements an enqueued operation is still writing; and that
//    refuses a copy or fill on a stream of a device that cannot access the
//    memory (another device without peer access);
//  - a leak table at exit: every handle still live, with its description
//    and, with =backtrace, the backtrace of its creation.
//
// Reports go through the logger at error level ("[anydev] [error]
// validation: ...") and, for a failing call, into its last error.
// Implemented in two files: layers/validation.cpp (the table layer, peers,
// the ANYDEV_VALIDATE switch) and layers/validation_handles.cpp (the handle
// set, the leak table, check_host_access: the part that knows objects.h).
// Thread-safe: one mutex guards the handle set, another the pending writes.
#ifndef ANYDEV_SRC_LAYERS_VALIDATION_H_
#define ANYDEV_SRC_LAYERS_VALIDATION_H_

#include <atomic>
#include <cstddef>
#include <optional>

#include "anydev/anydev.h"
#include "anydev/backend.h"

struct anydev_buffer_s;

namespace anydev::core::layers {

enum class HandleKind { context = 0, stream = 1, event = 2, buffer = 3 };

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

// Handle bookkeeping; `handle` is the handle's address.
void note_created(HandleKind kind, const void* handle);
void note_destroyed(HandleKind kind, const void* handle);
// ANYDEV_SUCCESS for a live handle of `kind`; else INVALID_STATE with the
// report. `what` names the argument ("context", "buffer", ...).
anydev_status_t check_live(const char* op, HandleKind kind, const void* handle, const char* what);

// Peer access enabled through anydev_context_enable_peer_access, recorded
// only while validation is on: streams of `device` may use `peer`'s memory.
void note_peer_enabled(const void* backend, int device, int peer);
// ANYDEV_SUCCESS when a stream of `stream_device` may write device memory of
// `memory_device` (the same device, or peer access enabled); else
// INVALID_ARGUMENT with the report naming `op` and both devices.
anydev_status_t check_peer_write(const char* op, const void* backend, const char* backend_name,
                                 int stream_device, int memory_device);

// Base of the C handle structs (objects.h): registers the handle while it
// lives when validation is on. Empty; no cost when validation is off.
template <HandleKind Kind>
struct TrackedHandle {
  TrackedHandle() {
    if (validation_enabled()) note_created(Kind, this);
  }
  ~TrackedHandle() {
    if (validation_enabled()) note_destroyed(Kind, this);
  }
  TrackedHandle(const TrackedHandle&) = delete;
  TrackedHandle& operator=(const TrackedHandle&) = delete;
};

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

// Host access to `count` elements from element `offset` of a host buffer:
// INVALID_STATE (reported) when an enqueued copy or fill still writes them.
anydev_status_t check_host_access(const char* op, const anydev_buffer_s* buf, std::size_t offset,
                                  std::size_t count);

// Logs the leak table (every live handle) now; returns how many there are.
std::size_t report_live_handles(const char* when);

}  // namespace anydev::core::layers

#endif  // ANYDEV_SRC_LAYERS_VALIDATION_H_
