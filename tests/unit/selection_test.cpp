// SPDX-License-Identifier: Apache-2.0
// ANYDEV_BACKEND parsing (src/runtime/selection.h): the accepted forms, and every
// malformed form rejected with a message that names the bad entry.
#include "runtime/selection.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace anydev::core {
namespace {

const std::array<std::string, 5> kKnown = {"cpu", "cuda", "hip", "level_zero", "opencl"};

// gtest parameter names allow only [A-Za-z0-9_]: spell the rest out.
std::string Readable(const std::string& text) {
  if (text.empty()) return "empty";
  std::string out;
  for (char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
      out += c;
    } else if (c == '_') {
      out += "_";
    } else if (c == ',') {
      out += "_comma_";
    } else if (c == ':') {
      out += "_colon_";
    } else if (c == ' ') {
      out += "_space_";
    } else if (c == '-') {
      out += "_minus_";
    } else if (c == '+') {
      out += "_plus_";
    } else {
      out += "_x" + std::to_string(static_cast<unsigned char>(c)) + "_";
    }
  }
  return out;
}

struct ValidCase {
  std::string text;
  std::vector<BackendChoice> expected;
};

std::ostream& operator<<(std::ostream& os, const ValidCase& c) {
  return os << '"' << c.text << '"';
}

class ValidBackendList : public ::testing::TestWithParam<ValidCase> {};

TEST_P(ValidBackendList, Parses) {
  const BackendListParse parsed = parse_backend_list(GetParam().text, kKnown);
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  ASSERT_EQ(parsed.entries.size(), GetParam().expected.size());
  for (std::size_t i = 0; i < parsed.entries.size(); ++i) {
    SCOPED_TRACE("entry " + std::to_string(i + 1));
    EXPECT_EQ(parsed.entries[i].name, GetParam().expected[i].name);
    EXPECT_EQ(parsed.entries[i].device, GetParam().expected[i].device);
    EXPECT_EQ(parsed.entries[i].device_given, GetParam().expected[i].device_given);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Selection, ValidBackendList,
    ::testing::Values(ValidCase{"cuda", {{"cuda", 0, false}}},
                      ValidCase{"cuda:1", {{"cuda", 1, true}}},
                      ValidCase{"cuda:0", {{"cuda", 0, true}}},
                      ValidCase{"cpu:12", {{"cpu", 12, true}}},
                      ValidCase{"hip,cpu", {{"hip", 0, false}, {"cpu", 0, false}}},
                      ValidCase{"cpu:0,opencl:3", {{"cpu", 0, true}, {"opencl", 3, true}}},
                      ValidCase{"level_zero", {{"level_zero", 0, false}}},
                      ValidCase{"cuda:0,cuda:1", {{"cuda", 0, true}, {"cuda", 1, true}}},
                      ValidCase{"opencl,level_zero:2,hip:1,cuda,cpu",
                                {{"opencl", 0, false},
                                 {"level_zero", 2, true},
                                 {"hip", 1, true},
                                 {"cuda", 0, false},
                                 {"cpu", 0, false}}}),
    [](const ::testing::TestParamInfo<ValidCase>& info) { return Readable(info.param.text); });

struct InvalidCase {
  std::string text;
  // Substrings the error must contain: the entry's position and the entry.
  std::vector<std::string> mentions;
};

std::ostream& operator<<(std::ostream& os, const InvalidCase& c) {
  return os << '"' << c.text << '"';
}

class InvalidBackendList : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidBackendList, IsRejectedNamingTheEntry) {
  const BackendListParse parsed = parse_backend_list(GetParam().text, kKnown);
  ASSERT_FALSE(parsed.ok()) << "accepted \"" << GetParam().text << "\" as " << parsed.entries.size()
                            << " entries";
  EXPECT_TRUE(parsed.entries.empty()) << "a failed parse must not return entries";
  for (const std::string& mention : GetParam().mentions) {
    EXPECT_NE(parsed.error.find(mention), std::string::npos)
        << "error \"" << parsed.error << "\" does not mention \"" << mention << "\"";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Selection, InvalidBackendList,
    ::testing::Values(
        InvalidCase{"", {"empty"}}, InvalidCase{"cuda,", {"entry 2"}},
        InvalidCase{",cpu", {"entry 1"}}, InvalidCase{"cuda,,cpu", {"entry 2"}},
        InvalidCase{" cuda", {"entry 1", " cuda"}}, InvalidCase{"cuda ", {"entry 1", "cuda "}},
        InvalidCase{"cpu, cuda", {"entry 2", " cuda"}}, InvalidCase{"CUDA", {"entry 1", "CUDA"}},
        InvalidCase{"cud", {"entry 1", "cud"}}, InvalidCase{"cudax", {"entry 1", "cudax"}},
        InvalidCase{"cpu,cudax", {"entry 2", "cudax"}}, InvalidCase{"cuda:", {"entry 1", "cuda:"}},
        InvalidCase{":0", {"entry 1", ":0"}}, InvalidCase{"cuda:-1", {"entry 1", "cuda:-1"}},
        InvalidCase{"cuda:+1", {"entry 1", "cuda:+1"}},
        InvalidCase{"cuda:1x", {"entry 1", "cuda:1x"}},
        InvalidCase{"cuda:1:2", {"entry 1", "cuda:1:2"}},
        InvalidCase{"cuda:99999999999999999999", {"entry 1", "99999999999999999999"}},
        InvalidCase{"cuda:0x1", {"entry 1", "cuda:0x1"}},
        InvalidCase{"cpu,cpu", {"entry 2", "cpu"}},
        InvalidCase{"cuda:1,hip,cuda:1", {"entry 3", "cuda:1"}}),
    [](const ::testing::TestParamInfo<InvalidCase>& info) { return Readable(info.param.text); });

TEST(Selection, OnlyTheGivenKnownNamesAreAccepted) {
  const std::array<std::string, 2> known = {"cpu", "testgood"};
  EXPECT_TRUE(parse_backend_list("testgood:0,cpu", known).ok());
  const BackendListParse parsed = parse_backend_list("cuda", known);
  EXPECT_FALSE(parsed.ok()) << "cuda is not in the known list given to the parser";
}

TEST(Selection, DefaultOrderIsCudaHipLevelZeroOpenclCpu) {
  const std::span<const std::string> order = default_backend_order();
  const std::vector<std::string> actual(order.begin(), order.end());
  EXPECT_EQ(actual, (std::vector<std::string>{"cuda", "hip", "level_zero", "opencl", "cpu"}));
}

}  // namespace
}  // namespace anydev::core
