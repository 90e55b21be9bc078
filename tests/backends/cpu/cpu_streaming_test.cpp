// SPDX-License-Identifier: Apache-2.0
// Streaming (non-temporal) copies and fills in the cpu backend: the store kind
// is chosen by the whole operation's footprint against the last-level cache
// (never by the size of a split's chunk), the streaming copy kernel is exact
// at every alignment and length, split copies and fills that stream are
// exact, ANYDEV_CPU_STREAMING_BYTES is parsed strictly, and fast-string fills
// follow the store probe's verdict (cpu_store_probe.h).
#include "cpu_streaming.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu_config.h"
#include "cpu_copy.h"
#include "cpu_fill.h"
#include "cpu_parallel.h"
#include "cpu_store_probe.h"
#include "cpu_task.h"

namespace anydev::cpu {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// A virtual machine's sysfs may report a last-level cache far larger than a
// core can use (260 MiB), and a split copy's 512 KiB chunks stay below
// glibc's own streaming threshold: large copies and fills must stream
// whatever the reported cache, so the decision follows the whole operation's
// footprint against half the cache.
TEST(CpuStreaming, LargeCopiesAndFillsStreamWhateverTheReportedCache) {
  struct Machine {
    const char* name;
    std::size_t llc;
  };
  for (const Machine m :
       {Machine{"Intel Xeon VM, 260 MiB L3", 260 * kMiB},
        Machine{"AMD EPYC VM, 32 MiB L3", 32 * kMiB}, Machine{"unknown cache", 0}}) {
    const std::size_t t = streaming_footprint_for_cache(m.llc);
    for (const std::size_t bytes : {256 * kMiB, 1024 * kMiB}) {
      EXPECT_TRUE(copy_streams(bytes, t)) << m.name << ": copy of " << bytes;
      EXPECT_TRUE(fill_streams(bytes, t)) << m.name << ": fill of " << bytes;
    }
    // 1 MiB (what runs inline) stays cached on any cache of 4 MiB or more.
    EXPECT_FALSE(copy_streams(kMiB, t)) << m.name;
    EXPECT_FALSE(fill_streams(kMiB, t)) << m.name;
  }
  // Where the footprint leaves half the cache free the stores stay cached:
  // 16 MiB on the 260 MiB machine (copies there matched memcpy), 4 MiB
  // copies and 16 MiB fills on the 32 MiB one; past it they stream.
  const std::size_t intel = streaming_footprint_for_cache(260 * kMiB);
  EXPECT_FALSE(copy_streams(16 * kMiB, intel));
  EXPECT_FALSE(fill_streams(16 * kMiB, intel));
  const std::size_t amd = streaming_footprint_for_cache(32 * kMiB);
  EXPECT_FALSE(copy_streams(4 * kMiB, amd));
  EXPECT_TRUE(copy_streams(16 * kMiB, amd));
  EXPECT_FALSE(fill_streams(16 * kMiB, amd));
  EXPECT_TRUE(fill_streams(64 * kMiB, amd));
  // A tiny cache never makes everything stream.
  EXPECT_EQ(streaming_footprint_for_cache(512 * 1024), kMiB);
}

// 1, 2, 4 and 8-byte fills (and byte-uniform ones of any width) through
// memset / rep stos read each line before writing it, and fall behind the
// streaming stores past the cache. Past the threshold every width takes the
// streaming stores; below it the cached paths.
TEST(CpuStreaming, FillsOfEveryPatternWidthStreamPastTheThreshold) {
  const unsigned char distinct[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const unsigned char zeros[16] = {};
  const unsigned char halves[16] = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8};
  for (const unsigned char* pattern : {distinct, zeros, halves}) {
    for (const std::size_t width : {1, 2, 4, 8, 16}) {
      EXPECT_EQ(fill_stores(pattern, width, true), FillStores::vector_streaming)
          << "width " << width << " first byte " << int{pattern[0]};
      EXPECT_NE(fill_stores(pattern, width, false), FillStores::vector_streaming)
          << "width " << width << " first byte " << int{pattern[0]};
    }
  }
  EXPECT_EQ(fill_stores(zeros, 4, false), FillStores::memset);
  EXPECT_EQ(fill_stores(distinct, 1, false), FillStores::memset);
  EXPECT_EQ(fill_stores(distinct, 16, false), FillStores::vector);
}

// Where fast-string stores keep up on cold lines, 1, 2, 4 and 8-byte fills
// of twice the last-level cache run faster with them than streaming; at
// eight times it streaming is the faster again (docs/performance.md). Fills
// with a fast-string form stream only past four times the last-level cache;
// the others (16-byte patterns of two different words) and copies keep half
// of it.
TEST(CpuStreaming, FillsWithAFastStringFormStayCachedToFourTimesTheCache) {
  const unsigned char zeros[16] = {};
  const unsigned char word[16] = {1, 2, 3, 4, 5, 6, 7, 8};
  const unsigned char distinct[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const std::size_t amd = streaming_footprint_for_cache(32 * kMiB);
  for (const std::size_t width : {1, 2, 4, 8}) {
    for (const unsigned char* pattern : {zeros, word}) {
      const bool string_form = has_string_form(pattern, width);
      EXPECT_TRUE(string_form) << "width " << width;
      EXPECT_FALSE(fill_streams(64 * kMiB, amd, string_form)) << "width " << width;
      EXPECT_FALSE(fill_streams(128 * kMiB, amd, string_form)) << "width " << width;
      EXPECT_TRUE(fill_streams(256 * kMiB, amd, string_form)) << "width " << width;
    }
  }
  EXPECT_TRUE(has_string_form(zeros, 16)) << "byte-uniform: memset";
  EXPECT_FALSE(has_string_form(distinct, 16));
  EXPECT_TRUE(fill_streams(64 * kMiB, amd, has_string_form(distinct, 16)));
  EXPECT_TRUE(copy_streams(64 * kMiB, amd));
  // No overflow at the top of the range.
  EXPECT_FALSE(fill_streams(SIZE_MAX, SIZE_MAX, true));
  EXPECT_TRUE(fill_streams(SIZE_MAX, SIZE_MAX / 16, true));
}

// The factor above suits CPUs whose fast-string stores keep up on lines in
// no cache, not every CPU: on others rep stos writes them at half the speed
// of streaming stores or less (docs/performance.md). Where the probe finds
// string stores that slow, every fill streams past the threshold.
TEST(CpuStreaming, FastStringFillsStreamPastTheThresholdWhereStringStoresAreSlowCold) {
  const std::size_t amd = streaming_footprint_for_cache(32 * kMiB);
  for (const std::size_t bytes : {17 * kMiB, 64 * kMiB, 128 * kMiB, 256 * kMiB}) {
    EXPECT_TRUE(fill_streams(bytes, amd, true, true)) << bytes;
  }
  EXPECT_FALSE(fill_streams(16 * kMiB, amd, true, true)) << "below the threshold: cached";
  EXPECT_FALSE(fill_streams(64 * kMiB, amd, true, false)) << "string stores keep up: cached";
  EXPECT_TRUE(fill_streams(64 * kMiB, amd, false, false)) << "no string form: streams";
}

// The probe's verdict from its two best times: streaming only when it wins
// by kStreamingMustWin; anything unmeasured reads string_as_fast.
TEST(CpuStoreProbe, VerdictIsStreamingOnlyWhenStreamingWinsClearly) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const struct {
    const char* name;
    double string_ns, streaming_ns;
    ColdStores expected;
  } cases[] = {
      {"intel_vm_rep_stosq_vs_streaming", 97'000, 42'000, ColdStores::streaming_faster},
      {"exactly_the_margin", 150, 100, ColdStores::streaming_faster},
      {"just_under_the_margin", 149, 100, ColdStores::string_as_fast},
      {"equal", 100, 100, ColdStores::string_as_fast},
      {"string_faster", 50, 100, ColdStores::string_as_fast},
      {"no_string_time", 0, 100, ColdStores::string_as_fast},
      {"no_streaming_time", 100, 0, ColdStores::string_as_fast},
      {"negative", -5, 100, ColdStores::string_as_fast},
      {"nan", nan, 100, ColdStores::string_as_fast},
      {"streaming_nan", 100, nan, ColdStores::string_as_fast},
      {"infinite_string", inf, 100, ColdStores::streaming_faster},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(judge_cold_stores(c.string_ns, c.streaming_ns), c.expected) << c.name;
  }
}

TEST(CpuStoreProbe, ProbeMeasuresOnceAndASetVerdictHolds) {
  double string_ns = -1;
  double streaming_ns = -1;
  const ColdStores probed = probe_cold_stores(&string_ns, &streaming_ns);
  EXPECT_NE(probed, ColdStores::unmeasured);
#if defined(__x86_64__)
  EXPECT_GT(string_ns, 0);
  EXPECT_GT(streaming_ns, 0);
  EXPECT_LT(string_ns, 1e9) << "256 KiB took over a second";
  EXPECT_LT(streaming_ns, 1e9) << "256 KiB took over a second";
#else
  EXPECT_EQ(probed, ColdStores::string_as_fast) << "nothing to compare off x86-64";
#endif
  set_cold_stores(ColdStores::streaming_faster);
  EXPECT_EQ(cold_stores(), ColdStores::streaming_faster);
  set_cold_stores(ColdStores::string_as_fast);
  EXPECT_EQ(cold_stores(), ColdStores::string_as_fast);
  set_cold_stores(ColdStores::unmeasured);
  EXPECT_NE(cold_stores(), ColdStores::unmeasured) << "the next use probes";
}

// run_task's decision follows the verdict for a fast-string fill between the
// threshold and eight times it, and the bytes are exact either way (split
// over two threads, at an odd offset).
TEST(CpuStoreProbe, FillTaskFollowsTheVerdictAndStaysExact) {
  const unsigned threads_before = split_threads();
  set_split_threads(2);
  set_streaming_footprint(kSplitFillBytes / 2);
  const std::size_t bytes = kSplitFillBytes + 4 * 37;  // split; between 1x and 8x the threshold
  std::vector<unsigned char> a(bytes + 64, 0xEE);
  const unsigned char word[4] = {0xA1, 0xB2, 0xC3, 0xD4};
  std::vector<unsigned char> expected(bytes);
  for (std::size_t i = 0; i < bytes; ++i) expected[i] = word[i % 4];
  for (const ColdStores verdict : {ColdStores::streaming_faster, ColdStores::string_as_fast}) {
    set_cold_stores(verdict);
    FillTask fill{a.data() + 7, bytes, {}, 4};
    std::memcpy(fill.pattern, word, 4);
    EXPECT_EQ(fill_task_streams(fill), verdict == ColdStores::streaming_faster);
    FillTask uniform{a.data() + 7, bytes, {}, 1};
    uniform.pattern[0] = 0x5A;
    EXPECT_EQ(fill_task_streams(uniform), verdict == ColdStores::streaming_faster);
    FillTask two_words{a.data() + 7, bytes, {}, 16};  // no string form: streams past the threshold
    std::memcpy(two_words.pattern, "0123456789abcdef", 16);
    EXPECT_TRUE(fill_task_streams(two_words));
    Task task = fill;
    ASSERT_FALSE(run_task(task).has_value());
    EXPECT_EQ(0, std::memcmp(a.data() + 7, expected.data(), bytes));
    EXPECT_EQ(a[6], 0xEE);
    EXPECT_EQ(a[7 + bytes], 0xEE);
    std::fill(a.begin(), a.end(), 0xEE);
  }
  set_cold_stores(ColdStores::unmeasured);
  set_streaming_footprint(0);
  set_split_threads(threads_before);
}

// A split 1-byte (zero) and 4-byte fill that streams, at an odd offset: the
// exact bytes and nothing outside them.
TEST(CpuStreaming, SplitStreamingSmallPatternFillsAreExact) {
  const unsigned threads_before = split_threads();
  set_split_threads(2);
  set_streaming_footprint(4096);
  const std::size_t bytes = kSplitFillBytes + 4096 * 3 + 4 * 5;  // a multiple of 4
  std::vector<unsigned char> a(bytes + 128, 0xEE);
  for (const std::size_t width : {1, 4}) {
    const unsigned char pattern[16] = {0, 0x11, 0x22, 0x33};
    std::memset(a.data(), 0xEE, a.size());
    FillTask fill{.dst = a.data() + 13, .bytes = bytes, .pattern = {}, .pattern_size = width};
    std::memcpy(fill.pattern, pattern, width);
    Task task = fill;
    ASSERT_FALSE(run_task(task).has_value());
    for (std::size_t i = 0; i < bytes; ++i) {
      ASSERT_EQ(a[13 + i], pattern[i % width]) << "width " << width << " byte " << i;
    }
    EXPECT_EQ(a[12], 0xEE);
    EXPECT_EQ(a[13 + bytes], 0xEE);
  }
  set_streaming_footprint(0);
  set_split_threads(threads_before);
}

TEST(CpuStreaming, ProcessThresholdIsSetOrDerived) {
  set_streaming_footprint(12345);
  EXPECT_EQ(streaming_footprint(), 12345u);
  set_streaming_footprint(0);
  EXPECT_GE(streaming_footprint(), kMiB);
}

TEST(CpuStreaming, CopyIsExactAtEveryAlignmentAndLength) {
  std::vector<unsigned char> src(3 * kMiB), dst(3 * kMiB);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 13 + 5);
  for (std::size_t src_offset : {0, 1, 32, 63}) {
    for (std::size_t dst_offset : {0, 1, 8, 33, 64}) {
      for (std::size_t bytes :
           {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{255},
            std::size_t{256}, std::size_t{257}, std::size_t{4096 + 77},
            // whole 16 KiB blocks walked four pages in turn, then pieces and
            // bytes past the last block
            std::size_t{3 * 16384 + 5 * 128 + 37}, 2 * kMiB + 129}) {
        std::memset(dst.data(), 0xEE, dst.size());
        copy_streaming(dst.data() + dst_offset, src.data() + src_offset, bytes);
        ASSERT_EQ(0, std::memcmp(dst.data() + dst_offset, src.data() + src_offset, bytes))
            << "src offset " << src_offset << " dst offset " << dst_offset << " bytes " << bytes;
        for (std::size_t i = 0; i < dst_offset; ++i) ASSERT_EQ(dst[i], 0xEE) << "before, " << i;
        for (std::size_t i = dst_offset + bytes; i < dst_offset + bytes + 64; ++i) {
          ASSERT_EQ(dst[i], 0xEE) << "after the range, byte " << i << ", bytes " << bytes;
        }
      }
    }
  }
}

// Split over two threads with every chunk streaming (threshold set low), at
// odd offsets and lengths: the same bytes as memcpy and the pattern.
TEST(CpuStreaming, SplitStreamingCopyAndFillAreExact) {
  const unsigned threads_before = split_threads();
  set_split_threads(2);
  set_streaming_footprint(4096);
  const std::size_t bytes = kSplitFillBytes + 4096 * 5 + 16 * 7;  // a multiple of 16
  std::vector<unsigned char> a(bytes + 128), b(bytes + 128, 0);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i * 7 + 3);
  Task copy = CopyTask{b.data() + 9, a.data() + 40, bytes};
  ASSERT_FALSE(run_task(copy).has_value());
  EXPECT_EQ(0, std::memcmp(b.data() + 9, a.data() + 40, bytes));
  EXPECT_EQ(b[8], 0);
  EXPECT_EQ(b[9 + bytes], 0);
  const unsigned char pattern[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  FillTask fill{.dst = a.data() + 24, .bytes = bytes, .pattern = {}, .pattern_size = 16};
  std::memcpy(fill.pattern, pattern, 16);
  Task task = fill;
  ASSERT_FALSE(run_task(task).has_value());
  for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(a[24 + i], pattern[i % 16]) << "byte " << i;
  set_streaming_footprint(0);
  set_split_threads(threads_before);
}

TEST(CpuStreaming, StreamingBytesVariableIsStrict) {
  EXPECT_EQ(parse_streaming_bytes("1"), std::size_t{1});
  EXPECT_EQ(parse_streaming_bytes("67108864"), 64 * kMiB);
  EXPECT_EQ(parse_streaming_bytes("4611686018427387904"), std::size_t{1} << 62);
  for (const char* bad :
       {"", "0", "-1", "64M", " 1", "1 ", "4611686018427387905", "99999999999999999999999"}) {
    EXPECT_FALSE(parse_streaming_bytes(bad).has_value()) << "\"" << bad << "\"";
  }
  EXPECT_FALSE(parse_streaming_bytes(nullptr).has_value());
}

}  // namespace
}  // namespace anydev::cpu
