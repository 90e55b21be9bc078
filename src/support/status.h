// SPDX-License-Identifier: Apache-2.0
// The calling thread's last error, and the helpers every C entry point uses
// to report one. Thread-safe: all state is thread-local.
#ifndef ANYDEV_SRC_SUPPORT_STATUS_H_
#define ANYDEV_SRC_SUPPORT_STATUS_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "anydev/anydev.h"
#include "anydev/backend.h"
#include "anydev/kit/cat.h"

namespace anydev::core {

// Records `message` as the calling thread's last error and returns `status`.
// Cold, like fail(): the compiler moves every path that reports an error out
// of the line of the hot code (a successful call then runs through fewer
// cache lines).
[[gnu::cold]] anydev_status_t set_error(anydev_status_t status, std::string message);

namespace detail {
// Counts set_error calls in the whole process; each thread keeps the count
// its own last set_error reached. A caller that reads it before some call and
// sees, after the call, its thread's stamp above what it read knows that the
// call recorded an error on this thread (backend_calls.h: whether a failed
// entry set its own message). A plain load of a global, unlike a
// thread-local in a shared library, costs one instruction on the success
// path; its cache line is written only when an error is recorded.
extern std::atomic<std::uint64_t> g_error_stamp [[gnu::visibility("hidden")]];
}  // namespace detail

// The value to compare with error_recorded_since() after a call.
inline std::uint64_t error_stamp() noexcept {
  return detail::g_error_stamp.load(std::memory_order_relaxed);
}

// Whether this thread recorded an error (set_error) after error_stamp()
// returned `stamp` on this thread.
bool error_recorded_since(std::uint64_t stamp) noexcept;

// The status that entry `entry` of `table` returned (`status`, not
// ANYDEV_SUCCESS), checked as backend_calls.h describes; `stamp` is
// error_stamp() read before the call. Returns the status the core goes on
// with.
[[gnu::cold, gnu::noinline]] anydev_status_t backend_entry_failed(
    const anydev_backend_table_t* table, const char* entry, bool required, anydev_status_t status,
    std::uint64_t stamp);

// The last error recorded on this thread.
anydev_status_t last_error_status() noexcept;
const std::string& last_error_message() noexcept;
void clear_last_error() noexcept;
// Puts back a last error read earlier with the two functions above, as it
// was (no second escaping).
void restore_last_error(anydev_status_t status, std::string message) noexcept;

// Concatenates its arguments with operator<< (messages are not hot paths):
// the backend kit's one helper (include/anydev/kit/cat.h).
using kit::cat;

// Records cat(op, ": ", args...) and returns status.
template <class... Args>
[[gnu::cold]] anydev_status_t fail(anydev_status_t status, std::string_view op, Args&&... args) {
  return set_error(status, cat(op, ": ", std::forward<Args>(args)...));
}

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_STATUS_H_
