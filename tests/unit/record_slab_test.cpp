// SPDX-License-Identifier: Apache-2.0
// RecordSlab (src/memory/record_slab.h), where buffer handles and allocation
// records live: blocks of every size class aligned and disjoint, freed blocks
// handed out again, chunks given back once empty (one kept per class), the
// figures anydev_record_memory reports, concurrent churn (TSan checks the
// locking), and a fork() while another thread allocates.
#include "memory/record_slab.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "anydev/anydev.h"

namespace anydev::core {
namespace {

// A slab of the test's own, its chunks unmapped at the end.
struct TestSlab {
  RecordSlab slab;
  ~TestSlab() { slab.unmap_all(); }
};

std::size_t class_bytes(std::size_t bytes) {
  return std::max<std::size_t>(1, (bytes + RecordSlab::kGranule - 1) / RecordSlab::kGranule) *
         RecordSlab::kGranule;
}

struct SizeCase {
  std::size_t bytes;
  const char* name;
};

class RecordSlabSizes : public ::testing::TestWithParam<SizeCase> {};

TEST_P(RecordSlabSizes, BlocksAreAlignedDisjointAndKeepTheirBytes) {
  const std::size_t bytes = GetParam().bytes;
  TestSlab t;
  // More blocks than one chunk holds for the smaller classes' sake: a
  // second chunk is mapped on the way.
  const std::size_t count = 2 * RecordSlab::kChunkBytes / class_bytes(bytes) + 7;
  std::vector<unsigned char*> blocks(count);
  for (std::size_t i = 0; i < count; ++i) {
    blocks[i] = static_cast<unsigned char*>(t.slab.allocate(bytes));
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(blocks[i]) % RecordSlab::kGranule, 0u) << i;
    std::memset(blocks[i], static_cast<int>(i * 131 + 7) & 0xff, std::max<std::size_t>(bytes, 1));
  }
  const RecordSlab::Stats live = t.slab.stats();
  EXPECT_EQ(live.bytes_in_use, count * class_bytes(bytes));
  EXPECT_GE(live.chunks, 2u);
  EXPECT_EQ(live.bytes_reserved, live.chunks * RecordSlab::kChunkBytes);
  // Every block still holds its own pattern: none overlaps another.
  for (std::size_t i = 0; i < count; ++i) {
    const auto want = static_cast<unsigned char>(i * 131 + 7);
    for (std::size_t b = 0; b < std::max<std::size_t>(bytes, 1); ++b) {
      ASSERT_EQ(blocks[i][b], want) << "block " << i << " byte " << b;
    }
  }
  for (unsigned char* block : blocks) t.slab.deallocate(block);
  const RecordSlab::Stats freed = t.slab.stats();
  EXPECT_EQ(freed.bytes_in_use, 0u);
  EXPECT_EQ(freed.chunks, 1u) << "empty chunks beyond one per class are given back";
}

INSTANTIATE_TEST_SUITE_P(Classes, RecordSlabSizes,
                         ::testing::Values(SizeCase{0, "zero"}, SizeCase{1, "one"},
                                           SizeCase{16, "granule"}, SizeCase{17, "granule_plus_1"},
                                           SizeCase{88, "buffer_handle"},
                                           SizeCase{136, "allocation_record"},
                                           SizeCase{255, "largest_minus_1"},
                                           SizeCase{256, "largest"}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(RecordSlab, FreedBlockIsHandedOutAgain) {
  TestSlab t;
  void* a = t.slab.allocate(96);
  void* b = t.slab.allocate(96);
  t.slab.deallocate(a);
  EXPECT_EQ(t.slab.allocate(90), a) << "same class, the freed block first";
  t.slab.deallocate(a);
  t.slab.deallocate(b);
}

TEST(RecordSlab, AFullChunkTakesBlocksAgainOnceOneIsFreed) {
  TestSlab t;
  constexpr std::size_t kBytes = 256;
  std::vector<void*> blocks;
  // Fill the first chunk exactly: the next allocation maps a second one.
  while (t.slab.stats().chunks < 2) blocks.push_back(t.slab.allocate(kBytes));
  void* on_second = blocks.back();
  blocks.pop_back();
  void* from_first = blocks.front();
  t.slab.deallocate(from_first);
  t.slab.deallocate(on_second);  // the second chunk is empty again: kept
  ASSERT_EQ(t.slab.stats().chunks, 2u);
  // Both chunks have room; no third is mapped while they do.
  void* x = t.slab.allocate(kBytes);
  void* y = t.slab.allocate(kBytes);
  EXPECT_TRUE((x == from_first || y == from_first)) << "the full chunk's freed block is reused";
  EXPECT_EQ(t.slab.stats().chunks, 2u);
  t.slab.deallocate(x);
  t.slab.deallocate(y);
  for (std::size_t i = 1; i < blocks.size(); ++i) t.slab.deallocate(blocks[i]);
  EXPECT_EQ(t.slab.stats().bytes_in_use, 0u);
  EXPECT_EQ(t.slab.stats().chunks, 1u);
}

TEST(RecordSlab, SizesAboveTheLargestClassAreRefused) {
  TestSlab t;
  EXPECT_THROW(t.slab.allocate(RecordSlab::kLargest + 1), std::bad_alloc);
  EXPECT_EQ(t.slab.stats().chunks, 0u) << "nothing mapped for a refused size";
  // The process-wide entry points send them to the heap instead.
  void* big = allocate_record(RecordSlab::kLargest + 1);
  ASSERT_NE(big, nullptr);
  std::memset(big, 0x5a, RecordSlab::kLargest + 1);
  free_record(big, RecordSlab::kLargest + 1);
  free_record(nullptr, 8);  // no-op, as delete nullptr
}

TEST(RecordSlab, ConcurrentChurnKeepsEveryBlockToItsOwner) {
  TestSlab t;
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  std::atomic<int> corrupt{0};
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id) {
    threads.emplace_back([&, id] {
      std::mt19937 rng(static_cast<unsigned>(id) + 1);
      std::vector<std::pair<unsigned char*, std::size_t>> mine;
      for (int r = 0; r < kRounds; ++r) {
        if (mine.size() < 64 && (mine.empty() || rng() % 2 == 0)) {
          const std::size_t bytes = 8 + rng() % 241;
          auto* p = static_cast<unsigned char*>(t.slab.allocate(bytes));
          std::memset(p, id + 1, bytes);
          mine.emplace_back(p, bytes);
        } else {
          const std::size_t k = rng() % mine.size();
          auto [p, bytes] = mine[k];
          for (std::size_t b = 0; b < bytes; ++b) {
            if (p[b] != id + 1) {
              corrupt.fetch_add(1);
              break;
            }
          }
          t.slab.deallocate(p);
          mine[k] = mine.back();
          mine.pop_back();
        }
      }
      for (auto [p, bytes] : mine) t.slab.deallocate(p);
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(corrupt.load(), 0) << "a block was handed to two threads at once";
  EXPECT_EQ(t.slab.stats().bytes_in_use, 0u);
}

// The process-wide slab's locks are taken around fork(): a child made while
// another thread allocates can allocate too (a lock left held would hang it;
// alarm() turns a hang into a failure).
TEST(RecordSlab, ForkWhileAnotherThreadAllocates) {
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      void* p = allocate_record(96);
      free_record(p, 96);
    }
  });
  for (int i = 0; i < 20; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(10);
      void* p = allocate_record(96);
      free_record(p, 96);
      _exit(p != nullptr ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child " << i << " status " << status;
  }
  stop = true;
  churn.join();
}

// Buffer handles and allocation records are counted by anydev_record_memory
// (or, under AddressSanitizer, come from its heap).
TEST(RecordSlab, BufferRecordsAreCountedByRecordMemory) {
  anydev_record_memory_t before{};
  before.struct_size = sizeof(before);
  ASSERT_EQ(anydev_record_memory(&before), ANYDEV_SUCCESS);
  anydev_context_t ctx = nullptr;
  ASSERT_EQ(anydev_context_create("cpu", 0, &ctx), ANYDEV_SUCCESS);
  anydev_buffer_t buf = nullptr;
  ASSERT_EQ(anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 64, &buf),
            ANYDEV_SUCCESS);
  anydev_record_memory_t live{};
  live.struct_size = sizeof(live);
  ASSERT_EQ(anydev_record_memory(&live), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_buffer_release(buf), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_context_release(ctx), ANYDEV_SUCCESS);
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer builds keep records on its heap (per-allocation checks)";
#else
  EXPECT_GE(live.bytes_in_use, before.bytes_in_use + 96 + 128)
      << "a buffer's handle and its allocation record";
  EXPECT_GE(live.bytes_reserved, live.bytes_in_use);
#endif
}

TEST(RecordSlab, RecordMemoryRefusesAShortStruct) {
  anydev_record_memory_t out{};
  out.struct_size = sizeof(out) - 1;
  EXPECT_EQ(anydev_record_memory(&out), ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(anydev_last_error_message()).find("struct_size"), std::string::npos);
  EXPECT_EQ(anydev_record_memory(nullptr), ANYDEV_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace anydev::core
