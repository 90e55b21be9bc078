// SPDX-License-Identifier: Apache-2.0
#include "reentrant_log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace anydev::test {
namespace {

std::atomic<std::uint64_t> g_messages{0};
// Messages below this go nowhere (the process's own threshold).
std::atomic<int> g_forward_threshold{ANYDEV_LOG_SEVERITY_WARN};

const char* level_name(anydev_log_severity_t severity) {
  switch (severity) {
    case ANYDEV_LOG_SEVERITY_TRACE:
      return "trace";
    case ANYDEV_LOG_SEVERITY_DEBUG:
      return "debug";
    case ANYDEV_LOG_SEVERITY_INFO:
      return "info";
    case ANYDEV_LOG_SEVERITY_WARN:
      return "warning";
    case ANYDEV_LOG_SEVERITY_ERROR:
      return "error";
    default:
      return "critical";
  }
}

// Calls that take the registry's, the pools', the tracer's and the
// reclaimer's locks. Failures are fine (a backend may be unavailable); only
// returning matters.
void reenter() {
  std::size_t count = 0;
  if (anydev_backend_count(&count) == ANYDEV_SUCCESS) {
    for (std::size_t i = 0; i < count; ++i) {
      anydev_backend_info_t info{};
      info.struct_size = sizeof(info);
      anydev_backend_info(i, &info);
    }
  }
  (void)anydev_log_level();
  anydev_context_t ctx = nullptr;
  if (anydev_context_create("cpu", 0, &ctx) != ANYDEV_SUCCESS) return;
  anydev_buffer_t buf = nullptr;
  if (anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT32, 16, &buf) ==
      ANYDEV_SUCCESS) {
    const std::uint32_t pattern = 7;
    anydev_enqueue_fill(ctx, buf, &pattern, sizeof(pattern));
    anydev_buffer_release(buf);
  }
  anydev_context_synchronize(ctx);
  anydev_context_release(ctx);
}

// Installs the callback for the whole program when asked to.
class ReentrantLogEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    g_forward_threshold = anydev_log_level();
    ASSERT_EQ(anydev_set_log_callback(reentering_log_callback, nullptr), ANYDEV_SUCCESS);
    ASSERT_EQ(anydev_set_log_level(ANYDEV_LOG_SEVERITY_TRACE), ANYDEV_SUCCESS);
  }
  void TearDown() override {
    // Blocks if a callback never returned (a deadlock inside it).
    EXPECT_EQ(anydev_set_log_callback(nullptr, nullptr), ANYDEV_SUCCESS);
    anydev_set_log_level(static_cast<anydev_log_severity_t>(g_forward_threshold.load()));
    std::fprintf(stderr, "re-entering log callback: %llu messages re-entered the API\n",
                 static_cast<unsigned long long>(g_messages.load()));
  }
};

[[maybe_unused]] const bool g_registered = [] {
  const char* value = std::getenv("ANYDEV_TEST_REENTRANT_LOG");
  if (value != nullptr && std::strcmp(value, "1") == 0) {
    ::testing::AddGlobalTestEnvironment(new ReentrantLogEnvironment());
  }
  return true;
}();

}  // namespace

void reentering_log_callback(anydev_log_severity_t severity, const char* message, void*) {
  g_messages.fetch_add(1, std::memory_order_relaxed);
  reenter();
  if (static_cast<int>(severity) >= g_forward_threshold.load(std::memory_order_relaxed) &&
      g_forward_threshold.load(std::memory_order_relaxed) != ANYDEV_LOG_SEVERITY_OFF) {
    std::fprintf(stderr, "[anydev] [%s] %s\n", level_name(severity), message);
  }
}

std::uint64_t reentered_messages() { return g_messages.load(std::memory_order_relaxed); }

}  // namespace anydev::test
