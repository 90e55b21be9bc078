// SPDX-License-Identifier: Apache-2.0
// The cpu streams' worker pool (cpu_workers.h) and queue bound
// (cpu_stream.h): threads do not grow with streams, a chain of waits longer
// than the pool completes (waiting streams park instead of holding a
// worker), per-stream order holds across the pool, and an enqueue on a full
// queue blocks until the stream makes room.
#include <dirent.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "cpu_stream.h"
#include "cpu_task.h"
#include "cpu_workers.h"

namespace anydev::cpu {
namespace {

int live_threads() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

// Polls `done` until it holds or 20 s have passed (a hang becomes a failure).
template <class Done>
bool eventually(Done&& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

// A host function that blocks its worker until `open` is set.
std::optional<TaskFailure> wait_for_gate(void* gate) {
  auto& open = *static_cast<std::atomic<bool>*>(gate);
  while (!open.load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  return std::nullopt;
}

std::optional<TaskFailure> no_op(void*) { return std::nullopt; }

FillTask fill_of(std::vector<unsigned char>& memory, unsigned char value) {
  FillTask task;
  task.dst = memory.data();
  task.bytes = memory.size();
  task.pattern[0] = value;
  task.pattern_size = 1;
  return task;
}

TEST(CpuStreamPool, ThreadsDoNotGrowWithStreams) {
  const int before = live_threads();
  ASSERT_GT(before, 0) << "/proc/self/task is not readable";
  std::vector<std::unique_ptr<Stream>> streams;
  for (int i = 0; i < 500; ++i) {
    streams.push_back(std::make_unique<Stream>());
    streams.back()->state().enqueue(HostFunctionTask{no_op, nullptr});  // runs on a worker
  }
  const int during = live_threads();
  for (auto& stream : streams) EXPECT_FALSE(stream->state().synchronize().has_value());
  streams.clear();
  // The process pool (started here or earlier) is all that may have come,
  // plus 2 for a sanitizer's runtime threads (TSan starts one lazily).
  EXPECT_LE(during - before, static_cast<int>(default_worker_count()) + 2)
      << "500 live streams started " << during - before << " threads";
}

TEST(CpuStreamPool, AChainOfWaitsLongerThanThePoolCompletes) {
  // One worker; stream i waits for stream i+1's first task, which is not
  // yet enqueued when the waits are: a worker that blocked in a wait would
  // hold the only worker forever.
  WorkerPool pool(1);
  constexpr int kStreams = 6;
  std::vector<std::unique_ptr<Stream>> streams;
  for (int i = 0; i < kStreams; ++i) streams.push_back(std::make_unique<Stream>(pool));
  for (int i = 0; i + 1 < kStreams; ++i) {
    streams[i]->state().enqueue(WaitTask{streams[i + 1]->shared_state(), 1});
  }
  std::vector<unsigned char> memory(kInlineBytes * 2);
  streams[kStreams - 1]->state().enqueue(fill_of(memory, 0x5A));
  StreamState& first = streams[0]->state();
  ASSERT_TRUE(eventually([&] { return first.is_complete(1); }))
      << "the chain of waits never completed on a one-worker pool";
  for (unsigned char b : memory) ASSERT_EQ(b, 0x5A);
  streams.clear();
}

TEST(CpuStreamPool, OrderHoldsPerStreamAcrossManyStreams) {
  WorkerPool pool(2);
  constexpr int kStreams = 16;
  constexpr int kTasks = 200;  // more than a turn (kTurnTasks)
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<std::vector<unsigned char>> memory(kStreams,
                                                 std::vector<unsigned char>(kInlineBytes * 2));
  for (int i = 0; i < kStreams; ++i) streams.push_back(std::make_unique<Stream>(pool));
  for (int t = 0; t < kTasks; ++t) {
    for (int i = 0; i < kStreams; ++i) {
      FillTask task = fill_of(memory[i], static_cast<unsigned char>(t));
      task.bytes = 4096 + static_cast<std::size_t>(t % 7) * 64;  // the last one wins
      streams[i]->state().enqueue(task);
    }
  }
  for (int i = 0; i < kStreams; ++i) {
    EXPECT_FALSE(streams[i]->state().synchronize().has_value());
    EXPECT_EQ(memory[i][0], static_cast<unsigned char>(kTasks - 1)) << "stream " << i;
  }
  streams.clear();
}

TEST(CpuStreamBackpressure, AnEnqueueOnAFullQueueBlocksUntilThereIsRoom) {
  WorkerPool pool(1);
  Stream stream(pool);
  StreamState& state = stream.state();
  std::atomic<bool> gate{false};
  state.enqueue(HostFunctionTask{wait_for_gate, &gate});  // holds the stream
  std::vector<unsigned char> memory(64);
  std::atomic<bool> producer_done{false};
  constexpr std::size_t kExtra = 16;
  std::thread producer([&] {
    for (std::size_t i = 0; i < kQueueDepth + kExtra; ++i) {
      state.enqueue(fill_of(memory, static_cast<unsigned char>(i)));
    }
    producer_done = true;
  });
  const bool blocked =
      eventually([&] { return producer_done.load() || state.blocked_enqueuers() == 1; });
  EXPECT_TRUE(blocked);
  EXPECT_FALSE(producer_done.load())
      << "enqueued " << kQueueDepth + kExtra << " tasks behind a blocked one without blocking";
  EXPECT_LE(state.queued(), kQueueDepth);
  gate = true;
  producer.join();
  EXPECT_FALSE(state.synchronize().has_value());
  EXPECT_EQ(memory[0], static_cast<unsigned char>(kQueueDepth + kExtra - 1));
}

// Eight threads enqueuing on one shared stream fill its queue. Waking every
// blocked enqueuer for each free slot would cost two context switches per
// task; blocked enqueuers are woken once, when the queue has drained to
// kRoomWakeDepth: a producer that blocks once is woken once and finishes
// without blocking again. Counted, not timed.
TEST(CpuStreamBackpressure, BlockedEnqueuersAreWokenOnceTheQueueHasDrainedToHalf) {
  WorkerPool pool(1);
  Stream stream(pool);
  StreamState& state = stream.state();
  std::atomic<bool> gate{false};
  state.enqueue(HostFunctionTask{wait_for_gate, &gate});  // holds the stream
  std::vector<unsigned char> memory(64);
  constexpr std::size_t kExtra = 16;  // fewer than kQueueDepth - kRoomWakeDepth
  std::atomic<bool> producer_done{false};
  std::thread producer([&] {
    for (std::size_t i = 0; i < kQueueDepth + kExtra; ++i) {
      state.enqueue(fill_of(memory, static_cast<unsigned char>(i)));
    }
    producer_done = true;
  });
  ASSERT_TRUE(eventually([&] { return state.blocked_enqueuers() == 1; }));
  EXPECT_EQ(state.room_wakeups(), 0u);
  gate = true;
  producer.join();
  EXPECT_TRUE(producer_done.load());
  EXPECT_FALSE(state.synchronize().has_value());
  EXPECT_EQ(memory[0], static_cast<unsigned char>(kQueueDepth + kExtra - 1));
  EXPECT_EQ(state.room_wakeups(), 1u)
      << "the blocked producer was woken per task, not once the queue had drained";
}

TEST(CpuStreamPool, AStreamDestroyedByItsOwnTaskFinishesOnThePool) {
  WorkerPool pool(1);
  auto* stream = new Stream(pool);
  std::shared_ptr<StreamState> state = stream->shared_state();
  std::vector<unsigned char> memory(kInlineBytes * 2);
  state->enqueue(HostFunctionTask{[](void* s) -> std::optional<TaskFailure> {
                                    delete static_cast<Stream*>(s);
                                    return std::nullopt;
                                  },
                                  stream});
  const std::uint64_t last = state->enqueue(fill_of(memory, 0x33));
  ASSERT_TRUE(eventually([&] { return state->is_complete(last); }));
  EXPECT_EQ(memory.back(), 0x33);
}

}  // namespace
}  // namespace anydev::cpu
