// SPDX-License-Identifier: Apache-2.0
// The log sink (anydev.h "logging", anydev/logging.hpp): severities, the
// threshold, user data, stderr when no callback is set, the reentrancy rules
// and the guarantee that a replaced callback is neither entered nor running
// once the setter returns, under concurrent logging. Messages are logged on
// demand through core::log, the path of every core and backend message.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "anydev/anydev.h"
#include "anydev/logging.hpp"
#include "fork_child.h"
#include "support/logging.h"

namespace anydev::core {
namespace {

// What one callback saw. Written by the callback, read by the test after the
// setter returned (which orders them).
struct Seen {
  std::vector<std::pair<anydev_log_severity_t, std::string>> messages;
};

void record(anydev_log_severity_t severity, const char* message, void* user_data) {
  static_cast<Seen*>(user_data)->messages.emplace_back(severity, message);
}

// Each test leaves the process as it found it: stderr, threshold warn.
class LogSink : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(anydev_set_log_level(ANYDEV_LOG_SEVERITY_WARN), ANYDEV_SUCCESS);
  }
  void TearDown() override {
    EXPECT_EQ(anydev_set_log_callback(nullptr, nullptr), ANYDEV_SUCCESS);
    EXPECT_EQ(anydev_set_log_level(ANYDEV_LOG_SEVERITY_WARN), ANYDEV_SUCCESS);
  }
};

TEST_F(LogSink, WithoutCallbackMessagesGoToStderr) {
  ::testing::internal::CaptureStderr();
  log(ANYDEV_LOG_WARN, "to stderr");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("[anydev] [warning] to stderr"), std::string::npos) << err;
}

TEST_F(LogSink, CallbackGetsSeverityMessageAndUserData) {
  Seen seen;
  ASSERT_EQ(anydev_set_log_callback(record, &seen), ANYDEV_SUCCESS);
  ::testing::internal::CaptureStderr();
  log(ANYDEV_LOG_WARN, "first");
  log(ANYDEV_LOG_ERROR, "second\x1b");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");  // nothing to stderr
  ASSERT_EQ(anydev_set_log_callback(nullptr, nullptr), ANYDEV_SUCCESS);
  ASSERT_EQ(seen.messages.size(), 2u);
  EXPECT_EQ(seen.messages[0].first, ANYDEV_LOG_SEVERITY_WARN);
  EXPECT_EQ(seen.messages[0].second, "first");
  EXPECT_EQ(seen.messages[1].first, ANYDEV_LOG_SEVERITY_ERROR);
  EXPECT_EQ(seen.messages[1].second, "second\\x1b");  // escaped as on stderr
}

TEST_F(LogSink, NullRestoresStderr) {
  Seen seen;
  ASSERT_EQ(anydev_set_log_callback(record, &seen), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_set_log_callback(nullptr, &seen), ANYDEV_SUCCESS);
  ::testing::internal::CaptureStderr();
  log(ANYDEV_LOG_ERROR, "back on stderr");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("[anydev] [error] back on stderr"), std::string::npos) << err;
  EXPECT_TRUE(seen.messages.empty());
}

TEST_F(LogSink, ThresholdDropsLowerSeverities) {
  Seen seen;
  ASSERT_EQ(anydev_set_log_callback(record, &seen), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_log_level(), ANYDEV_LOG_SEVERITY_WARN);
  log(ANYDEV_LOG_INFO, "dropped at warn");
  ASSERT_EQ(anydev_set_log_level(ANYDEV_LOG_SEVERITY_TRACE), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_log_level(), ANYDEV_LOG_SEVERITY_TRACE);
  EXPECT_TRUE(log_enabled(ANYDEV_LOG_TRACE));
  log(ANYDEV_LOG_TRACE, "kept at trace");
  ASSERT_EQ(anydev_set_log_level(ANYDEV_LOG_SEVERITY_OFF), ANYDEV_SUCCESS);
  EXPECT_FALSE(log_enabled(ANYDEV_LOG_ERROR));
  log(ANYDEV_LOG_ERROR, "dropped at off");
  ASSERT_EQ(anydev_set_log_callback(nullptr, nullptr), ANYDEV_SUCCESS);
  ASSERT_EQ(seen.messages.size(), 1u);
  EXPECT_EQ(seen.messages[0].first, ANYDEV_LOG_SEVERITY_TRACE);
  EXPECT_EQ(seen.messages[0].second, "kept at trace");
}

TEST_F(LogSink, LevelOutOfRangeIsRefusedAndChangesNothing) {
  for (const int bad : {-1, 7, 1000}) {
    EXPECT_EQ(anydev_set_log_level(static_cast<anydev_log_severity_t>(bad)),
              ANYDEV_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(anydev_last_error_message()),
              "anydev_set_log_level: level " + std::to_string(bad) +
                  " is not one of 0 (trace), 1 (debug), 2 (info), 3 (warn), 4 (error), "
                  "5 (critical), 6 (off)");
    EXPECT_EQ(anydev_log_level(), ANYDEV_LOG_SEVERITY_WARN);
  }
}

// A callback's own anydev calls log to stderr: no recursion into it.
TEST_F(LogSink, MessagesLoggedInsideTheCallbackGoToStderr) {
  struct Nested {
    int calls = 0;
  } nested;
  const auto callback = [](anydev_log_severity_t, const char*, void* user_data) {
    ++static_cast<Nested*>(user_data)->calls;
    log(ANYDEV_LOG_WARN, "logged inside the callback");
  };
  ASSERT_EQ(anydev_set_log_callback(callback, &nested), ANYDEV_SUCCESS);
  ::testing::internal::CaptureStderr();
  log(ANYDEV_LOG_WARN, "outer");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(nested.calls, 1);
  EXPECT_NE(err.find("logged inside the callback"), std::string::npos) << err;
  EXPECT_EQ(err.find("outer"), std::string::npos) << err;
}

// A callback may replace itself: the setter does not wait for it (it would
// wait for itself), and the next message goes to the new callback.
TEST_F(LogSink, CallbackMayReplaceItself) {
  static Seen replacement;
  replacement.messages.clear();
  const auto replacing = [](anydev_log_severity_t, const char*, void*) {
    EXPECT_EQ(anydev_set_log_callback(record, &replacement), ANYDEV_SUCCESS);
  };
  ASSERT_EQ(anydev_set_log_callback(replacing, nullptr), ANYDEV_SUCCESS);
  log(ANYDEV_LOG_WARN, "to the replacing callback");
  log(ANYDEV_LOG_WARN, "to the replacement");
  ASSERT_EQ(anydev_set_log_callback(nullptr, nullptr), ANYDEV_SUCCESS);
  ASSERT_EQ(replacement.messages.size(), 1u);
  EXPECT_EQ(replacement.messages[0].second, "to the replacement");
}

// One installation's bookkeeping: `retired` is set once the setter that
// replaced it returned; a call entering after that, or still running then,
// is a broken guarantee.
struct Installation {
  std::atomic<bool> retired{false};
  std::atomic<int> running{0};
  std::atomic<long> calls{0};
  std::atomic<int> entered_after_retired{0};
};

void counting(anydev_log_severity_t, const char*, void* user_data) {
  auto* installation = static_cast<Installation*>(user_data);
  installation->running.fetch_add(1);
  if (installation->retired.load()) installation->entered_after_retired.fetch_add(1);
  installation->calls.fetch_add(1);
  std::this_thread::yield();  // widen the window in which a setter may race
  installation->running.fetch_sub(1);
}

TEST_F(LogSink, ReplacedCallbackIsNeitherEnteredNorRunningAfterTheSetterReturns) {
  constexpr int kLoggers = 4;
  constexpr int kSwitches = 400;
  std::vector<Installation> installations(kSwitches);
  std::atomic<bool> stop{false};
  std::vector<std::thread> loggers;
  for (int i = 0; i < kLoggers; ++i) {
    loggers.emplace_back([&stop] {
      while (!stop.load()) log(ANYDEV_LOG_WARN, "concurrent");
    });
  }
  int still_running = 0;
  ::testing::internal::CaptureStderr();  // messages between switches to null
  for (int i = 0; i < kSwitches; ++i) {
    // Every fourth switch goes through stderr (null) and back.
    const bool to_null = i % 4 == 3;
    ASSERT_EQ(to_null ? anydev_set_log_callback(nullptr, nullptr)
                      : anydev_set_log_callback(counting, &installations[i]),
              ANYDEV_SUCCESS);
    // Let the loggers reach this callback before replacing it (bounded by
    // the test's timeout should the sink never deliver).
    if (!to_null) {
      while (installations[i].calls.load() == 0) std::this_thread::yield();
    }
    if (i > 0) {
      Installation& previous = installations[i - 1];
      previous.retired.store(true);
      if (previous.running.load() != 0) ++still_running;
    }
  }
  ASSERT_EQ(anydev_set_log_callback(nullptr, nullptr), ANYDEV_SUCCESS);
  installations[kSwitches - 1].retired.store(true);
  stop.store(true);
  for (auto& thread : loggers) thread.join();
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(still_running, 0);
  long total = 0;
  for (const Installation& installation : installations) {
    EXPECT_EQ(installation.entered_after_retired.load(), 0);
    EXPECT_EQ(installation.running.load(), 0);
    total += installation.calls.load();
  }
  EXPECT_GE(total, kSwitches * 3 / 4);  // every callback was reached
}

// fork() while another thread is inside the callback: that call never
// returns in the child, which must not wait for it. The child keeps the
// callback and can replace it.
TEST_F(LogSink, ForkedChildForgetsCallsRunningInTheParent) {
  ANYDEV_SKIP_FORK_UNDER_ASAN();
  struct Gate {
    std::atomic<bool> entered{false};
    std::atomic<bool> release{false};
  } gate;
  const auto holding = [](anydev_log_severity_t, const char*, void* user_data) {
    auto* g = static_cast<Gate*>(user_data);
    g->entered.store(true);
    while (!g->release.load()) std::this_thread::yield();
  };
  ASSERT_EQ(anydev_set_log_callback(holding, &gate), ANYDEV_SUCCESS);
  std::thread held([] { log(ANYDEV_LOG_WARN, "held in the parent"); });
  while (!gate.entered.load()) std::this_thread::yield();
  const std::string child = anydev_test::run_in_forked_child([] {
    Seen seen;
    // Without the fork handling this waits forever for the parent's call.
    if (anydev_set_log_callback(record, &seen) != ANYDEV_SUCCESS) return 2;
    log(ANYDEV_LOG_WARN, "in the child");
    if (anydev_set_log_callback(nullptr, nullptr) != ANYDEV_SUCCESS) return 3;
    return seen.messages.size() == 1 && seen.messages[0].second == "in the child" ? 0 : 4;
  });
  gate.release.store(true);
  held.join();
  EXPECT_EQ(child, "");
}

// ---- the C++ wrapper ------------------------------------------------------

TEST_F(LogSink, CxxHandlerGetsMessagesAndIsDestroyedWhenReplaced) {
  auto alive = std::make_shared<int>(0);
  std::vector<std::pair<LogSeverity, std::string>> seen;
  set_log_handler([&seen, alive](LogSeverity severity, std::string_view message) {
    seen.emplace_back(severity, std::string(message));
  });
  EXPECT_EQ(alive.use_count(), 2);
  set_log_level(LogSeverity::info);
  EXPECT_EQ(log_level(), LogSeverity::info);
  log(ANYDEV_LOG_INFO, "to the handler");
  reset_log_handler();
  EXPECT_EQ(alive.use_count(), 1);  // the handler was destroyed
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, LogSeverity::info);
  EXPECT_EQ(seen[0].second, "to the handler");
  EXPECT_EQ(to_string(LogSeverity::critical), "critical");
}

TEST_F(LogSink, CxxHandlerExceptionIsDroppedAndSetterInsideHandlerThrows) {
  int calls = 0;
  Status inner = Status::success;
  set_log_handler([&](LogSeverity, std::string_view) {
    ++calls;
    try {
      reset_log_handler();
    } catch (const Error& error) {
      inner = error.status();
    }
    throw std::runtime_error("escapes the handler");
  });
  log(ANYDEV_LOG_WARN, "first");
  log(ANYDEV_LOG_WARN, "second");  // still installed: the inner reset was refused
  reset_log_handler();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(inner, Status::invalid_state);
}

TEST_F(LogSink, CxxLevelOutOfRangeThrowsInvalidArgument) {
  try {
    set_log_level(static_cast<LogSeverity>(9));
    FAIL() << "no exception";
  } catch (const Error& error) {
    EXPECT_EQ(error.status(), Status::invalid_argument);
    EXPECT_NE(std::string(error.what()).find("level 9"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace anydev::core
