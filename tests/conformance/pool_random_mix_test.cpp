// SPDX-License-Identifier: Apache-2.0
// The caching pool under a random size mix, on every backend:
// device buffers of 1 B to 64 MiB, log-uniform, created and released in a
// random order with up to 16 live. Throughout, the pool's bytes in use follow
// the live buffers (never below their bytes, never above them rounded up to
// size classes); release_cached_memory with buffers live empties the cache
// and leaves their bytes in use alone; after the last release it returns
// every byte. Counts only, no timing.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "device_param.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceBuffer;
using anydev::MemoryKind;
using anydev::PoolStats;

class PoolRandomMixTest : public DeviceTest {};

TEST_P(PoolRandomMixTest, ReleaseCachedMemoryReturnsEveryByte) {
  ctx().release_cached_memory();
  const PoolStats start = ctx().pool_stats(MemoryKind::device);
  ASSERT_EQ(start.bytes_cached, 0u);
  constexpr int kOps = 600;
  constexpr std::size_t kLiveMost = 16;
  const double largest = std::log(64.0 * 1024 * 1024);
  std::mt19937_64 random(19);
  std::uniform_real_distribution<double> log_size(0.0, largest);
  std::vector<DeviceBuffer<std::uint8_t>> live;
  std::size_t live_bytes = 0;
  for (int op = 0; op < kOps; ++op) {
    if (live.empty() || (live.size() < kLiveMost && (random() & 1) != 0)) {
      std::size_t bytes = static_cast<std::size_t>(std::exp(log_size(random)));
      if (bytes == 0) bytes = 1;
      live.push_back(ctx().enqueue_create_buffer<std::uint8_t>(bytes));
      live_bytes += bytes;
    } else {
      const std::size_t k = random() % live.size();
      live_bytes -= live[k].size();
      live[k] = std::move(live.back());
      live.pop_back();
    }
    const PoolStats s = ctx().pool_stats(MemoryKind::device);
    const std::size_t in_use = s.bytes_in_use - start.bytes_in_use;
    ASSERT_GE(in_use, live_bytes) << "op " << op;
    // Size classes round up by at most 25%, and to at least 512 bytes.
    ASSERT_LE(in_use, live_bytes + live_bytes / 4 + 512 * live.size()) << "op " << op;
    if (op == kOps / 2) {
      ctx().release_cached_memory();
      const PoolStats after = ctx().pool_stats(MemoryKind::device);
      EXPECT_EQ(after.bytes_cached, 0u) << "with " << live.size() << " buffers live";
      EXPECT_EQ(after.bytes_in_use, s.bytes_in_use) << "the live buffers' blocks are not cached";
    }
  }
  live.clear();
  ctx().synchronize();
  ctx().release_cached_memory();
  const PoolStats end = ctx().pool_stats(MemoryKind::device);
  EXPECT_EQ(end.bytes_cached, 0u);
  EXPECT_EQ(end.bytes_in_use, start.bytes_in_use);
}

ANYDEV_CONFORMANCE_SUITE(PoolRandomMixTest);

}  // namespace
}  // namespace anydev_conformance
