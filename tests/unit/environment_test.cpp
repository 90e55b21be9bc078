// SPDX-License-Identifier: Apache-2.0
// The checks of the core's own environment variables (src/support/environment.h):
// what each accepts, and the message refusing the rest (naming the variable
// and the escaped value). ANYDEV_LOG_LEVEL takes spdlog's names as well.
#include "support/environment.h"

#include <gtest/gtest.h>

namespace anydev::core {
namespace {

TEST(EnvironmentLogLevel, TakesAnydevsAndSpdlogsNames) {
  EXPECT_EQ(parse_log_level("trace"), 0);
  EXPECT_EQ(parse_log_level("debug"), 1);
  EXPECT_EQ(parse_log_level("info"), 2);
  EXPECT_EQ(parse_log_level("warn"), 3);
  EXPECT_EQ(parse_log_level("warning"), 3);
  EXPECT_EQ(parse_log_level("error"), 4);
  EXPECT_EQ(parse_log_level("err"), 4);
  EXPECT_EQ(parse_log_level("critical"), 5);
  EXPECT_EQ(parse_log_level("off"), 6);
  for (const char* bad : {"", "WARN", "warn ", "verbose", "3", "war"}) {
    EXPECT_FALSE(parse_log_level(bad)) << bad;
    EXPECT_NE(check_log_level(bad).find("ANYDEV_LOG_LEVEL=\""), std::string::npos) << bad;
  }
  EXPECT_EQ(check_log_level("warning"), "");
  EXPECT_EQ(check_log_level("\x1b[2J"),
            "ANYDEV_LOG_LEVEL=\"\\x1b[2J\" is not one of trace, debug, info, warn (warning), "
            "error (err), critical, off");
}

TEST(EnvironmentPool, TakesZeroOrOne) {
  EXPECT_EQ(check_pool("0"), "");
  EXPECT_EQ(check_pool("1"), "");
  EXPECT_EQ(check_pool(""), "ANYDEV_POOL=\"\" is not 0 or 1");
  EXPECT_EQ(check_pool("yes"), "ANYDEV_POOL=\"yes\" is not 0 or 1");
}

TEST(EnvironmentPluginPath, RefusesOnlyTheEmptyValue) {
  EXPECT_EQ(check_plugin_path("/opt/plugins"), "");
  EXPECT_EQ(check_plugin_path("/a::/b:"), "");  // empty entries are skipped, as in PATH
  EXPECT_NE(check_plugin_path("").find("ANYDEV_PLUGIN_PATH is set but empty"), std::string::npos);
}

}  // namespace
}  // namespace anydev::core
