// SPDX-License-Identifier: Apache-2.0
// The cpu stream's deferred wake-up (cpu_stream.h): once a stream has learned
// that its caller synchronizes at once, a copy or fill enqueued on the idle
// stream leaves the worker asleep. Whatever needs that task done must still
// get it done: an event query, an event wait, another stream's wait, more
// work on the stream, the stream's destruction and synchronize(). And a
// caller that does other work before synchronizing turns the deferral off.
#include "cpu_stream.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cpu_task.h"

namespace anydev::cpu {
namespace {

// Larger than kInlineBytes, so the fill is queued for the worker.
constexpr std::size_t kBytes = kInlineBytes * 2;

FillTask fill_of(std::vector<unsigned char>& memory, unsigned char value) {
  FillTask task;
  task.dst = memory.data();
  task.bytes = memory.size();
  task.pattern[0] = value;
  task.pattern_size = 1;
  return task;
}

bool all_equal(const std::vector<unsigned char>& memory, unsigned char value) {
  for (unsigned char b : memory) {
    if (b != value) return false;
  }
  return true;
}

// Makes `state` learn to defer: enqueue + synchronize until a wake-up has
// been wasted (the worker was woken, synchronize() ran the task first).
// False when the worker won every race, which a test then reports as skipped.
bool learn_to_defer(StreamState& state, std::vector<unsigned char>& memory) {
  for (int i = 0; i < 500 && !state.defers_wakes(); ++i) {
    state.enqueue(fill_of(memory, static_cast<unsigned char>(i)));
    EXPECT_FALSE(state.synchronize().has_value());
    // Let the worker fall asleep again, so the next enqueue must wake it.
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  return state.defers_wakes();
}

std::optional<TaskFailure> no_op(void*) { return std::nullopt; }

// Lets the worker take any wake-up still on its way (the wasted one that
// taught the stream to defer), so that it cannot start the next task on its
// own: a host function always wakes the worker, and waiting for it (unlike
// an event query) changes nothing that the stream has learned.
void settle(StreamState& state) {
  state.wait_until_complete(state.enqueue(HostFunctionTask{no_op, nullptr}));
  std::this_thread::sleep_for(std::chrono::microseconds(300));  // back to sleep
}

// Teaches `state` to defer, then enqueues a fill of `value` that is deferred
// (the worker left asleep); its sequence number, or nullopt when the worker
// won every race, which a test then reports as skipped.
std::optional<std::uint64_t> enqueue_deferred(StreamState& state,
                                              std::vector<unsigned char>& memory,
                                              unsigned char value) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (!learn_to_defer(state, memory)) return std::nullopt;
    settle(state);
    const std::uint64_t seq = state.enqueue(fill_of(memory, value));
    if (state.wake_pending()) return seq;
    // The worker was awake after all and took the fill: finish it, try again.
    EXPECT_FALSE(state.synchronize().has_value());
  }
  return std::nullopt;
}

// Polls is_complete (an event query) until task `seq` is done; false when
// that takes longer than 20 s.
bool poll_until_complete(StreamState& state, std::uint64_t seq) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!state.is_complete(seq)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

#define ENQUEUE_DEFERRED_OR_SKIP(seq, state, memory, value)                          \
  const std::optional<std::uint64_t> seq = enqueue_deferred(state, memory, value);   \
  if (!seq) {                                                                        \
    GTEST_SKIP() << "the worker started every task before synchronize() could: no "  \
                    "wake-up was wasted, so no task was deferred (nothing to test)"; \
  }

TEST(CpuStreamDeferredWake, SynchronizeRightAfterEnqueueLearnsToDefer) {
  Stream stream;
  // "Right after" must not depend on the scheduler: a preempted test thread
  // (a loaded machine, a sanitizer) would otherwise arrive later than 20 us.
  stream.state().set_defer_limit_for_test(std::chrono::seconds(10));
  std::vector<unsigned char> memory(kBytes);
  ENQUEUE_DEFERRED_OR_SKIP(seq, stream.state(), memory, 0xA1);
  EXPECT_FALSE(stream.state().synchronize().has_value());
  EXPECT_TRUE(all_equal(memory, 0xA1));
  EXPECT_FALSE(stream.state().wake_pending());
  EXPECT_TRUE(stream.state().defers_wakes()) << "synchronize came at once: keep deferring";
}

TEST(CpuStreamDeferredWake, AnEventQueryGetsTheTaskDoneAndStopsDeferring) {
  Stream stream;
  std::vector<unsigned char> memory(kBytes);
  ENQUEUE_DEFERRED_OR_SKIP(seq, stream.state(), memory, 0xB2);
  ASSERT_TRUE(poll_until_complete(stream.state(), *seq)) << "a polled deferred fill never ran";
  EXPECT_TRUE(all_equal(memory, 0xB2));
  EXPECT_FALSE(stream.state().defers_wakes()) << "a caller that polls wants the work to run alone";
}

TEST(CpuStreamDeferredWake, AnEventWaitGetsTheTaskDone) {
  Stream stream;
  std::vector<unsigned char> memory(kBytes);
  ENQUEUE_DEFERRED_OR_SKIP(seq, stream.state(), memory, 0xC3);
  stream.state().wait_until_complete(*seq);
  EXPECT_TRUE(all_equal(memory, 0xC3));
}

TEST(CpuStreamDeferredWake, AnotherStreamsWaitGetsTheTaskDone) {
  Stream producer, consumer;
  std::vector<unsigned char> memory(kBytes), copy(kBytes, 0);
  ENQUEUE_DEFERRED_OR_SKIP(seq, producer.state(), memory, 0xD4);
  consumer.state().enqueue(WaitTask{producer.shared_state(), *seq});
  consumer.state().enqueue(CopyTask{copy.data(), memory.data(), kBytes});
  EXPECT_FALSE(consumer.state().synchronize().has_value());
  EXPECT_TRUE(all_equal(copy, 0xD4)) << "the consumer read the memory before the fill ran";
}

TEST(CpuStreamDeferredWake, MoreWorkOnTheStreamWakesTheWorker) {
  Stream stream;
  std::vector<unsigned char> memory(kBytes);
  ENQUEUE_DEFERRED_OR_SKIP(fill_seq, stream.state(), memory, 0xE5);
  bool ran = false;
  const std::uint64_t seq =
      stream.state().enqueue(HostFunctionTask{[](void* user) -> std::optional<TaskFailure> {
                                                *static_cast<bool*>(user) = true;
                                                return std::nullopt;
                                              },
                                              &ran});
  EXPECT_FALSE(stream.state().wake_pending());
  // Wait without synchronize(), which would run the fill itself.
  ASSERT_TRUE(poll_until_complete(stream.state(), seq)) << "the worker was never woken";
  EXPECT_TRUE(stream.state().is_complete(*fill_seq));
  EXPECT_TRUE(ran);
  EXPECT_TRUE(all_equal(memory, 0xE5));
}

TEST(CpuStreamDeferredWake, DestroyingTheStreamRunsTheTask) {
  std::vector<unsigned char> memory(kBytes);
  {
    Stream stream;
    ENQUEUE_DEFERRED_OR_SKIP(seq, stream.state(), memory, 0xF6);
  }
  EXPECT_TRUE(all_equal(memory, 0xF6));
}

TEST(CpuStreamDeferredWake, ALateSynchronizeStopsDeferring) {
  Stream stream;
  std::vector<unsigned char> memory(kBytes);
  ENQUEUE_DEFERRED_OR_SKIP(seq, stream.state(), memory, 0x17);
  std::this_thread::sleep_for(kDeferLimit * 20);  // the caller's own work
  EXPECT_FALSE(stream.state().synchronize().has_value());
  EXPECT_TRUE(all_equal(memory, 0x17));
  EXPECT_FALSE(stream.state().defers_wakes()) << "the deferral cost this caller its overlap";
}

// Two threads enqueueing small copies on one shared stream: when one thread
// queues a copy while the other runs its own inline, the inline thread runs
// it itself, in order. Handing it to a worker would cost a wake-up, and the
// worker and both threads would then take turns on the stream's lock. Made
// deterministic: the copies are queued from inside the inline run (where
// another thread's enqueue would land), then counted.
TEST(CpuSharedStream, CopiesQueuedDuringAnInlineRunRunOnThatCallerNotAWorker) {
  Stream stream;
  StreamState& state = stream.state();
  std::uint32_t first = 1, destination = 0;
  std::vector<std::uint32_t> values(40);
  const std::uint64_t handoffs_before = state.pool_handoffs();
  const std::optional<std::uint64_t> seq =
      state.enqueue_inline_for_test(CopyTask{&destination, &first, sizeof first}, [&] {
        for (std::size_t i = 0; i < values.size(); ++i) {
          values[i] = static_cast<std::uint32_t>(i + 2);
          state.enqueue(CopyTask{&destination, &values[i], sizeof destination});
        }
        EXPECT_EQ(state.queued(), values.size()) << "queued behind the inline copy";
      });
  ASSERT_TRUE(seq.has_value()) << "a new stream is idle: the copy runs inline";
  EXPECT_EQ(state.queued(), 0u);
  EXPECT_EQ(state.caller_drained(), values.size());
  EXPECT_EQ(state.pool_handoffs(), handoffs_before) << "no worker woken for them";
  EXPECT_TRUE(state.is_complete(*seq + values.size()));
  EXPECT_EQ(destination, values.back()) << "in order";
  EXPECT_FALSE(state.synchronize().has_value());
}

// More than kTurnTasks queued meanwhile: the caller runs kTurnTasks of them
// and hands the rest to the pool, which finishes them in order.
TEST(CpuSharedStream, ACallerRunsAtMostATurnOfOthersTasks) {
  Stream stream;
  StreamState& state = stream.state();
  std::uint32_t first = 1, destination = 0;
  std::vector<std::uint32_t> values(kTurnTasks * 3);
  ASSERT_TRUE(state
                  .enqueue_inline_for_test(
                      CopyTask{&destination, &first, sizeof first},
                      [&] {
                        for (std::size_t i = 0; i < values.size(); ++i) {
                          values[i] = static_cast<std::uint32_t>(i + 2);
                          state.enqueue(CopyTask{&destination, &values[i], sizeof destination});
                        }
                      })
                  .has_value());
  EXPECT_EQ(state.caller_drained(), std::uint64_t{kTurnTasks});
  EXPECT_FALSE(state.synchronize().has_value());
  EXPECT_EQ(destination, values.back());
}

// Starts `threads` threads together, each enqueueing `copies` 4-byte copies
// of 1, 2, ... into a destination of its own on `state` (a synchronize every
// 1024), and checks that every copy ran, each thread's in its order.
void CopyFromThreadsInOrder(StreamState& state, int threads, int copies) {
  std::vector<std::vector<std::uint32_t>> sources(threads, std::vector<std::uint32_t>(copies));
  std::vector<std::uint32_t> destinations(threads, 0);
  std::vector<std::thread> running;
  std::atomic<int> ready{0};
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();  // start together
      for (int i = 0; i < copies; ++i) {
        sources[t][i] = static_cast<std::uint32_t>(i + 1);
        state.enqueue(CopyTask{&destinations[t], &sources[t][i], sizeof(std::uint32_t)});
        if (i % 1024 == 1023) {
          EXPECT_FALSE(state.synchronize().has_value());
        }
      }
    });
  }
  for (std::thread& thread : running) thread.join();
  EXPECT_FALSE(state.synchronize().has_value());
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(destinations[t], static_cast<std::uint32_t>(copies))
        << "thread " << t << ": order kept";
  }
}

// Two threads on one stream, started together: every copy runs, each
// thread's in its order.
TEST(CpuSharedStream, SmallCopiesFromTwoThreadsKeepEachThreadsOrder) {
  Stream stream;
  StreamState& state = stream.state();
  CopyFromThreadsInOrder(state, 2, 100000);
  RecordProperty("pool_handoffs", std::to_string(state.pool_handoffs()));
  RecordProperty("caller_drained", std::to_string(state.caller_drained()));
}

// A tiny copy runs whole under the stream's lock, so a thread that enqueues
// while another runs one waits for the lock and then finds the stream idle:
// nothing from either thread is ever queued, drained by the other or handed
// to a worker (queueing it would cost both threads a lock round trip more);
// here the counts say which path the copies took.
TEST(CpuSharedStream, TinyCopiesFromManyThreadsNeverQueue) {
  Stream stream;
  StreamState& state = stream.state();
  constexpr int kCopies = 50000;
  constexpr int kThreads = 4;
  CopyFromThreadsInOrder(state, kThreads, kCopies);
  EXPECT_EQ(state.caller_drained(), 0u) << "no copy was queued behind another thread's";
  EXPECT_EQ(state.pool_handoffs(), 0u) << "no worker was woken";
  EXPECT_TRUE(state.is_complete(std::uint64_t{kCopies} * kThreads));
}

// A contended enqueue waits kEnqueueBackoff and more between its tries for
// the stream's lock, instead of trying every few nanoseconds (each try takes
// the lock's cache line from its holder): while another thread holds the
// stream for a while, it tries at most once per kEnqueueBackoff. Before,
// 64 tries in a microsecond, then 16 yields, then it blocked: 80 tries
// within any hold of more than a few microseconds. An upper bound from the
// hold's own length: a slower machine only tries less.
TEST(CpuSharedStream, AContendedEnqueueBacksOffBetweenTries) {
  Stream stream;
  StreamState& state = stream.state();
  unsigned char source[4] = {1, 2, 3, 4};
  unsigned char destination[4] = {};
  constexpr auto kHold = std::chrono::microseconds(100);
  std::atomic<bool> started{false};
  std::atomic<std::uint64_t> tries{0};
  std::chrono::steady_clock::duration held{};
  std::thread other;
  state.hold_lock_for_test([&] {
    other = std::thread([&] {
      started = true;
      const std::uint64_t before = StreamState::failed_lock_tries_on_this_thread();
      state.enqueue(CopyTask{destination, source, sizeof source});
      tries = StreamState::failed_lock_tries_on_this_thread() - before;
    });
    while (!started) std::this_thread::yield();
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(kHold);
    held = std::chrono::steady_clock::now() - start;
  });
  other.join();
  EXPECT_FALSE(state.synchronize().has_value());
  EXPECT_EQ(std::memcmp(destination, source, sizeof source), 0);
  // The thread may have started its first try a little before `start`
  // (a thread preempted until after the hold tries less, not more).
  const auto bound = held / kEnqueueBackoff + 2;
  EXPECT_LE(tries.load(), static_cast<std::uint64_t>(bound))
      << "held for " << std::chrono::duration<double, std::micro>(held).count() << " us";
}

// The escalation rule itself, on synthetic times (ContentionLevel: one
// thread's first wait for contended enqueues), one case per row.
TEST(ContentionLevel, FirstWaitsEscalateWithWinsAndResetAfterAQuietSpell) {
  using std::chrono::microseconds;
  using std::chrono::nanoseconds;
  struct Step {
    bool won;            // false: ask first_wait
    microseconds at;     // since the case's start
    nanoseconds expect;  // first_wait's answer (when asked)
  };
  struct Case {
    const char* name;
    std::vector<Step> steps;
  };
  const microseconds memory = kContentionMemory;
  const nanoseconds first = kEnqueueBackoff, longest = kEnqueueBackoffLongest;
  const std::vector<Case> cases = {
      {"a fresh thread waits kEnqueueBackoff first", {{false, microseconds(0), first}}},
      {"each win doubles the next first wait",
       {{false, microseconds(0), first},
        {true, microseconds(10), {}},
        {false, microseconds(100), first * 2},
        {true, microseconds(110), {}},
        {false, microseconds(200), first * 4}}},
      {"the first wait stops at kEnqueueBackoffLongest",
       {{true, microseconds(0), {}},
        {true, microseconds(100), {}},
        {true, microseconds(200), {}},
        {true, microseconds(300), {}},
        {true, microseconds(400), {}},
        {true, microseconds(500), {}},
        {false, microseconds(600), longest}}},
      {"a contended enqueue within kContentionMemory of the last win keeps the level",
       {{true, microseconds(0), {}}, {false, memory, first * 2}}},
      {"one that begins later starts again at kEnqueueBackoff",
       {{true, microseconds(0), {}},
        {true, microseconds(100), {}},
        {false, microseconds(100) + memory + microseconds(1), first}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ContentionLevel level;
    const auto start = ContentionLevel::Clock::now();
    for (const Step& step : c.steps) {
      if (step.won) {
        level.won(start + step.at);
      } else {
        EXPECT_EQ(level.first_wait(start + step.at), step.expect)
            << "at " << step.at.count() << " us";
      }
    }
  }
}

// End to end: a thread whose enqueues keep meeting a busy stream waits
// longer before its first try each time it wins one (threads that keep
// enqueueing on one stream then take turns of 64 us or more, and lose less
// to the stream moving between cores). One thread holds the stream
// for 200 us in each of twelve rounds while another enqueues, the two on
// different CPUs. A round whose four predecessors were contended and came
// within kContentionMemory / 2 of each other's wins starts at
// kEnqueueBackoffLongest: at most held / kEnqueueBackoffLongest + 2 tries,
// where restarting every contended enqueue at 4 us (4, 8, 16, 16, ... us)
// would make 14 tries in 200 us. Upper bounds from each hold's own length; on a
// loaded machine (rounds further apart, as under `ctest -j`) too few rounds
// qualify and the test skips: the rule itself is ContentionLevel's test.
TEST(CpuSharedStream, AThreadThatKeepsMeetingABusyStreamWaitsLongerBeforeItsFirstTry) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  if (cpus.size() < 2) {
    GTEST_SKIP() << "needs two CPUs: on one, the enqueuer runs only once the holder lets go";
  }
  auto pin = [](int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
  };
  using Clock = std::chrono::steady_clock;
  Stream stream;
  StreamState& state = stream.state();
  unsigned char source[4] = {1, 2, 3, 4};
  unsigned char destination[4] = {};
  constexpr auto kHold = std::chrono::microseconds(200);
  constexpr int kRounds = 12;
  std::atomic<int> round{-1};    // the round the enqueuer is to enqueue in
  std::atomic<int> started{-1};  // the round whose enqueue it began
  std::atomic<int> done{-1};     // the round whose enqueue returned
  std::vector<std::uint64_t> tries(kRounds);
  std::vector<Clock::time_point> began(kRounds), ended(kRounds);
  std::vector<Clock::duration> held(kRounds);
  std::atomic<bool> pinned{true};
  std::thread enqueuer([&] {
    if (!pin(cpus[1])) pinned = false;
    for (int r = 0; r < kRounds; ++r) {
      while (round.load() != r) std::this_thread::yield();
      const std::uint64_t before = StreamState::failed_lock_tries_on_this_thread();
      began[r] = Clock::now();
      started.store(r);
      state.enqueue(CopyTask{destination, source, sizeof source});
      ended[r] = Clock::now();
      tries[r] = StreamState::failed_lock_tries_on_this_thread() - before;
      done.store(r);
    }
  });
  std::thread holder([&] {
    if (!pin(cpus[0])) pinned = false;
    for (int r = 0; r < kRounds; ++r) {
      state.hold_lock_for_test([&] {
        round.store(r);
        while (started.load() != r) std::this_thread::yield();
        const auto start = Clock::now();
        while (Clock::now() - start < kHold) {
        }
        held[r] = Clock::now() - start;
      });
      while (done.load() != r) std::this_thread::yield();
    }
  });
  holder.join();
  enqueuer.join();
  ASSERT_TRUE(pinned) << "pthread_setaffinity_np failed";
  EXPECT_FALSE(state.synchronize().has_value());
  EXPECT_EQ(std::memcmp(destination, source, sizeof source), 0);
  int judged = 0, within = 0;
  std::string seen;
  for (int r = 4; r < kRounds; ++r) {
    bool qualifies = true;
    for (int p = r - 4; p < r; ++p) {
      qualifies = qualifies && tries[p] > 0 && began[p + 1] - ended[p] < kContentionMemory / 2;
    }
    if (!qualifies) continue;
    ++judged;
    const auto bound = held[r] / kEnqueueBackoffLongest + 2;
    if (tries[r] <= static_cast<std::uint64_t>(bound)) ++within;
    seen += " " + std::to_string(tries[r]) + " tries in " +
            std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(held[r]).count()) +
            " us;";
  }
  if (judged < 3) {
    GTEST_SKIP() << "only " << judged
                 << " rounds followed four quick contended ones (a loaded machine)";
  }
  EXPECT_GE(within * 3, judged * 2) << "judged rounds:" << seen;
}

// Copies just above kLockedRunBytes still run inline, with the lock
// released while they run; those queued meanwhile are drained in order, in
// batches (a batch boundary falls inside the 40).
TEST(CpuSharedStream, CopiesAboveTheLockedSizeQueuedDuringAnInlineRunDrainInOrder) {
  Stream stream;
  StreamState& state = stream.state();
  constexpr std::size_t kBytes = kLockedRunBytes + 64;
  std::vector<unsigned char> first(kBytes, 1), destination(kBytes, 0);
  std::vector<std::vector<unsigned char>> values;
  for (int i = 0; i < 40; ++i) values.emplace_back(kBytes, static_cast<unsigned char>(i + 2));
  ASSERT_GT(values.size(), std::size_t{kDrainBatch});
  const std::optional<std::uint64_t> seq =
      state.enqueue_inline_for_test(CopyTask{destination.data(), first.data(), kBytes}, [&] {
        for (const std::vector<unsigned char>& v : values) {
          state.enqueue(CopyTask{destination.data(), v.data(), kBytes});
        }
        EXPECT_EQ(state.queued(), values.size());
      });
  ASSERT_TRUE(seq.has_value());
  EXPECT_EQ(state.caller_drained(), values.size());
  EXPECT_TRUE(state.is_complete(*seq + values.size()));
  EXPECT_EQ(destination, values.back()) << "in order: the last copy wrote last";
  EXPECT_FALSE(state.synchronize().has_value());
}

}  // namespace
}  // namespace anydev::cpu
