// SPDX-License-Identifier: Apache-2.0
// TrackedHandle, the base of the C handle structs (objects.h): registers the
// handle in the live-handle set (handle_tracking.h) while it lives, when the
// validation layer is on. Declarations only, so that the handle structs need
// nothing of the set's implementation. Thread-safe.
#ifndef ANYDEV_SRC_API_TRACKED_HANDLE_H_
#define ANYDEV_SRC_API_TRACKED_HANDLE_H_

#include "anydev/anydev.h"
#include "layers/validation.h"

namespace anydev::core::handles {

enum class HandleKind { context = 0, stream = 1, event = 2, buffer = 3 };

// Handle bookkeeping; `handle` is the handle's address.
void note_created(HandleKind kind, const void* handle);
void note_destroyed(HandleKind kind, const void* handle);
// ANYDEV_SUCCESS for a live handle of `kind`; else INVALID_STATE with the
// report. `what` names the argument ("context", "buffer", ...).
anydev_status_t check_live(const char* op, HandleKind kind, const void* handle, const char* what);

// Base of the C handle structs (objects.h): registers the handle while it
// lives when validation is on. Empty; no cost when validation is off.
template <HandleKind Kind>
struct TrackedHandle {
  TrackedHandle() {
    if (layers::validation_enabled()) note_created(Kind, this);
  }
  ~TrackedHandle() {
    if (layers::validation_enabled()) note_destroyed(Kind, this);
  }
  TrackedHandle(const TrackedHandle&) = delete;
  TrackedHandle& operator=(const TrackedHandle&) = delete;
};

}  // namespace anydev::core::handles

#endif  // ANYDEV_SRC_API_TRACKED_HANDLE_H_
