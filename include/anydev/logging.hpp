// SPDX-License-Identifier: Apache-2.0
// anydev C++ API: where anydev's log messages go (a handler of yours, or
// stderr) and the threshold below which they are dropped. Wraps
// anydev_set_log_callback / anydev_set_log_level (anydev.h states the
// guarantees). Part of anydev.hpp (include that); usable alone.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_LOGGING_HPP_
#define ANYDEV_LOGGING_HPP_

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "anydev/anydev.h"
#include "anydev/status.hpp"

namespace anydev {

// A message's severity, and the threshold (off: nothing is logged).
enum class LogSeverity : int {
  trace = ANYDEV_LOG_SEVERITY_TRACE,
  debug = ANYDEV_LOG_SEVERITY_DEBUG,
  info = ANYDEV_LOG_SEVERITY_INFO,
  warn = ANYDEV_LOG_SEVERITY_WARN,
  error = ANYDEV_LOG_SEVERITY_ERROR,
  critical = ANYDEV_LOG_SEVERITY_CRITICAL,
  off = ANYDEV_LOG_SEVERITY_OFF,
};

// Receives one message (valid only during the call). Called on whichever
// thread logs, possibly on several at once: it must be thread-safe.
using LogHandler = std::function<void(LogSeverity severity, std::string_view message)>;

namespace detail {

// The installed handler, owned here (the C callback's user_data points at
// it). `mutex` serializes the setters; the handler it guards is only read by
// log_trampoline, which the C ABI keeps from running past a setter's return.
struct LogHandlerSlot {
  std::mutex mutex;
  std::unique_ptr<LogHandler> handler;
};
// Never destroyed: a message logged during exit (a backend's thread, a late
// release) may still reach the installed handler after static destructors.
inline LogHandlerSlot& log_handler_slot() {
  static auto* slot = new LogHandlerSlot();
  return *slot;
}
// Nonzero while the calling thread runs a handler.
inline thread_local int t_in_log_handler = 0;

inline void log_trampoline(anydev_log_severity_t severity, const char* message, void* user_data) {
  ++t_in_log_handler;
  try {
    (*static_cast<LogHandler*>(user_data))(static_cast<LogSeverity>(severity), message);
  } catch (...) {
    // A handler's exception cannot cross the C ABI: dropped.
  }
  --t_in_log_handler;
}

}  // namespace detail

// Sends every message at or above the threshold to `handler`; an empty one
// restores stderr. Once it returns, the previous handler is neither running
// nor entered again, and has been destroyed. An exception leaving a handler
// is caught and dropped. Calling it (or reset_log_handler) from inside a
// handler throws Error(invalid_state): it would wait for itself (the C ABI
// allows that; this wrapper, which owns the handler, does not). Thread-safe.
inline void set_log_handler(LogHandler handler) {
  if (detail::t_in_log_handler > 0) {
    throw Error(Status::invalid_state,
                "anydev::set_log_handler: called from inside a log handler (install handlers "
                "from outside one)");
  }
  auto& slot = detail::log_handler_slot();
  std::unique_ptr<LogHandler> fresh;
  if (handler) fresh = std::make_unique<LogHandler>(std::move(handler));
  std::lock_guard lock(slot.mutex);
  // Returns once no call of the previous handler runs or can start.
  detail::check(fresh ? anydev_set_log_callback(detail::log_trampoline, fresh.get())
                      : anydev_set_log_callback(nullptr, nullptr));
  slot.handler = std::move(fresh);
}

// Back to stderr. Thread-safe; see set_log_handler.
inline void reset_log_handler() { set_log_handler(LogHandler()); }

// The threshold: messages below it are dropped. Starts at ANYDEV_LOG_LEVEL
// (default warn). Thread-safe.
inline void set_log_level(LogSeverity level) {
  detail::check(anydev_set_log_level(static_cast<anydev_log_severity_t>(level)));
}
inline LogSeverity log_level() { return static_cast<LogSeverity>(anydev_log_level()); }

// "trace", "debug", "info", "warn", "error", "critical", "off".
inline std::string_view to_string(LogSeverity severity) {
  switch (severity) {
    case LogSeverity::trace:
      return "trace";
    case LogSeverity::debug:
      return "debug";
    case LogSeverity::info:
      return "info";
    case LogSeverity::warn:
      return "warn";
    case LogSeverity::error:
      return "error";
    case LogSeverity::critical:
      return "critical";
    case LogSeverity::off:
      return "off";
  }
  return "unknown";
}

}  // namespace anydev

#endif  // ANYDEV_LOGGING_HPP_
