// SPDX-License-Identifier: Apache-2.0
// The calling thread's last error, and the helpers every C entry point uses
// to report one. Thread-safe: all state is thread-local.
#ifndef ANYDEV_SRC_STATUS_H_
#define ANYDEV_SRC_STATUS_H_

#include <string>
#include <string_view>
#include <utility>

#include "anydev/anydev.h"
#include "kit_cat.h"

namespace anydev::core {

// Records `message` as the calling thread's last error and returns `status`.
// Cold, like fail(): the compiler moves every path that reports an error out
// of the line of the hot code (a successful call then runs through fewer
// cache lines).
[[gnu::cold]] anydev_status_t set_error(anydev_status_t status, std::string message);

// The last error recorded on this thread.
anydev_status_t last_error_status() noexcept;
const std::string& last_error_message() noexcept;
void clear_last_error() noexcept;
// Puts back a last error read earlier with the two functions above, as it
// was (no second escaping).
void restore_last_error(anydev_status_t status, std::string message) noexcept;

// Concatenates its arguments with operator<< (messages are not hot paths):
// the backend kit's one helper (backends/common/kit_cat.h).
using kit::cat;

// Records cat(op, ": ", args...) and returns status.
template <class... Args>
[[gnu::cold]] anydev_status_t fail(anydev_status_t status, std::string_view op, Args&&... args) {
  return set_error(status, cat(op, ": ", std::forward<Args>(args)...));
}

}  // namespace anydev::core

#endif  // ANYDEV_SRC_STATUS_H_
