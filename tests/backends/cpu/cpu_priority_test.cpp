// SPDX-License-Identifier: Apache-2.0
// Stream priorities on the cpu worker pool: a high-priority stream's queued
// work is taken before normal streams' work queued earlier. Ordering, not
// timing: one worker, held by a gate while the queues fill.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cpu_stream.h"
#include "cpu_task.h"
#include "cpu_workers.h"

namespace anydev::cpu {
namespace {

std::optional<TaskFailure> hold_until_open(void* gate) {
  auto* open = static_cast<std::atomic<bool>*>(gate);
  while (!open->load()) std::this_thread::yield();
  return std::nullopt;
}

// Records which stream ran, in the order the worker ran them.
struct RunOrder {
  std::mutex mutex;
  std::vector<int> ids;
};
struct Mark {
  RunOrder* order;
  int id;
};
std::optional<TaskFailure> mark(void* user) {
  const auto* m = static_cast<Mark*>(user);
  const std::lock_guard<std::mutex> hold(m->order->mutex);
  m->order->ids.push_back(m->id);
  return std::nullopt;
}

// Queues one marking task on each of kNormal normal streams, then one on a
// stream of `last_priority` (id -1), behind a gate that holds the only
// worker; returns the order the tasks ran in.
std::vector<int> RunBehindGate(int last_priority) {
  constexpr int kNormal = 16;
  WorkerPool pool(1);
  Stream blocker(pool);
  std::atomic<bool> gate{false};
  blocker.state().enqueue(Task{HostFunctionTask{hold_until_open, &gate}});
  RunOrder order;
  std::vector<std::unique_ptr<Stream>> normal;
  std::vector<Mark> marks(kNormal + 1);
  for (int i = 0; i < kNormal; ++i) {
    normal.push_back(std::make_unique<Stream>(pool, 0));
    marks[i] = Mark{&order, i};
    normal.back()->state().enqueue(Task{HostFunctionTask{mark, &marks[i]}});
  }
  Stream last(pool, last_priority);
  marks[kNormal] = Mark{&order, -1};
  last.state().enqueue(Task{HostFunctionTask{mark, &marks[kNormal]}});
  gate = true;
  EXPECT_FALSE(blocker.state().synchronize().has_value());
  EXPECT_FALSE(last.state().synchronize().has_value());
  for (auto& s : normal) EXPECT_FALSE(s->state().synchronize().has_value());
  return order.ids;
}

TEST(CpuStreamPriority, HighPriorityWorkRunsBeforeNormalWorkQueuedEarlier) {
  const std::vector<int> ids = RunBehindGate(-1);
  ASSERT_EQ(ids.size(), 17u);
  EXPECT_EQ(ids.front(), -1) << "the high-priority stream waited behind normal ones";
  for (int i = 1; i < 17; ++i) EXPECT_EQ(ids[i], i - 1) << "normal streams keep their order";
}

// The control: at the normal priority the same stream runs last, so the
// test above sees the priority, not the queue's order.
TEST(CpuStreamPriority, NormalPriorityWorkRunsInQueueOrder) {
  const std::vector<int> ids = RunBehindGate(0);
  ASSERT_EQ(ids.size(), 17u);
  EXPECT_EQ(ids.back(), -1);
}

}  // namespace
}  // namespace anydev::cpu
