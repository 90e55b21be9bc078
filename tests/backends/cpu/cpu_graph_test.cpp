// SPDX-License-Identifier: Apache-2.0
// The cpu backend's native graphs (cpu_graph.h): a launch is one task on
// the stream whatever the node count, runs the nodes in order to the exact
// bytes, may run on two streams at once, and a graph released while a
// launch waits is freed after it (the release never blocks).
#include "cpu_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace anydev::cpu {
namespace {

FillTask fill_of(std::vector<std::uint32_t>& memory, std::uint32_t value) {
  FillTask task;
  task.dst = memory.data();
  task.bytes = memory.size() * sizeof(std::uint32_t);
  std::memcpy(task.pattern, &value, sizeof(value));
  task.pattern_size = sizeof(value);
  return task;
}

CopyTask copy_of(std::vector<std::uint32_t>& dst, const std::vector<std::uint32_t>& src) {
  return CopyTask{dst.data(), src.data(), dst.size() * sizeof(std::uint32_t)};
}

bool all_equal(const std::vector<std::uint32_t>& memory, std::uint32_t value) {
  for (std::uint32_t v : memory) {
    if (v != value) return false;
  }
  return true;
}

// fill a=1, copy a->b, fill a=2, copy a->c: in order, b sees 1 and c sees 2.
struct Chain {
  std::vector<std::uint32_t> a = std::vector<std::uint32_t>(100000);
  std::vector<std::uint32_t> b = std::vector<std::uint32_t>(100000);
  std::vector<std::uint32_t> c = std::vector<std::uint32_t>(100000);
  Graph* make() { return new Graph({fill_of(a, 1), copy_of(b, a), fill_of(a, 2), copy_of(c, a)}); }
};

TEST(CpuGraph, ALaunchIsOneTaskAndRunsTheNodesInOrder) {
  Stream stream;
  StreamState& state = stream.state();
  Chain chain;
  Graph* graph = chain.make();
  EXPECT_EQ(graph->task_count(), 4u);
  for (int replay = 0; replay < 3; ++replay) {
    std::fill(chain.b.begin(), chain.b.end(), 0u);
    std::fill(chain.c.begin(), chain.c.end(), 0u);
    const std::uint64_t before = state.submitted();
    EXPECT_EQ(graph->launch(state), before + 1);
    EXPECT_EQ(state.submitted(), before + 1) << "four nodes, one task";
    EXPECT_FALSE(state.synchronize().has_value());
    EXPECT_TRUE(all_equal(chain.b, 1u)) << "replay " << replay;
    EXPECT_TRUE(all_equal(chain.c, 2u)) << "replay " << replay;
  }
  graph->release();
}

TEST(CpuGraph, LaunchesOnTwoStreamsAtOnce) {
  Stream one;
  Stream two;
  std::vector<std::uint32_t> src(50000, 7u);
  std::vector<std::uint32_t> dst_one(50000), dst_two(50000);
  Graph* to_one = new Graph({copy_of(dst_one, src)});
  Graph* to_both = new Graph({fill_of(src, 7u)});  // rewrites what both read: same bytes
  std::thread a([&] {
    for (int i = 0; i < 100; ++i) {
      to_both->launch(one.state());
      to_one->launch(one.state());
    }
    EXPECT_FALSE(one.state().synchronize().has_value());
  });
  std::thread b([&] {
    for (int i = 0; i < 100; ++i) to_both->launch(two.state());
    EXPECT_FALSE(two.state().synchronize().has_value());
  });
  a.join();
  b.join();
  EXPECT_TRUE(all_equal(dst_one, 7u));
  to_one->release();
  to_both->release();
}

std::optional<TaskFailure> wait_for_flag(void* flag) {
  while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::yield();
  return std::nullopt;
}

TEST(CpuGraph, ReleaseWhileALaunchWaitsFreesAfterIt) {
  Stream stream;
  StreamState& state = stream.state();
  std::atomic<bool> go{false};
  state.enqueue(Task{HostFunctionTask{&wait_for_flag, &go}});
  Chain chain;
  Graph* graph = chain.make();
  graph->launch(state);
  graph->release();  // returns at once: the launch holds the graph
  EXPECT_TRUE(all_equal(chain.c, 0u)) << "the launch ran before its stream reached it";
  go = true;
  EXPECT_FALSE(state.synchronize().has_value());
  EXPECT_TRUE(all_equal(chain.b, 1u));
  EXPECT_TRUE(all_equal(chain.c, 2u));
}

}  // namespace
}  // namespace anydev::cpu
