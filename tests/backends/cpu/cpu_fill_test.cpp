// SPDX-License-Identifier: Apache-2.0
// The cpu backend's fill and copy kernels: exact bits for every pattern size,
// destination alignment, length and store strategy (vector, rep stos,
// streaming), and the split of large copies and fills across
// threads.
#include "cpu_fill.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "cpu_parallel.h"
#include "cpu_task.h"

namespace anydev::cpu {
namespace {

// The expected bytes: pattern repeated from its first byte.
bool matches(const unsigned char* out, const unsigned char* pattern, std::size_t pattern_size,
             std::size_t bytes, std::size_t* first_bad) {
  for (std::size_t i = 0; i < bytes; ++i) {
    if (out[i] != pattern[i % pattern_size]) {
      *first_bad = i;
      return false;
    }
  }
  return true;
}

const unsigned char kPattern[16] = {0x5A, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                    0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F};
// Two equal 8-byte halves: filled as 8-byte words.
const unsigned char kHalves[16] = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8};

TEST(CpuFill, EveryPatternSizeAlignmentAndLength) {
  std::vector<unsigned char> memory((std::size_t{2} << 20) + 256);
  for (std::size_t pattern_size : {1, 2, 4, 8, 16}) {
    for (const unsigned char* pattern : {kPattern, kHalves}) {
      for (std::size_t offset : {0, 1, 4, 8, 12, 63}) {
        for (std::size_t units :
             {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{5},
              std::size_t{17}, std::size_t{1000}, (std::size_t{1} << 20) / 16 + 3}) {
          for (bool streaming : {false, true}) {
            const std::size_t bytes = units * pattern_size;
            if (offset + bytes + 8 > memory.size()) continue;
            std::memset(memory.data(), 0xEE, memory.size());
            unsigned char* out = memory.data() + offset;
            fill_pattern(out, pattern, pattern_size, bytes, streaming);
            std::size_t bad = 0;
            ASSERT_TRUE(matches(out, pattern, pattern_size, bytes, &bad))
                << "pattern_size " << pattern_size << " offset " << offset << " bytes " << bytes
                << " streaming " << streaming << ": first wrong byte " << bad;
            for (std::size_t i = 0; i < offset; ++i) ASSERT_EQ(memory[i], 0xEE) << "before, " << i;
            for (std::size_t i = offset + bytes; i < offset + bytes + 8; ++i) {
              ASSERT_EQ(memory[i], 0xEE) << "after the range, byte " << i;
            }
          }
        }
      }
    }
  }
}

// Split tasks: with two threads, a fill and a copy beyond the split size at
// an odd length and offset give the same bytes as a single thread.
TEST(CpuFill, SplitFillAndCopyAreExact) {
  const unsigned before = split_threads();
  set_split_threads(2);
  const std::size_t bytes = kSplitFillBytes + 4096 * 3 + 48;  // a multiple of 16
  std::vector<unsigned char> a(bytes + 64), b(bytes + 64, 0);
  for (std::size_t pattern_size : {4, 16}) {
    FillTask fill{
        .dst = a.data() + 16, .bytes = bytes, .pattern = {}, .pattern_size = pattern_size};
    std::memcpy(fill.pattern, kPattern, pattern_size);
    Task task = fill;
    ASSERT_FALSE(run_task(task).has_value());
    std::size_t bad = 0;
    ASSERT_TRUE(matches(a.data() + 16, kPattern, pattern_size, bytes, &bad))
        << "pattern_size " << pattern_size << ": first wrong byte " << bad;
  }
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i * 7 + 3);
  Task copy = CopyTask{b.data() + 8, a.data() + 16, bytes};
  ASSERT_FALSE(run_task(copy).has_value());
  EXPECT_EQ(0, std::memcmp(b.data() + 8, a.data() + 16, bytes));
  EXPECT_EQ(b[7], 0);
  EXPECT_EQ(b[8 + bytes], 0);
  set_split_threads(before);
}

TEST(CpuFill, InlineOnlyForSmallCopiesAndFills) {
  EXPECT_TRUE(may_run_inline(Task{CopyTask{nullptr, nullptr, kInlineBytes}}));
  EXPECT_FALSE(may_run_inline(Task{CopyTask{nullptr, nullptr, kInlineBytes + 1}}));
  EXPECT_TRUE(may_run_inline(
      Task{FillTask{.dst = nullptr, .bytes = 64, .pattern = {}, .pattern_size = 4}}));
  EXPECT_FALSE(may_run_inline(Task{WaitTask{}}));
  EXPECT_FALSE(may_run_inline(Task{HostFunctionTask{}}));
}

}  // namespace
}  // namespace anydev::cpu
