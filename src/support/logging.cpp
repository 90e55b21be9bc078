// SPDX-License-Identifier: Apache-2.0
#include "support/logging.h"

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/environment.h"
#include "support/fork_guard.h"
#include "support/format.h"
#include "support/log_hold.h"
#include "support/log_sink.h"
#include "support/status.h"

namespace anydev::core {
namespace {

// The same numbers on both sides of the ABI (anydev.h, backend.h).
static_assert(static_cast<int>(ANYDEV_LOG_TRACE) == ANYDEV_LOG_SEVERITY_TRACE);
static_assert(static_cast<int>(ANYDEV_LOG_DEBUG) == ANYDEV_LOG_SEVERITY_DEBUG);
static_assert(static_cast<int>(ANYDEV_LOG_INFO) == ANYDEV_LOG_SEVERITY_INFO);
static_assert(static_cast<int>(ANYDEV_LOG_WARN) == ANYDEV_LOG_SEVERITY_WARN);
static_assert(static_cast<int>(ANYDEV_LOG_ERROR) == ANYDEV_LOG_SEVERITY_ERROR);
static_assert(static_cast<int>(spdlog::level::critical) == ANYDEV_LOG_SEVERITY_CRITICAL);
static_assert(static_cast<int>(spdlog::level::off) == ANYDEV_LOG_SEVERITY_OFF);

constexpr int kThresholdUnread = -1;
// The threshold; kThresholdUnread until ANYDEV_LOG_LEVEL is read (on first
// use, lock-free: reading it twice gives the same value) or a setter stores.
std::atomic<int> g_threshold{kThresholdUnread};

int threshold() noexcept {
  const int current = g_threshold.load(std::memory_order_relaxed);
  if (current != kThresholdUnread) return current;
  int initial = ANYDEV_LOG_SEVERITY_WARN;
  if (const char* value = secure_getenv(kEnvLogLevel)) {  // unset in secure mode
    if (const std::optional<int> parsed = parse_log_level(value)) initial = *parsed;
  }
  int expected = kThresholdUnread;
  // A setter that stored first wins.
  if (g_threshold.compare_exchange_strong(expected, initial, std::memory_order_relaxed)) {
    return initial;
  }
  return expected;
}

// Writes to stderr only: the threshold is applied before it.
spdlog::logger& stderr_logger() {
  // Never destroyed: a backend or a late release may log during exit. A
  // ProcessObject, not a guarded static: fork-safe (fork_guard.h).
  static ProcessObject<spdlog::logger> instance;
  return instance.get([] {
    auto* created = new spdlog::logger("anydev", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    created->set_pattern("[anydev] [%l] %v");
    created->set_level(spdlog::level::trace);
    created->flush_on(spdlog::level::trace);
    return created;
  });
}

void deliver(anydev_log_severity_t severity, const std::string& escaped) {
  // A callback may call the API, which records its own last error: the
  // error of the call that logged stays the caller's to read.
  const anydev_status_t saved_status = last_error_status();
  std::string saved_message = last_error_message();
  const bool delivered = deliver_to_log_callback(severity, escaped.c_str());
  if (delivered) {
    if (last_error_status() != saved_status || last_error_message() != saved_message) {
      restore_last_error(saved_status, std::move(saved_message));
    }
    return;
  }
  stderr_logger().log(static_cast<spdlog::level::level_enum>(severity), "{}", escaped);
}

struct HeldMessage {
  anydev_log_severity_t severity;
  std::string text;
};

// Messages this thread logged while it held a core lock (log_hold.h).
std::vector<HeldMessage>& held_messages() {
  thread_local std::vector<HeldMessage> messages;
  return messages;
}

void write(anydev_log_severity_t severity, std::string escaped) {
  if (!core_lock_held()) {
    deliver(severity, escaped);
    return;
  }
  try {
    held_messages().push_back(HeldMessage{severity, std::move(escaped)});
    t_log_hold.queued = 1;
  } catch (const std::bad_alloc&) {
    // No room to keep it: stderr takes no core lock and calls no callback.
    stderr_logger().log(static_cast<spdlog::level::level_enum>(severity), "{}", escaped);
  }
}

// A malformed ANYDEV_LOG_LEVEL is refused like every malformed variable:
// every backend is unavailable with this reason (environment.h); said once
// too, with the first message logged.
void report_malformed_level_once() {
  static std::atomic<bool> reported{false};
  if (reported.load(std::memory_order_relaxed)) return;
  const auto value = env(kEnvLogLevel);
  if (!value || parse_log_level(*value)) return;
  if (reported.exchange(true)) return;
  const int current = threshold();
  if (current == ANYDEV_LOG_SEVERITY_OFF || current > ANYDEV_LOG_SEVERITY_ERROR) return;
  write(ANYDEV_LOG_SEVERITY_ERROR,
        controls_escaped(check_log_level(*value) + "; every backend is unavailable"));
}

}  // namespace

constinit thread_local LogHold t_log_hold;

void deliver_held_log_messages() noexcept {
  std::vector<HeldMessage> messages;
  messages.swap(held_messages());
  t_log_hold.queued = 0;
  // A callback may log again (into a fresh queue when it takes a lock):
  // those messages follow these, delivered by their own last unlock.
  for (const HeldMessage& message : messages) {
    try {
      deliver(message.severity, message.text);
    } catch (...) {
      // stderr failed (out of memory in spdlog): nothing else to tell.
    }
  }
}

anydev_log_severity_t log_threshold() noexcept {
  return static_cast<anydev_log_severity_t>(threshold());
}

bool set_log_threshold(int value) noexcept {
  if (value < ANYDEV_LOG_SEVERITY_TRACE || value > ANYDEV_LOG_SEVERITY_OFF) return false;
  g_threshold.store(value, std::memory_order_relaxed);
  return true;
}

bool log_enabled(anydev_log_level_t level) {
  report_malformed_level_once();
  const int current = threshold();
  return current != ANYDEV_LOG_SEVERITY_OFF && static_cast<int>(level) >= current;
}

void log(anydev_log_level_t level, std::string_view message) {
  if (!log_enabled(level)) return;
  write(static_cast<anydev_log_severity_t>(level), controls_escaped(std::string(message)));
}

}  // namespace anydev::core
