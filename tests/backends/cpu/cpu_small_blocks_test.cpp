// SPDX-License-Identifier: Apache-2.0
// The cpu backend's small-block allocator (backends/cpu/cpu_small_blocks.h)
// through allocate_pages/free_pages: small blocks are aligned to their class
// and never overlap, many share one segment (no mapping each), empty
// segments go back to the OS, a free of anything but a live block of that
// kind is refused and changes nothing, and concurrent use keeps every block
// intact.
#include "cpu_small_blocks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "cpu_memory.h"

namespace anydev::cpu {
namespace {

std::uintptr_t at(void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(CpuSmallBlocks, ClassesArePowersOfTwoFrom64BytesTo16KiB) {
  EXPECT_EQ(small_block_class(1), 64u);
  EXPECT_EQ(small_block_class(64), 64u);
  EXPECT_EQ(small_block_class(65), 128u);
  EXPECT_EQ(small_block_class(512), 512u);
  EXPECT_EQ(small_block_class(513), 1024u);
  EXPECT_EQ(small_block_class(16384), 16384u);
  EXPECT_TRUE(is_small_block(16384));
  EXPECT_FALSE(is_small_block(16385));
}

TEST(CpuSmallBlocks, BlocksAreAlignedToTheirClassAndDoNotOverlap) {
  for (const MemoryKind kind : {MemoryKind::kPinnedHost, MemoryKind::kDevice}) {
    std::vector<std::pair<std::uintptr_t, std::size_t>> blocks;  // address, class
    for (const std::size_t bytes : {1u, 63u, 64u, 100u, 512u, 1000u, 4096u, 5000u, 16384u}) {
      for (int i = 0; i < 200; ++i) {
        void* p = nullptr;
        ASSERT_EQ(allocate_pages(kind, bytes, &p), ANYDEV_SUCCESS) << bytes;
        const std::size_t block = small_block_class(bytes);
        EXPECT_EQ(at(p) % block, 0u) << bytes << " bytes at " << p;
        std::memset(p, 0xA5, bytes);
        blocks.emplace_back(at(p), block);
      }
    }
    std::sort(blocks.begin(), blocks.end());
    for (std::size_t i = 1; i < blocks.size(); ++i) {
      EXPECT_LE(blocks[i - 1].first + blocks[i - 1].second, blocks[i].first);
    }
    for (const auto& [address, block] : blocks) {
      EXPECT_EQ(free_pages(kind, reinterpret_cast<void*>(address)), ANYDEV_SUCCESS);
    }
  }
}

TEST(CpuSmallBlocks, ManySmallBlocksShareOneSegment) {
  const SmallBlockStats before = small_block_stats();
  constexpr std::size_t kBlocks = kSegmentBytes / 64;  // one segment's worth
  std::vector<void*> blocks(kBlocks);
  for (void*& p : blocks)
    ASSERT_EQ(allocate_pages(MemoryKind::kPinnedHost, 64, &p), ANYDEV_SUCCESS);
  const SmallBlockStats full = small_block_stats();
  EXPECT_EQ(full.live_blocks, before.live_blocks + kBlocks);
  EXPECT_LE(full.segments, before.segments + 1);
  for (void* p : blocks) ASSERT_EQ(free_pages(MemoryKind::kPinnedHost, p), ANYDEV_SUCCESS);
  EXPECT_EQ(small_block_stats().live_blocks, before.live_blocks);
}

TEST(CpuSmallBlocks, EmptySegmentsAreUnmappedButOneKeptPerClass) {
  const SmallBlockStats before = small_block_stats();
  constexpr std::size_t kPerSegment = kSegmentBytes / kLargestSmallBlock;
  std::vector<void*> blocks(4 * kPerSegment);
  for (void*& p : blocks) {
    ASSERT_EQ(allocate_pages(MemoryKind::kDevice, kLargestSmallBlock, &p), ANYDEV_SUCCESS);
  }
  // Four segments' worth: at most one was there already (a kept empty one).
  EXPECT_GE(small_block_stats().segments, before.segments + 3);
  EXPECT_LE(small_block_stats().segments, before.segments + 4);
  for (void* p : blocks) ASSERT_EQ(free_pages(MemoryKind::kDevice, p), ANYDEV_SUCCESS);
  EXPECT_LE(small_block_stats().segments, before.segments + 1);
}

TEST(CpuSmallBlocks, FreeOfNoLiveBlockIsRefusedAndChangesNothing) {
  void* p = nullptr;
  ASSERT_EQ(allocate_pages(MemoryKind::kPinnedHost, 64, &p), ANYDEV_SUCCESS);
  const std::size_t live = small_block_stats().live_blocks;
  void* inside = static_cast<unsigned char*>(p) + 8;
  EXPECT_EQ(free_pages(MemoryKind::kPinnedHost, inside), ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(free_pages(MemoryKind::kDevice, p), ANYDEV_ERROR_INVALID_ARGUMENT);
  bool locked = false;
  EXPECT_EQ(memory_locked(MemoryKind::kDevice, p, &locked), ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(small_block_stats().live_blocks, live);
  EXPECT_EQ(memory_locked(MemoryKind::kPinnedHost, p, &locked), ANYDEV_SUCCESS);
  EXPECT_EQ(free_pages(MemoryKind::kPinnedHost, p), ANYDEV_SUCCESS);
  EXPECT_EQ(small_block_stats().live_blocks, live - 1);
  // A second free of the same block: the segment is still mapped (kept).
  EXPECT_EQ(free_pages(MemoryKind::kPinnedHost, p), ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memory_locked(MemoryKind::kPinnedHost, p, &locked), ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(small_block_stats().live_blocks, live - 1);
}

TEST(CpuSmallBlocks, LargeAllocationsReportTheirLockState) {
  const bool before = lock_pinned_memory();
  set_lock_pinned_memory(false);
  void* p = nullptr;
  ASSERT_EQ(allocate_pages(MemoryKind::kPinnedHost, kLargestSmallBlock + 1, &p), ANYDEV_SUCCESS);
  bool locked = true;
  EXPECT_EQ(memory_locked(MemoryKind::kPinnedHost, p, &locked), ANYDEV_SUCCESS);
  EXPECT_FALSE(locked);
  EXPECT_EQ(free_pages(MemoryKind::kPinnedHost, p), ANYDEV_SUCCESS);
  EXPECT_EQ(memory_locked(MemoryKind::kPinnedHost, p, &locked), ANYDEV_ERROR_INVALID_ARGUMENT);
  set_lock_pinned_memory(before);
}

TEST(CpuSmallBlocks, ConcurrentAllocateAndFreeKeepEveryBlockIntact) {
  const std::size_t live_before = small_block_stats().live_blocks;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      std::mt19937 random(static_cast<unsigned>(t) + 1);
      std::vector<std::pair<unsigned char*, std::size_t>> held;
      const auto tag = static_cast<unsigned char>(t + 1);
      for (int i = 0; i < 20000; ++i) {
        if (held.size() < 64 && (held.empty() || random() % 2 == 0)) {
          const std::size_t bytes = 1 + random() % 3000;
          void* p = nullptr;
          if (allocate_pages(MemoryKind::kPinnedHost, bytes, &p) != ANYDEV_SUCCESS) {
            ++failures;
            continue;
          }
          std::memset(p, tag, bytes);
          held.emplace_back(static_cast<unsigned char*>(p), bytes);
        } else {
          const std::size_t k = random() % held.size();
          const auto [p, bytes] = held[k];
          for (std::size_t b = 0; b < bytes; ++b) {
            if (p[b] != tag) {
              ++failures;
              break;
            }
          }
          if (free_pages(MemoryKind::kPinnedHost, p) != ANYDEV_SUCCESS) ++failures;
          held[k] = held.back();
          held.pop_back();
        }
      }
      for (const auto& [p, bytes] : held) {
        if (free_pages(MemoryKind::kPinnedHost, p) != ANYDEV_SUCCESS) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(small_block_stats().live_blocks, live_before);
}

}  // namespace
}  // namespace anydev::cpu
