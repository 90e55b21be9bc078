// SPDX-License-Identifier: Apache-2.0
// The parsers of ANYDEV_FAULT, ANYDEV_SYNC, ANYDEV_TRACE and ANYDEV_VALIDATE
// (src/layers/layer_config.h): every accepted form and every rejected one,
// with the message naming the variable, the value, the entry and why.
#include "layers/layer_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using anydev::core::layers::FaultKind;
using anydev::core::layers::parse_fault_list;
using anydev::core::layers::parse_sync;
using anydev::core::layers::parse_trace;
using anydev::core::layers::parse_validate;
using anydev::core::layers::ValidateMode;

std::vector<std::uint64_t> Calls(const anydev::core::layers::FaultPlan& plan, FaultKind kind) {
  return plan.calls[static_cast<std::size_t>(kind)];
}

TEST(FaultList, AcceptsEveryKindAndSortsCalls) {
  const auto parsed = parse_fault_list("copy:3,alloc:1,copy:1,fill:2,event:7,plugin:1");
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  EXPECT_EQ(Calls(parsed.plan, FaultKind::copy), (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(Calls(parsed.plan, FaultKind::alloc), (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(Calls(parsed.plan, FaultKind::fill), (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(Calls(parsed.plan, FaultKind::event), (std::vector<std::uint64_t>{7}));
  EXPECT_EQ(Calls(parsed.plan, FaultKind::plugin), (std::vector<std::uint64_t>{1}));
  EXPECT_FALSE(parsed.plan.empty());
  EXPECT_EQ(parsed.plan.text, "copy:3,alloc:1,copy:1,fill:2,event:7,plugin:1");
}

TEST(FaultList, AcceptsTheLargestCall) {
  const auto parsed = parse_fault_list("alloc:1000000000");
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  EXPECT_EQ(Calls(parsed.plan, FaultKind::alloc), (std::vector<std::uint64_t>{1000000000}));
}

struct Bad {
  const char* value;
  const char* message;
};

class FaultListRejects : public ::testing::TestWithParam<Bad> {};

TEST_P(FaultListRejects, WithAPreciseMessage) {
  const auto parsed = parse_fault_list(GetParam().value);
  EXPECT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error, GetParam().message);
  EXPECT_TRUE(parsed.plan.empty());
}

INSTANTIATE_TEST_SUITE_P(
    BadValues, FaultListRejects,
    ::testing::Values(
        Bad{"",
            "ANYDEV_FAULT is set but empty: expected a comma-separated list such as "
            "\"copy:3\" or \"alloc:1,event:2\""},
        Bad{"copy:1,,fill:1", "ANYDEV_FAULT=\"copy:1,,fill:1\": entry 2 is empty"},
        Bad{"copy:1,", "ANYDEV_FAULT=\"copy:1,\": entry 2 is empty"},
        Bad{",copy:1", "ANYDEV_FAULT=\",copy:1\": entry 1 is empty"},
        Bad{"copy: 1", "ANYDEV_FAULT=\"copy: 1\": entry 1 \"copy: 1\" contains whitespace"},
        Bad{"copy",
            "ANYDEV_FAULT=\"copy\": entry 1 \"copy\" has no call number: expected op:n, "
            "e.g. \"copy:3\""},
        Bad{"COPY:1",
            "ANYDEV_FAULT=\"COPY:1\": entry 1 \"COPY:1\" names no known operation "
            "(\"COPY\"): expected alloc, copy, fill, event or plugin"},
        Bad{"memcpy:1",
            "ANYDEV_FAULT=\"memcpy:1\": entry 1 \"memcpy:1\" names no known "
            "operation (\"memcpy\"): expected alloc, copy, fill, event or plugin"},
        Bad{":1",
            "ANYDEV_FAULT=\":1\": entry 1 \":1\" names no known operation (\"\"): "
            "expected alloc, copy, fill, event or plugin"},
        Bad{"copy:0",
            "ANYDEV_FAULT=\"copy:0\": entry 1 \"copy:0\" has a bad call number "
            "\"0\": expected a decimal number from 1 to 1000000000"},
        Bad{"copy:-1",
            "ANYDEV_FAULT=\"copy:-1\": entry 1 \"copy:-1\" has a bad call number "
            "\"-1\": expected a decimal number from 1 to 1000000000"},
        Bad{"copy:+1",
            "ANYDEV_FAULT=\"copy:+1\": entry 1 \"copy:+1\" has a bad call number "
            "\"+1\": expected a decimal number from 1 to 1000000000"},
        Bad{"copy:0x10",
            "ANYDEV_FAULT=\"copy:0x10\": entry 1 \"copy:0x10\" has a bad call "
            "number \"0x10\": expected a decimal number from 1 to 1000000000"},
        Bad{"copy:",
            "ANYDEV_FAULT=\"copy:\": entry 1 \"copy:\" has a bad call number \"\": "
            "expected a decimal number from 1 to 1000000000"},
        Bad{"copy:1000000001",
            "ANYDEV_FAULT=\"copy:1000000001\": entry 1 \"copy:1000000001\" has a bad call "
            "number \"1000000001\": expected a decimal number from 1 to 1000000000"},
        Bad{"copy:99999999999999999999",
            "ANYDEV_FAULT=\"copy:99999999999999999999\": entry 1 \"copy:99999999999999999999\" "
            "has a bad call number \"99999999999999999999\": expected a decimal number from 1 "
            "to 1000000000"},
        Bad{"copy:1:2",
            "ANYDEV_FAULT=\"copy:1:2\": entry 1 \"copy:1:2\" has a bad call number "
            "\"1:2\": expected a decimal number from 1 to 1000000000"},
        Bad{"fill:2,copy:1,fill:2",
            "ANYDEV_FAULT=\"fill:2,copy:1,fill:2\": entry 3 \"fill:2\" repeats an earlier "
            "entry"}));

TEST(SyncSwitch, AcceptsZeroAndOneOnly) {
  EXPECT_TRUE(parse_sync("1").on);
  EXPECT_TRUE(parse_sync("1").error.empty());
  EXPECT_FALSE(parse_sync("0").on);
  EXPECT_TRUE(parse_sync("0").error.empty());
  for (const char* bad : {"", "2", "yes", "true", " 1", "1 ", "01"}) {
    const auto parsed = parse_sync(bad);
    EXPECT_FALSE(parsed.on) << bad;
    EXPECT_EQ(parsed.error, std::string("ANYDEV_SYNC=\"") + bad + "\" is not 0 or 1");
  }
}

TEST(ValidateMode, AcceptsZeroOneAndBacktrace) {
  EXPECT_EQ(parse_validate("0").mode, ValidateMode::off);
  EXPECT_EQ(parse_validate("1").mode, ValidateMode::on);
  EXPECT_EQ(parse_validate("backtrace").mode, ValidateMode::backtrace);
  for (const char* bad : {"", "2", "on", "Backtrace", "backtrace ", "1,backtrace"}) {
    const auto parsed = parse_validate(bad);
    EXPECT_EQ(parsed.mode, ValidateMode::off) << bad;
    EXPECT_EQ(parsed.error,
              std::string("ANYDEV_VALIDATE=\"") + bad + "\" is not 0, 1 or backtrace");
  }
}

TEST(TracePath, AcceptsAFileAndRejectsTheRest) {
  EXPECT_EQ(parse_trace("trace.json").path, "trace.json");
  EXPECT_EQ(parse_trace("/tmp/a b.json").path, "/tmp/a b.json");
  EXPECT_EQ(parse_trace("").error,
            "ANYDEV_TRACE is set but empty: expected the path of the JSON file to write");
  EXPECT_EQ(parse_trace("/tmp/").error,
            "ANYDEV_TRACE=\"/tmp/\" names a folder: expected a file path");
  // The value is escaped in the message (src/support/format.h), never echoed raw.
  EXPECT_EQ(parse_trace("a\nb").error, "ANYDEV_TRACE=\"a\\nb\" contains a newline");
  EXPECT_EQ(parse_sync("\x1b[2J").error, "ANYDEV_SYNC=\"\\x1b[2J\" is not 0 or 1");
  EXPECT_EQ(parse_validate("1\r").error, "ANYDEV_VALIDATE=\"1\\r\" is not 0, 1 or backtrace");
  EXPECT_TRUE(parse_trace("/tmp/").path.empty());
}

}  // namespace
