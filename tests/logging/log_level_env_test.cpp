// SPDX-License-Identifier: Apache-2.0
// ANYDEV_LOG_LEVEL sets the initial threshold; anydev_set_log_level overrides
// it. Run alone by the ctest entry log_sink.env with ANYDEV_LOG_LEVEL=error
// (the variable is read once per process).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "anydev/anydev.h"
#include "support/logging.h"

namespace anydev::core {
namespace {

void record(anydev_log_severity_t severity, const char*, void* user_data) {
  static_cast<std::vector<anydev_log_severity_t>*>(user_data)->push_back(severity);
}

TEST(LogLevelEnv, VariableSetsTheInitialThresholdAndTheSetterOverridesIt) {
  const char* value = std::getenv("ANYDEV_LOG_LEVEL");
  if (value == nullptr || std::string(value) != "error") {
    GTEST_SKIP() << "needs ANYDEV_LOG_LEVEL=error (the ctest entry log_sink.env sets it)";
  }
  EXPECT_EQ(anydev_log_level(), ANYDEV_LOG_SEVERITY_ERROR);
  std::vector<anydev_log_severity_t> seen;
  ASSERT_EQ(anydev_set_log_callback(record, &seen), ANYDEV_SUCCESS);
  log(ANYDEV_LOG_WARN, "below the variable's threshold");
  log(ANYDEV_LOG_ERROR, "at it");
  ASSERT_EQ(anydev_set_log_level(ANYDEV_LOG_SEVERITY_DEBUG), ANYDEV_SUCCESS);
  log(ANYDEV_LOG_DEBUG, "kept after the override");
  ASSERT_EQ(anydev_set_log_callback(nullptr, nullptr), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_log_level(), ANYDEV_LOG_SEVERITY_DEBUG);
  EXPECT_EQ(seen, (std::vector<anydev_log_severity_t>{ANYDEV_LOG_SEVERITY_ERROR,
                                                      ANYDEV_LOG_SEVERITY_DEBUG}));
}

}  // namespace
}  // namespace anydev::core
