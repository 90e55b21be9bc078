// SPDX-License-Identifier: Apache-2.0
// Native graphs on the level_zero backend (docs/graphs.md), on the emulated
// driver behind the real loader: a graph of copies and fills is recorded
// into a regular command list once, and each replay is one
// zeCommandQueueExecuteCommandLists with no copy or fill appended; replays
// that overlap record a few more lists, never more; a graph released while
// its replays run is freed after them; a fill wider than the queue group
// fills natively is one launch of anydev's fill kernel in the recorded list,
// or, without the kernel, left to the core's replay. Exact bytes throughout.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "anydev/anydev.h"
#include "emulator_calls.h"

namespace {

using anydev_test::calls;
using anydev_test::fill_kernel_on;
using anydev_test::native_fill_limit;

constexpr std::size_t kPairs = 50;  // a fill and a copy each: 100 nodes
constexpr std::size_t kBytes = 256;
constexpr unsigned char kPattern[16] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                                        0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xF0, 0x0F};

// The i-th fill's pattern width: 1, 2, 4, 8 and 16 bytes in turn, those the
// queue group fills natively or, with the fill kernel, all (without it, wider
// ones would make the graph the core's).
std::size_t width_of(std::size_t i) {
  std::vector<std::size_t> widths;
  for (std::size_t w : {1u, 2u, 4u, 8u, 16u}) {
    if (w <= native_fill_limit() || fill_kernel_on()) widths.push_back(w);
  }
  return widths[i % widths.size()];
}

// Pattern i: kPattern's first width_of(i) bytes, each plus i.
std::vector<unsigned char> pattern_of(std::size_t i) {
  std::vector<unsigned char> p(width_of(i));
  for (std::size_t k = 0; k < p.size(); ++k) p[k] = static_cast<unsigned char>(kPattern[k] + i);
  return p;
}

class LevelZeroGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(anydev_context_create("level_zero", 0, &ctx_), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    ASSERT_NE(calls("zeInit"), 0u) << "the emulated driver's counters were not found";
  }
  void TearDown() override {
    for (anydev_buffer_t b : buffers_) EXPECT_EQ(anydev_buffer_release(b), ANYDEV_SUCCESS);
    if (ctx_ != nullptr) {
      EXPECT_EQ(anydev_context_release(ctx_), ANYDEV_SUCCESS);
    }
  }
  anydev_buffer_t make(anydev_memory_kind_t kind, std::size_t n) {
    anydev_buffer_t b = nullptr;
    EXPECT_EQ(anydev_buffer_create(ctx_, kind, ANYDEV_DTYPE_UINT8, n, &b), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    buffers_.push_back(b);
    return b;
  }
  static unsigned char* host_bytes(anydev_buffer_t b) {
    anydev_buffer_info_t info = {};
    info.struct_size = sizeof(info);
    EXPECT_EQ(anydev_buffer_get_info(b, &info), ANYDEV_SUCCESS) << anydev_last_error_message();
    return static_cast<unsigned char*>(info.address);
  }
  // kPairs fills of device buffers, each followed by a copy of it into a
  // pinned host buffer (`out`), which depends on the fill.
  anydev_graph_t fills_and_copies(std::vector<anydev_buffer_t>* out) {
    anydev_graph_t g = nullptr;
    EXPECT_EQ(anydev_graph_create(ctx_, &g), ANYDEV_SUCCESS) << anydev_last_error_message();
    for (std::size_t i = 0; i < kPairs; ++i) {
      anydev_buffer_t device = make(ANYDEV_MEMORY_DEVICE, kBytes);
      out->push_back(make(ANYDEV_MEMORY_HOST, kBytes));
      const std::vector<unsigned char> p = pattern_of(i);
      anydev_graph_node_t fill = 0;
      EXPECT_EQ(anydev_graph_add_fill(g, device, p.data(), p.size(), nullptr, 0, &fill),
                ANYDEV_SUCCESS)
          << anydev_last_error_message();
      EXPECT_EQ(anydev_graph_add_copy(g, out->back(), device, &fill, 1, nullptr), ANYDEV_SUCCESS)
          << anydev_last_error_message();
    }
    return g;
  }
  // Each host buffer holds its pattern; then cleared for the next replay.
  static void expect_patterns_and_clear(const std::vector<anydev_buffer_t>& out) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      unsigned char* bytes = host_bytes(out[i]);
      const std::vector<unsigned char> p = pattern_of(i);
      for (std::size_t k = 0; k < kBytes; ++k) {
        ASSERT_EQ(bytes[k], p[k % p.size()]) << "buffer " << i << " byte " << k;
      }
      std::memset(bytes, 0, kBytes);
    }
  }
  anydev_context_t ctx_ = nullptr;
  std::vector<anydev_buffer_t> buffers_;
};

TEST_F(LevelZeroGraph, EachReplayIsOneExecuteAndAppendsNoCopyOrFill) {
  std::vector<anydev_buffer_t> out;
  anydev_graph_t g = fills_and_copies(&out);
  const auto lists = calls("zeCommandListCreate");
  ASSERT_EQ(anydev_graph_instantiate(g), ANYDEV_SUCCESS) << anydev_last_error_message();
  int native = 0;
  ASSERT_EQ(anydev_graph_is_native(g, &native), ANYDEV_SUCCESS);
  EXPECT_EQ(native, 1);
  EXPECT_EQ(calls("zeCommandListCreate"), lists + 1) << "one regular list, recorded once";
  constexpr unsigned long long kReplays = 10;
  const auto executes = calls("zeCommandQueueExecuteCommandLists");
  const auto copies = calls("zeCommandListAppendMemoryCopy");
  const auto fills = calls("zeCommandListAppendMemoryFill");
  const auto launches = calls("zeCommandListAppendLaunchKernel");
  for (unsigned long long r = 0; r < kReplays; ++r) {
    SCOPED_TRACE(r);
    ASSERT_EQ(anydev_graph_replay(g, nullptr), ANYDEV_SUCCESS) << anydev_last_error_message();
    ASSERT_EQ(anydev_context_synchronize(ctx_), ANYDEV_SUCCESS) << anydev_last_error_message();
    expect_patterns_and_clear(out);
  }
  EXPECT_EQ(calls("zeCommandQueueExecuteCommandLists"), executes + kReplays);
  EXPECT_EQ(calls("zeCommandListAppendMemoryCopy"), copies) << "a replay appended a copy";
  EXPECT_EQ(calls("zeCommandListAppendMemoryFill"), fills) << "a replay appended a fill";
  EXPECT_EQ(calls("zeCommandListAppendLaunchKernel"), launches) << "a replay appended a launch";
  EXPECT_EQ(calls("zeCommandListCreate"), lists + 1) << "replays one at a time reuse the list";
  EXPECT_EQ(anydev_graph_release(g), ANYDEV_SUCCESS);
}

// Replays enqueued back to back may overlap: the driver must not execute a
// list it still runs, so the graph records another (at most four in all).
TEST_F(LevelZeroGraph, OverlappingReplaysUseAtMostFourListsAndAreCorrect) {
  std::vector<anydev_buffer_t> out;
  anydev_graph_t g = fills_and_copies(&out);
  const auto lists = calls("zeCommandListCreate");
  const auto executes = calls("zeCommandQueueExecuteCommandLists");
  constexpr unsigned long long kReplays = 12;
  for (unsigned long long r = 0; r < kReplays; ++r) {
    ASSERT_EQ(anydev_graph_replay(g, nullptr), ANYDEV_SUCCESS) << anydev_last_error_message();
  }
  ASSERT_EQ(anydev_context_synchronize(ctx_), ANYDEV_SUCCESS) << anydev_last_error_message();
  expect_patterns_and_clear(out);
  EXPECT_EQ(calls("zeCommandQueueExecuteCommandLists"), executes + kReplays);
  EXPECT_GE(calls("zeCommandListCreate"), lists + 1);
  EXPECT_LE(calls("zeCommandListCreate"), lists + 4);
  EXPECT_EQ(anydev_graph_release(g), ANYDEV_SUCCESS);
}

// Released while its replays are queued: the lists and events go after them
// (the emulator reports a list or event destroyed while in use as misuse).
TEST_F(LevelZeroGraph, ReleasedWhileReplaysRunIsFreedAfterThem) {
  std::vector<anydev_buffer_t> out;
  anydev_graph_t g = fills_and_copies(&out);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(anydev_graph_replay(g, nullptr), ANYDEV_SUCCESS) << anydev_last_error_message();
  }
  EXPECT_EQ(anydev_graph_release(g), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_context_synchronize(ctx_), ANYDEV_SUCCESS) << anydev_last_error_message();
  expect_patterns_and_clear(out);
}

// Nodes in a chain: fill, copy device to device, copy to the host, then a
// fill of the first buffer that must come after the copy that read it.
TEST_F(LevelZeroGraph, AChainOfDependenciesRunsInOrder) {
  anydev_buffer_t a = make(ANYDEV_MEMORY_DEVICE, kBytes);
  anydev_buffer_t b = make(ANYDEV_MEMORY_DEVICE, kBytes);
  anydev_buffer_t host_b = make(ANYDEV_MEMORY_HOST, kBytes);
  anydev_buffer_t host_a = make(ANYDEV_MEMORY_HOST, kBytes);
  anydev_graph_t g = nullptr;
  ASSERT_EQ(anydev_graph_create(ctx_, &g), ANYDEV_SUCCESS);
  const unsigned char first = 0x5A;
  const unsigned char second = 0xC3;
  anydev_graph_node_t n[4] = {};
  ASSERT_EQ(anydev_graph_add_fill(g, a, &first, 1, nullptr, 0, &n[0]), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_graph_add_copy(g, b, a, &n[0], 1, &n[1]), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_graph_add_empty(g, &n[1], 1, &n[2]), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_graph_add_fill(g, a, &second, 1, &n[2], 1, &n[3]), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_graph_add_copy(g, host_b, b, &n[2], 1, nullptr), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_graph_add_copy(g, host_a, a, &n[3], 1, nullptr), ANYDEV_SUCCESS);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(anydev_graph_replay(g, nullptr), ANYDEV_SUCCESS) << anydev_last_error_message();
    ASSERT_EQ(anydev_context_synchronize(ctx_), ANYDEV_SUCCESS);
    for (std::size_t k = 0; k < kBytes; ++k) {
      ASSERT_EQ(host_bytes(host_b)[k], first) << k;
      ASSERT_EQ(host_bytes(host_a)[k], second) << k;
    }
    std::memset(host_bytes(host_a), 0, kBytes);
    std::memset(host_bytes(host_b), 0, kBytes);
  }
  int native = 0;
  ASSERT_EQ(anydev_graph_is_native(g, &native), ANYDEV_SUCCESS);
  EXPECT_EQ(native, 1);
  EXPECT_EQ(anydev_graph_release(g), ANYDEV_SUCCESS);
}

// A 16-byte period is native where the queue group fills 16 bytes; where it
// fills less, it is one launch of anydev's fill kernel, recorded once, or
// without the kernel the graph is the core's (which plans the fill as a
// stream fill does), with the same bytes.
TEST_F(LevelZeroGraph, AFillWiderThanTheGroupFillsIsAKernelLaunchOrReplayedByTheCore) {
  anydev_buffer_t device = make(ANYDEV_MEMORY_DEVICE, kBytes);
  anydev_buffer_t host = make(ANYDEV_MEMORY_HOST, kBytes);
  anydev_graph_t g = nullptr;
  ASSERT_EQ(anydev_graph_create(ctx_, &g), ANYDEV_SUCCESS);
  anydev_graph_node_t fill = 0;
  ASSERT_EQ(anydev_graph_add_fill(g, device, kPattern, 16, nullptr, 0, &fill), ANYDEV_SUCCESS)
      << anydev_last_error_message();
  ASSERT_EQ(anydev_graph_add_copy(g, host, device, &fill, 1, nullptr), ANYDEV_SUCCESS);
  const bool native_fill = native_fill_limit() >= 16;
  const bool by_kernel = !native_fill && fill_kernel_on();
  const auto launches = calls("zeCommandListAppendLaunchKernel");
  ASSERT_EQ(anydev_graph_instantiate(g), ANYDEV_SUCCESS) << anydev_last_error_message();
  EXPECT_EQ(calls("zeCommandListAppendLaunchKernel"), launches + (by_kernel ? 1 : 0));
  for (int r = 0; r < 3; ++r) {
    SCOPED_TRACE(r);
    std::memset(host_bytes(host), 0, kBytes);
    const auto executes = calls("zeCommandQueueExecuteCommandLists");
    ASSERT_EQ(anydev_graph_replay(g, nullptr), ANYDEV_SUCCESS) << anydev_last_error_message();
    ASSERT_EQ(anydev_context_synchronize(ctx_), ANYDEV_SUCCESS);
    for (std::size_t k = 0; k < kBytes; ++k) {
      ASSERT_EQ(host_bytes(host)[k], kPattern[k % 16]) << k;
    }
    EXPECT_EQ(calls("zeCommandQueueExecuteCommandLists"),
              executes + (native_fill || by_kernel ? 1 : 0));
  }
  // A replay of a native graph appends nothing; the core's replay launches
  // the kernel (or fills by the plan) each time.
  if (native_fill || by_kernel) {
    EXPECT_EQ(calls("zeCommandListAppendLaunchKernel"), launches + (by_kernel ? 1 : 0));
  }
  int native = -1;
  ASSERT_EQ(anydev_graph_is_native(g, &native), ANYDEV_SUCCESS);
  EXPECT_EQ(native, native_fill || by_kernel ? 1 : 0);
  EXPECT_EQ(anydev_graph_release(g), ANYDEV_SUCCESS);
}

// A 16-byte fill at an offset into a device buffer, wider than the group
// fills, in a graph: the bytes before and after it are kept.
TEST_F(LevelZeroGraph, AWideFillAtAnOffsetKeepsTheBytesAroundIt) {
  anydev_buffer_t device = make(ANYDEV_MEMORY_DEVICE, kBytes);
  anydev_buffer_t host = make(ANYDEV_MEMORY_HOST, kBytes);
  anydev_buffer_t view = nullptr;
  constexpr std::size_t kAt = 40;  // not a multiple of the period
  constexpr std::size_t kLength = 160;
  ASSERT_EQ(anydev_buffer_create_sub_buffer(device, ANYDEV_DTYPE_UINT8, kAt, kLength, &view),
            ANYDEV_SUCCESS)
      << anydev_last_error_message();
  buffers_.push_back(view);
  const unsigned char before = 0xC3;
  ASSERT_EQ(anydev_enqueue_fill(ctx_, device, &before, 1), ANYDEV_SUCCESS)
      << anydev_last_error_message();
  anydev_graph_t g = nullptr;
  ASSERT_EQ(anydev_graph_create(ctx_, &g), ANYDEV_SUCCESS);
  anydev_graph_node_t fill = 0;
  ASSERT_EQ(anydev_graph_add_fill(g, view, kPattern, 16, nullptr, 0, &fill), ANYDEV_SUCCESS)
      << anydev_last_error_message();
  ASSERT_EQ(anydev_graph_add_copy(g, host, device, &fill, 1, nullptr), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_graph_replay(g, nullptr), ANYDEV_SUCCESS) << anydev_last_error_message();
  ASSERT_EQ(anydev_context_synchronize(ctx_), ANYDEV_SUCCESS);
  for (std::size_t k = 0; k < kBytes; ++k) {
    const unsigned char want = k >= kAt && k < kAt + kLength ? kPattern[(k - kAt) % 16] : 0xC3;
    ASSERT_EQ(host_bytes(host)[k], want) << k;
  }
  int native = -1;
  ASSERT_EQ(anydev_graph_is_native(g, &native), ANYDEV_SUCCESS);
  EXPECT_EQ(native, native_fill_limit() >= 16 || fill_kernel_on() ? 1 : 0);
  EXPECT_EQ(anydev_graph_release(g), ANYDEV_SUCCESS);
}

}  // namespace
