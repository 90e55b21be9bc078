// SPDX-License-Identifier: Apache-2.0
#include "support/status.h"

#include "support/format.h"

namespace anydev::core {

namespace detail {
alignas(64) constinit std::atomic<std::uint64_t> g_error_stamp{0};
}  // namespace detail

namespace {

struct LastError {
  anydev_status_t status = ANYDEV_SUCCESS;
  std::string message;
  std::uint64_t stamp = 0;  // detail::g_error_stamp after this thread's last set_error
};

LastError& last_error() {
  thread_local LastError error;
  return error;
}

}  // namespace

anydev_status_t set_error(anydev_status_t status, std::string message) {
  LastError& error = last_error();
  error.status = status;
  error.message = controls_escaped(std::move(message));  // never a raw escape sequence
  error.stamp = detail::g_error_stamp.fetch_add(1, std::memory_order_relaxed) + 1;
  return status;
}

bool error_recorded_since(std::uint64_t stamp) noexcept { return last_error().stamp > stamp; }

anydev_status_t last_error_status() noexcept { return last_error().status; }

const std::string& last_error_message() noexcept { return last_error().message; }

void restore_last_error(anydev_status_t status, std::string message) noexcept {
  LastError& error = last_error();
  error.status = status;
  error.message = std::move(message);
}

anydev_status_t backend_entry_failed(const anydev_backend_table_t* table, const char* entry,
                                     bool required, anydev_status_t status, std::uint64_t stamp) {
  const bool own_message = error_recorded_since(stamp);
  const auto value = static_cast<long long>(status);
  const char* backend = table->name != nullptr ? table->name : "(unnamed)";
  // What the backend said, if anything, goes after the core's words.
  const auto and_its_message = [&] {
    return own_message && !last_error_message().empty() ? ": " + last_error_message()
                                                        : std::string();
  };
  if (status == ANYDEV_BK_DECLINED) {
    if (!required) return status;  // the core takes its fallback
    return set_error(
        ANYDEV_ERROR_INTERNAL,
        cat("backend ", backend, ": the required entry ", entry, " returned ANYDEV_BK_DECLINED (",
            value, "), which only an optional entry may return", and_its_message()));
  }
  if (value < ANYDEV_ERROR_INVALID_ARGUMENT || value > ANYDEV_ERROR_NOT_READY) {
    return set_error(ANYDEV_ERROR_INTERNAL,
                     cat("backend ", backend, ": entry ", entry, " returned the undefined status ",
                         value, and_its_message()));
  }
  if (own_message) return status;
  return set_error(status, cat("backend ", backend, ": ", entry, " failed (",
                               anydev_status_name(status), ") and set no message"));
}

void clear_last_error() noexcept {
  LastError& error = last_error();
  error.status = ANYDEV_SUCCESS;
  error.message.clear();
}

}  // namespace anydev::core
