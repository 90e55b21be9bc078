// SPDX-License-Identifier: Apache-2.0
// split_work, the cpu backend's division of one large copy or fill among
// threads: every byte is handed out exactly once, in chunks that start on
// 4096-byte boundaries (a fill's pattern phase depends on it) and are no
// larger than kSplitChunkBytes, whatever the length and thread count.
#include "cpu_parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace anydev::cpu {
namespace {

// The chunks one split_work call handed out, and the threads that ran them.
struct Record {
  std::mutex mutex;
  std::vector<std::pair<std::size_t, std::size_t>> chunks;  // offset, length
  std::vector<std::thread::id> threads;
};

void record(std::size_t offset, std::size_t length, void* context) {
  auto& r = *static_cast<Record*>(context);
  std::lock_guard<std::mutex> hold(r.mutex);
  r.chunks.emplace_back(offset, length);
  r.threads.push_back(std::this_thread::get_id());
}

// Restores the thread count a test changed.
class SplitThreads {
 public:
  explicit SplitThreads(unsigned threads) : before_(split_threads()) { set_split_threads(threads); }
  ~SplitThreads() { set_split_threads(before_); }

 private:
  unsigned before_;
};

struct Case {
  std::string name;
  unsigned threads;
  std::size_t bytes;
};

class SplitWork : public ::testing::TestWithParam<Case> {};

TEST_P(SplitWork, HandsOutEveryByteOnceInAlignedBoundedChunks) {
  const Case& c = GetParam();
  SplitThreads threads(c.threads);
  Record r;
  split_work(c.bytes, record, &r);
  std::sort(r.chunks.begin(), r.chunks.end());
  ASSERT_FALSE(r.chunks.empty());
  std::size_t next = 0;
  for (const auto& [offset, length] : r.chunks) {
    EXPECT_EQ(offset, next) << "a gap or an overlap before offset " << offset;
    EXPECT_GT(length, 0u) << "empty chunk at " << offset;
    if (r.chunks.size() > 1) {
      EXPECT_EQ(offset % 4096, 0u) << "chunk at " << offset;
      EXPECT_LE(length, kSplitChunkBytes) << "chunk at " << offset;
    }
    next = offset + length;
  }
  EXPECT_EQ(next, c.bytes);
}

INSTANTIATE_TEST_SUITE_P(
    Lengths, SplitWork,
    ::testing::Values(Case{"OneThreadIsOneCall", 1, std::size_t{8} << 20},
                      Case{"TwoThreadsUnderTwoPagesIsOneCall", 2, 8191},
                      Case{"TwoThreadsTwoPages", 2, 8192},
                      Case{"TwoThreadsBelowOneChunkEach", 2, (std::size_t{512} << 10) + 12345},
                      Case{"TwoThreadsManyChunksOddTail", 2,
                           (std::size_t{16} << 20) + 4096 * 3 + 48},
                      Case{"FourThreadsManyChunks", 4, (std::size_t{9} << 20) + 1}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// One thread, or too few bytes to split: a single call on the caller's thread.
TEST(SplitWorkSingle, RunsOnTheCallingThread) {
  for (const auto& [threads, bytes] :
       {std::pair<unsigned, std::size_t>{1, std::size_t{4} << 20}, {2, 4096}}) {
    SplitThreads set(threads);
    Record r;
    split_work(bytes, record, &r);
    ASSERT_EQ(r.chunks.size(), 1u) << threads << " threads, " << bytes << " bytes";
    EXPECT_EQ(r.chunks[0], std::make_pair(std::size_t{0}, bytes));
    EXPECT_EQ(r.threads[0], std::this_thread::get_id());
  }
}

// A large split is cut into many chunks, not one per thread.
TEST(SplitWorkSingle, LargeSplitsUseManySmallChunks) {
  SplitThreads set(2);
  Record r;
  const std::size_t bytes = std::size_t{8} << 20;
  split_work(bytes, record, &r);
  EXPECT_EQ(r.chunks.size(), bytes / kSplitChunkBytes);
}

}  // namespace
}  // namespace anydev::cpu
