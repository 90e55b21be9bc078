// SPDX-License-Identifier: Apache-2.0
// Handle tracking for the validation layer (ANYDEV_VALIDATE): a live-handle
// set in which every context, stream, event and buffer handle is registered
// when created and removed when its last reference goes. Every C entry point
// checks its handle arguments against it first (when validation is on), so
// a released handle or a pointer anydev never made is INVALID_STATE with a
// message naming the call, the argument's kind and the pointer -- never a
// crash (a freed handle whose memory was reused for a new handle of the same
// kind cannot be told apart). At exit it logs the leak table: every handle
// still live, with its description and, with ANYDEV_VALIDATE=backtrace, the
// backtrace of its creation.
//
// The handle structs (objects.h) derive from TrackedHandle
// (tracked_handle.h, declarations only); the set's implementation
// (handle_tracking.cpp) knows those structs to describe them. The table layer
// (layers/validation.h) knows none of them. The set is the process's, never
// destroyed (handles die during exit too). Thread-safe: one mutex guards the
// set.
#ifndef ANYDEV_SRC_API_HANDLE_TRACKING_H_
#define ANYDEV_SRC_API_HANDLE_TRACKING_H_

#include <cstddef>

#include "anydev/anydev.h"
#include "api/tracked_handle.h"

struct anydev_buffer_s;

namespace anydev::core::handles {

// Host access to `count` elements from element `offset` of a host buffer:
// INVALID_STATE (reported) when an enqueued copy or fill still writes them
// (layers::running_host_write).
anydev_status_t check_host_access(const char* op, const anydev_buffer_s* buf, std::size_t offset,
                                  std::size_t count);

// Logs the leak table (every live handle) now; returns how many there are.
std::size_t report_live_handles(const char* when);

}  // namespace anydev::core::handles

#endif  // ANYDEV_SRC_API_HANDLE_TRACKING_H_
