// SPDX-License-Identifier: Apache-2.0
// The reclaimer (src/memory/stream_ordered_release.h) against a fake backend whose
// events complete when the test says so: releases waiting on different
// events finish in whatever order the events complete (no head-of-line
// blocking behind a slow stream), and a stream's destruction waits for its
// work without holding up other releases.
#include "memory/stream_ordered_release.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "anydev/kit/table.h"
#include "fake_backend_table.h"
#include "runtime/registry.h"
#include "support/status.h"

namespace anydev::core {
namespace {

// An event completes when its gate opens; a stream is a gate (its work
// finishes when the test opens it), and an event recorded on it takes it.
struct Gate {
  bool open = false;
};
struct FakeEvent {
  Gate* gate = nullptr;  // null: complete
  Gate own;              // the gate of an event made by the test
};

struct Fake {
  std::mutex mutex;
  std::condition_variable changed;
  std::set<void*> freed;
  std::set<void*> destroyed_streams;
  int live_events = 0;
  bool complete_locked(const FakeEvent* e) const { return e->gate == nullptr || e->gate->open; }
};
Fake fake;

anydev_status_t MemoryFree(int, anydev_bk_memory_kind_t, void* handle) {
  std::lock_guard lock(fake.mutex);
  fake.freed.insert(handle);
  fake.changed.notify_all();
  return ANYDEV_SUCCESS;
}
anydev_status_t StreamDestroy(anydev_bk_stream_t stream) {
  std::unique_lock lock(fake.mutex);
  // Waits for the stream's work, as the backend ABI says.
  auto* gate = reinterpret_cast<Gate*>(stream);
  fake.changed.wait(lock, [&] { return gate->open; });
  fake.destroyed_streams.insert(stream);
  fake.changed.notify_all();
  return ANYDEV_SUCCESS;
}
anydev_status_t EventCreate(int, anydev_bk_event_t* out) {
  std::lock_guard lock(fake.mutex);
  ++fake.live_events;
  *out = reinterpret_cast<anydev_bk_event_t>(new FakeEvent);
  return ANYDEV_SUCCESS;
}
anydev_status_t EventDestroy(anydev_bk_event_t event) {
  std::lock_guard lock(fake.mutex);
  --fake.live_events;
  delete reinterpret_cast<FakeEvent*>(event);
  return ANYDEV_SUCCESS;
}
anydev_status_t EventRecord(anydev_bk_event_t event, anydev_bk_stream_t stream) {
  std::lock_guard lock(fake.mutex);
  reinterpret_cast<FakeEvent*>(event)->gate = reinterpret_cast<Gate*>(stream);
  return ANYDEV_SUCCESS;
}
anydev_status_t EventQuery(anydev_bk_event_t event, int* complete) {
  std::lock_guard lock(fake.mutex);
  *complete = fake.complete_locked(reinterpret_cast<FakeEvent*>(event)) ? 1 : 0;
  return ANYDEV_SUCCESS;
}
anydev_status_t EventSynchronize(anydev_bk_event_t event) {
  std::unique_lock lock(fake.mutex);
  fake.changed.wait(lock,
                    [&] { return fake.complete_locked(reinterpret_cast<FakeEvent*>(event)); });
  return ANYDEV_SUCCESS;
}

anydev_backend_table_t MakeTable() {
  anydev_backend_table_t t = anydev::test::fake_table();
  anydev::test::set_event_entries<EventCreate, EventDestroy, EventRecord, EventQuery,
                                  EventSynchronize>(t);
  t.memory_free = anydev::kit::entry<MemoryFree>;
  t.stream_destroy = anydev::kit::entry<StreamDestroy>;
  return t;
}
const anydev_backend_table_t kTable = MakeTable();

class ReclaimerTest : public ::testing::Test {
 protected:
  ReclaimerTest() {
    backend_.name = "fake";
    backend_.available = true;
    backend_.table = &kTable;
  }
  ~ReclaimerTest() override {
    drain_releases();
    std::lock_guard lock(fake.mutex);
    fake.freed.clear();
    fake.destroyed_streams.clear();
  }

  // An event of the test's own, complete when `open`.
  anydev_bk_event_t MakeEvent(bool open) {
    anydev_bk_event_t event = nullptr;
    EventCreate(0, &event);
    auto* e = reinterpret_cast<FakeEvent*>(event);
    e->own.open = open;
    e->gate = &e->own;
    return event;
  }
  void Open(Gate& gate) {
    std::lock_guard lock(fake.mutex);
    gate.open = true;
    fake.changed.notify_all();
  }
  // Waits up to 20 s for `done` (under the fake's lock); a hang is a failure.
  template <class Done>
  bool Eventually(Done&& done) {
    std::unique_lock lock(fake.mutex);
    return fake.changed.wait_for(lock, std::chrono::seconds(20), done);
  }

  Backend backend_;
};

TEST_F(ReclaimerTest, AReleaseBehindASlowStreamsReleaseIsNotHeldUp) {
  anydev_bk_event_t slow = MakeEvent(false);
  anydev_bk_event_t fast = MakeEvent(true);
  int slow_memory = 0, fast_memory = 0;
  release_after_event(&backend_, 0, slow, ANYDEV_BK_MEMORY_HOST, &slow_memory);
  release_after_event(&backend_, 0, fast, ANYDEV_BK_MEMORY_HOST, &fast_memory);
  EXPECT_TRUE(Eventually([&] { return fake.freed.count(&fast_memory) == 1; }))
      << "the second release waited for the first one's slow event";
  {
    std::lock_guard lock(fake.mutex);
    EXPECT_EQ(fake.freed.count(&slow_memory), 0u) << "freed before its event completed";
  }
  Open(reinterpret_cast<FakeEvent*>(slow)->own);
  EXPECT_TRUE(Eventually([&] { return fake.freed.count(&slow_memory) == 1; }));
}

// A batch (a caching pool's trim) is one request, but each block in it is
// still freed after its own event: a busy one holds up neither the blocks
// after it in the batch nor a later request.
TEST_F(ReclaimerTest, EachBlockOfABatchIsFreedAfterItsOwnEvent) {
  anydev_bk_event_t slow = MakeEvent(false);
  int memory[4] = {};
  std::vector<EventRelease> batch = {{MakeEvent(true), &memory[0]},
                                     {slow, &memory[1]},
                                     {nullptr, &memory[2]},
                                     {MakeEvent(true), &memory[3]}};
  release_after_events(&backend_, 0, ANYDEV_BK_MEMORY_HOST, std::move(batch));
  int later = 0;
  release_after_event(&backend_, 0, MakeEvent(true), ANYDEV_BK_MEMORY_HOST, &later);
  EXPECT_TRUE(Eventually([&] {
    return fake.freed.count(&memory[0]) == 1 && fake.freed.count(&memory[2]) == 1 &&
           fake.freed.count(&memory[3]) == 1 && fake.freed.count(&later) == 1;
  })) << "the ready blocks waited for the busy one";
  {
    std::lock_guard lock(fake.mutex);
    EXPECT_EQ(fake.freed.count(&memory[1]), 0u) << "freed before its event completed";
  }
  Open(reinterpret_cast<FakeEvent*>(slow)->own);
  EXPECT_TRUE(Eventually([&] { return fake.freed.count(&memory[1]) == 1; }));
  drain_releases();
  std::lock_guard lock(fake.mutex);
  EXPECT_EQ(fake.live_events, 0) << "every event of the batch was destroyed (no event pool)";
}

TEST_F(ReclaimerTest, ABusyStreamsDestructionDoesNotHoldUpOtherReleases) {
  Gate busy_stream;  // its work finishes when opened
  Gate idle_stream{true};
  int memory = 0;
  release_stream(&backend_, reinterpret_cast<anydev_bk_stream_t>(&busy_stream), 0);
  release_stream(&backend_, reinterpret_cast<anydev_bk_stream_t>(&idle_stream), 0);
  release_after_event(&backend_, 0, MakeEvent(true), ANYDEV_BK_MEMORY_HOST, &memory);
  EXPECT_TRUE(Eventually([&] {
    return fake.freed.count(&memory) == 1 && fake.destroyed_streams.count(&idle_stream) == 1;
  })) << "releases queued behind a busy stream's destruction waited for its work";
  Open(busy_stream);
  EXPECT_TRUE(Eventually([&] { return fake.destroyed_streams.count(&busy_stream) == 1; }));
}

TEST_F(ReclaimerTest, DrainWaitsForPendingReleases) {
  anydev_bk_event_t slow = MakeEvent(false);
  int memory = 0;
  release_after_event(&backend_, 0, slow, ANYDEV_BK_MEMORY_HOST, &memory);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    Open(reinterpret_cast<FakeEvent*>(slow)->own);
  });
  drain_releases();
  {
    std::lock_guard lock(fake.mutex);
    EXPECT_EQ(fake.freed.count(&memory), 1u) << "drain returned before a pending release";
  }
  opener.join();
}

// A request that woke the reclaimer even while it works would make the two
// threads hand the core back and forth once per release (streams destroyed
// in a row). A request wakes it only when it sleeps; the rest queue behind
// its batch. Counted, not timed: while the reclaimer is held in a
// callback, a burst of requests issues no wake-up at all.
TEST_F(ReclaimerTest, ABurstOfRequestsWhileItWorksWakesItNoMore) {
  Gate held;
  bool started = false;
  run_after_event(&backend_, nullptr, [&] {
    std::unique_lock lock(fake.mutex);
    started = true;
    fake.changed.notify_all();
    fake.changed.wait(lock, [&] { return held.open; });
  });
  ASSERT_TRUE(Eventually([&] { return started; })) << "the reclaimer never ran the callback";
  const std::uint64_t before = reclaimer_wakeups();
  constexpr int kBurst = 1000;
  std::vector<int> memory(kBurst);
  for (int& m : memory) {
    release_after_event(&backend_, 0, MakeEvent(true), ANYDEV_BK_MEMORY_HOST, &m);
  }
  EXPECT_EQ(reclaimer_wakeups() - before, 0u) << "requests woke the reclaimer while it was working";
  Open(held);
  drain_releases();
  std::lock_guard lock(fake.mutex);
  for (int& m : memory) ASSERT_EQ(fake.freed.count(&m), 1u) << "a queued release was lost";
}

// A releasing thread that never sleeps starved the reclaimer's thread of
// CPU on a loaded machine: the soak test queued 71,000 requests (180 MB not
// yet freed) before the thread ran. Past the backlog bound a request now
// wakes the thread and waits for it to take the queue, at most 10 ms, so
// the queue stays near the bound. Counted, not timed: with the thread held
// in a callback, every request past the bound waits, the ones below it do
// not, and none is lost.
TEST_F(ReclaimerTest, RequestsPastTheBacklogBoundWaitForTheThread) {
  Gate held;
  bool started = false;
  run_after_event(&backend_, nullptr, [&] {
    std::unique_lock lock(fake.mutex);
    started = true;
    fake.changed.notify_all();
    fake.changed.wait(lock, [&] { return held.open; });
  });
  ASSERT_TRUE(Eventually([&] { return started; })) << "the reclaimer never ran the callback";
  const std::size_t bound = reclaimer_backlog_bound();
  const std::uint64_t before = reclaimer_backlog_waits();
  std::vector<int> memory(bound + 3);
  for (std::size_t i = 0; i + 1 < bound; ++i) {
    release_after_event(&backend_, 0, MakeEvent(true), ANYDEV_BK_MEMORY_HOST, &memory[i]);
  }
  EXPECT_EQ(reclaimer_backlog_waits() - before, 0u) << "a request below the bound waited";
  for (std::size_t i = bound - 1; i < memory.size(); ++i) {
    release_after_event(&backend_, 0, MakeEvent(true), ANYDEV_BK_MEMORY_HOST, &memory[i]);
  }
  EXPECT_EQ(reclaimer_backlog_waits() - before, 4u)
      << "every request from the bound on (" << bound << " queued) waits for the thread";
  Open(held);
  drain_releases();
  std::lock_guard lock(fake.mutex);
  for (int& m : memory) ASSERT_EQ(fake.freed.count(&m), 1u) << "a queued release was lost";
}

// The other half of the same finding: under the default policy, waking the
// reclaimer preempted the releasing thread on its own core. It runs under
// SCHED_BATCH, as the cpu backend's stream workers do.
TEST_F(ReclaimerTest, ItsThreadRunsUnderSchedBatch) {
  int policy = -1;
  bool ran = false;
  run_after_event(&backend_, nullptr, [&] {
    std::lock_guard lock(fake.mutex);
    policy = sched_getscheduler(0);
    ran = true;
    fake.changed.notify_all();
  });
  ASSERT_TRUE(Eventually([&] { return ran; }));
  EXPECT_EQ(policy, SCHED_BATCH);
}

// A pool's statistics count what it handed over until it is freed.
TEST_F(ReclaimerTest, WaitingReleasesAreCountedUntilFreed) {
  WaitingReleases waiting;
  Gate gate;
  anydev_bk_event_t one = MakeEvent(false);
  reinterpret_cast<FakeEvent*>(one)->gate = &gate;
  int memory[3] = {};
  release_after_event(&backend_, 0, one, ANYDEV_BK_MEMORY_DEVICE, &memory[0], nullptr, 4096,
                      &waiting);
  std::vector<EventRelease> batch;
  for (int i = 1; i < 3; ++i) {
    anydev_bk_event_t e = MakeEvent(false);
    reinterpret_cast<FakeEvent*>(e)->gate = &gate;
    batch.push_back(EventRelease{e, &memory[i], 1000});
  }
  release_after_events(&backend_, 0, ANYDEV_BK_MEMORY_DEVICE, std::move(batch), nullptr, &waiting);
  EXPECT_EQ(waiting.bytes.load(), 6096u);
  EXPECT_EQ(waiting.blocks.load(), 3u);
  Open(gate);
  drain_releases();
  EXPECT_EQ(waiting.bytes.load(), 0u);
  EXPECT_EQ(waiting.blocks.load(), 0u);
}

// Churn on a slow device: past reclaimer_waiting_bound() releases waiting
// for their events, each further release waits a little (bounded) for the
// reclaimer to finish some, instead of piling up without limit.
TEST_F(ReclaimerTest, ReleasesPastTheWaitingBoundWaitForProgress) {
  Gate stalled;
  const std::size_t bound = reclaimer_waiting_bound();
  std::vector<int> memory(bound + 3);
  const std::uint64_t before = reclaimer_waiting_waits();
  const auto release = [&](std::size_t i) {
    anydev_bk_event_t e = MakeEvent(false);
    reinterpret_cast<FakeEvent*>(e)->gate = &stalled;
    release_after_event(&backend_, 0, e, ANYDEV_BK_MEMORY_HOST, &memory[i]);
  };
  for (std::size_t i = 0; i <= bound; ++i) release(i);
  EXPECT_EQ(reclaimer_waiting_waits() - before, 0u) << "a release within the bound waited";
  // The thread takes them and holds them, waiting for their events.
  for (int i = 0; i < 2000 && reclaimer_held_releases() <= bound; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GT(reclaimer_held_releases(), bound);
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = bound + 1; i < memory.size(); ++i) release(i);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(reclaimer_waiting_waits() - before, 2u) << "each release past the bound waits";
  // Bounded: a stalled device slows releases down, it never stops them.
  EXPECT_LT(waited, std::chrono::seconds(10));
  Open(stalled);
  drain_releases();
  std::lock_guard lock(fake.mutex);
  for (int& m : memory) ASSERT_EQ(fake.freed.count(&m), 1u) << "a release was lost";
}

}  // namespace
}  // namespace anydev::core
