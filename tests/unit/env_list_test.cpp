// SPDX-License-Identifier: Apache-2.0
// The shared strict parsing of comma-separated environment lists
// (src/support/env_list.h): decimal numbers and the per-entry rules and messages.
#include "support/env_list.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace anydev::core {
namespace {

TEST(EnvListDecimal, AcceptsDigitsWithinTheBounds) {
  EXPECT_EQ(parse_decimal("0", 0, 10), 0u);
  EXPECT_EQ(parse_decimal("10", 0, 10), 10u);
  EXPECT_EQ(parse_decimal("007", 1, 10), 7u);
  EXPECT_EQ(parse_decimal("18446744073709551615", 0, UINT64_MAX), UINT64_MAX);
}

TEST(EnvListDecimal, RefusesEverythingElse) {
  for (const char* text : {"", "11", "-1", "+1", "0x1", " 1", "1 ", "1.0", "1e3"}) {
    EXPECT_FALSE(parse_decimal(text, 0, 10).has_value()) << '"' << text << '"';
  }
  EXPECT_FALSE(parse_decimal("0", 1, 10).has_value()) << "below the minimum";
  EXPECT_FALSE(parse_decimal("18446744073709551616", 0, UINT64_MAX).has_value()) << "overflow";
  EXPECT_FALSE(parse_decimal("99999999999999999999999999", 0, 1000).has_value()) << "overflow";
}

TEST(EnvListEntries, GivesEachEntryInOrder) {
  std::vector<std::string> seen;
  const std::string error = check_list_entries("X", "a,b:1,c", [&](std::string_view entry) {
    seen.emplace_back(entry);
    return std::string();
  });
  EXPECT_EQ(error, "");
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b:1", "c"}));
}

TEST(EnvListEntries, NamesTheFirstBadEntryAndItsPosition) {
  const auto accept = [](std::string_view) { return std::string(); };
  EXPECT_EQ(check_list_entries("X", "a,,b", accept), "X=\"a,,b\": entry 2 is empty");
  EXPECT_EQ(check_list_entries("X", "a,", accept), "X=\"a,\": entry 2 is empty");
  EXPECT_EQ(check_list_entries("X", "a, b", accept),
            "X=\"a, b\": entry 2 \" b\" contains whitespace");
  EXPECT_EQ(check_list_entries("X", "a\v", accept),
            "X=\"a\\x0b\": entry 1 \"a\\x0b\" contains whitespace");  // escaped
  int calls = 0;
  EXPECT_EQ(check_list_entries("X", "ok,bad,worse",
                               [&](std::string_view entry) {
                                 ++calls;
                                 return std::string(entry == "ok" ? "" : "is wrong");
                               }),
            "X=\"ok,bad,worse\": entry 2 \"bad\" is wrong");
  EXPECT_EQ(calls, 2) << "stops at the first bad entry";
}

}  // namespace
}  // namespace anydev::core
