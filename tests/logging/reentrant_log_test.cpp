// SPDX-License-Identifier: Apache-2.0
// A log callback may call the API (anydev.h): no message is delivered while
// the logging thread holds a core lock. Two places that logged under one:
// the registry's first probe ("backend cpu available") and the tracer's
// file write on the reclaimer thread. Each test runs in its own process
// (ctest entry), so that its probe or trace write is the first; a deadlock
// ends the process through the watchdog, naming what hung.
#include "reentrant_log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "anydev/anydev.h"

namespace {

using namespace std::chrono_literals;

// Ends the process (failing the test) when the test has not finished by
// then: a deadlocked thread cannot be joined or recovered.
class Watchdog {
 public:
  explicit Watchdog(const char* what) : what_(what) {
    std::thread([this] {
      for (int i = 0; i < 300 && !done_.load(); ++i) std::this_thread::sleep_for(100ms);
      if (!done_.load()) {
        std::fprintf(stderr, "deadlock: %s did not return within 30 s\n", what_);
        std::fflush(stderr);
        std::_Exit(1);
      }
    }).detach();
  }
  ~Watchdog() { done_ = true; }

 private:
  const char* what_;
  std::atomic<bool> done_{false};
};

std::mutex g_seen_mutex;
std::vector<std::string> g_seen;

void record_and_reenter(anydev_log_severity_t severity, const char* message, void* user_data) {
  {
    std::lock_guard lock(g_seen_mutex);
    g_seen.emplace_back(message);
  }
  anydev::test::reentering_log_callback(severity, message, user_data);
}

bool seen(const std::string& part) {
  std::lock_guard lock(g_seen_mutex);
  for (const std::string& message : g_seen) {
    if (message.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(ReentrantLog, TheFirstProbeDeliversItsMessagesAfterLeavingTheRegistryLock) {
  const Watchdog watchdog("anydev_backend_count with a re-entering callback");
  ASSERT_EQ(anydev_set_log_callback(record_and_reenter, nullptr), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_set_log_level(ANYDEV_LOG_SEVERITY_TRACE), ANYDEV_SUCCESS);
  std::size_t count = 0;
  ASSERT_EQ(anydev_backend_count(&count), ANYDEV_SUCCESS);
  EXPECT_GE(count, 1u);
  EXPECT_TRUE(seen("backend cpu")) << "the probe logged nothing about cpu";
  EXPECT_EQ(anydev_set_log_callback(nullptr, nullptr), ANYDEV_SUCCESS);
}

// ANYDEV_TRACE names a file (set by ctest): the trace is written when the
// last traced stream goes, on the reclaimer thread, and logged there.
TEST(ReentrantLog, TheTracersFileWriteOnTheReclaimerDeliversAfterLeavingItsLock) {
  if (std::getenv("ANYDEV_TRACE") == nullptr) GTEST_SKIP() << "ANYDEV_TRACE not set: run via ctest";
  const Watchdog watchdog("the trace write with a re-entering callback");
  ASSERT_EQ(anydev_set_log_callback(record_and_reenter, nullptr), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_set_log_level(ANYDEV_LOG_SEVERITY_INFO), ANYDEV_SUCCESS);
  {
    anydev_context_t ctx = nullptr;
    ASSERT_EQ(anydev_context_create("cpu", 0, &ctx), ANYDEV_SUCCESS);
    anydev_buffer_t buf = nullptr;
    ASSERT_EQ(anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT32, 1024, &buf),
              ANYDEV_SUCCESS);
    const std::uint32_t pattern = 0x01020304;
    ASSERT_EQ(anydev_enqueue_fill(ctx, buf, &pattern, sizeof(pattern)), ANYDEV_SUCCESS);
    ASSERT_EQ(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
    ASSERT_EQ(anydev_buffer_release(buf), ANYDEV_SUCCESS);
    ASSERT_EQ(anydev_context_release(ctx), ANYDEV_SUCCESS);
  }
  // The reclaimer destroys the stream and writes the trace soon after.
  for (int i = 0; i < 200 && !seen("trace: wrote"); ++i) std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(seen("trace: wrote")) << "no trace write was logged";
  // Returns only once no callback runs: a callback stuck on the reclaimer
  // would keep it waiting.
  EXPECT_EQ(anydev_set_log_callback(nullptr, nullptr), ANYDEV_SUCCESS);
  // And releases still run afterwards.
  anydev_context_t ctx = nullptr;
  ASSERT_EQ(anydev_context_create("cpu", 0, &ctx), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_context_release(ctx), ANYDEV_SUCCESS);
}

}  // namespace
