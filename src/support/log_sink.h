// SPDX-License-Identifier: Apache-2.0
// Where the core's log messages go: the embedder's callback
// (anydev_set_log_callback) when one is installed, else stderr (logging.cpp).
// One sink per process, never destroyed. Thread-safe and fork-safe: the
// guarantees are those anydev.h states for anydev_set_log_callback.
#ifndef ANYDEV_SRC_SUPPORT_LOG_SINK_H_
#define ANYDEV_SRC_SUPPORT_LOG_SINK_H_

#include "anydev/anydev.h"

namespace anydev::core {

// Installs `callback` with `user_data` (nullptr: none, back to stderr).
// Returns once the previous callback can no longer be entered and, unless
// the calling thread is inside a callback, once no call of it is running.
void set_log_callback(anydev_log_callback_t callback, void* user_data) noexcept;

// Hands `message` to the installed callback and returns true; false (and
// does nothing) when none is installed or this thread is already inside a
// callback, so that the caller writes to stderr instead.
bool deliver_to_log_callback(anydev_log_severity_t severity, const char* message) noexcept;

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_LOG_SINK_H_
