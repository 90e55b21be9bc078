// SPDX-License-Identifier: Apache-2.0
// The event pool (src/memory/event_pool.h) against a fake backend that counts its
// event calls: cross-stream ordering, stream-ordered release and the caching
// pool take their events from the device's pool, so that in steady state no
// event is created or destroyed per ordering or per release, and an ordering
// costs two backend calls (record, wait). The pool is bounded, and an event
// whose use failed is destroyed, not reused. Also the foreign release
// strategy's event (ForeignReleaseTest).
#include "memory/event_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "anydev/kit/table.h"
#include "api/objects.h"
#include "fake_backend_table.h"
#include "memory/allocation.h"
#include "memory/foreign_memory.h"
#include "memory/pool/caching_pool.h"
#include "memory/pool/pooled_allocation.h"
#include "memory/stream_ordered_release.h"
#include "support/status.h"

namespace anydev::core {
namespace {

// ---- a fake backend that counts event calls ---------------------------------------
// Streams finish their work at once; events are complete; memory is counted.
struct Counts {
  std::atomic<int> creates{0};
  std::atomic<int> destroys{0};
  std::atomic<int> records{0};
  std::atomic<int> waits{0};
  std::atomic<int> stream_syncs{0};
  std::atomic<bool> fail_record{false};
  std::mutex mutex;
  std::set<void*> live_blocks;
  std::vector<std::thread::id> free_threads;  // who called memory_free
  std::uintptr_t next_address = 0x10000;
};
Counts* counts = nullptr;

anydev_status_t Alloc(std::size_t bytes, void** handle, void** address) {
  std::lock_guard lock(counts->mutex);
  void* p = reinterpret_cast<void*>(counts->next_address);
  counts->next_address += bytes + 4096;
  counts->live_blocks.insert(p);
  *handle = p;
  *address = p;
  return ANYDEV_SUCCESS;
}
anydev_status_t HostAlloc(int, std::size_t bytes, void** handle, void** address) {
  return Alloc(bytes, handle, address);
}
anydev_status_t DeviceAlloc(int, std::size_t bytes, anydev_bk_stream_t, void** handle,
                            void** address) {
  return Alloc(bytes, handle, address);
}
anydev_status_t MemoryFree(int, anydev_bk_memory_kind_t, void* handle) {
  std::lock_guard lock(counts->mutex);
  counts->live_blocks.erase(handle);
  counts->free_threads.push_back(std::this_thread::get_id());
  return ANYDEV_SUCCESS;
}
anydev_status_t EventCreate(int, anydev_bk_event_t* out) {
  ++counts->creates;
  *out = reinterpret_cast<anydev_bk_event_t>(new char);
  return ANYDEV_SUCCESS;
}
anydev_status_t EventDestroy(anydev_bk_event_t event) {
  ++counts->destroys;
  delete reinterpret_cast<char*>(event);
  return ANYDEV_SUCCESS;
}
anydev_status_t EventRecord(anydev_bk_event_t, anydev_bk_stream_t) {
  ++counts->records;
  if (counts->fail_record) return set_error(ANYDEV_ERROR_DEVICE, "fake: record failed");
  return ANYDEV_SUCCESS;
}
anydev_status_t EventSynchronize(anydev_bk_event_t) { return ANYDEV_SUCCESS; }
anydev_status_t EventQuery(anydev_bk_event_t, int* complete) {
  *complete = 1;
  return ANYDEV_SUCCESS;
}
anydev_status_t StreamWaitEvent(anydev_bk_stream_t, anydev_bk_event_t) {
  ++counts->waits;
  return ANYDEV_SUCCESS;
}
anydev_status_t StreamSynchronize(anydev_bk_stream_t) {
  ++counts->stream_syncs;
  return ANYDEV_SUCCESS;
}

anydev_backend_table_t MakeTable() {
  anydev_backend_table_t t = anydev::test::fake_table();
  anydev::test::set_memory_entries<HostAlloc, DeviceAlloc, MemoryFree>(t);
  anydev::test::set_event_entries<EventCreate, EventDestroy, EventRecord, EventQuery,
                                  EventSynchronize>(t);
  t.stream_wait_event = anydev::kit::entry<StreamWaitEvent>;
  t.stream_synchronize = anydev::kit::entry<StreamSynchronize>;
  return t;
}
const anydev_backend_table_t kTable = MakeTable();

constexpr int kSteadyRounds = 100;

class EventPoolTest : public ::testing::Test {
 protected:
  EventPoolTest() {
    counts = &counts_;
    backend_.name = "fake";
    backend_.available = true;
    backend_.table = &kTable;
    events_ = std::make_unique<EventPool>(&kTable, 0);
    a_ = MakeStream(1);
    b_ = MakeStream(2);
  }
  ~EventPoolTest() override {
    drain_releases();
    a_.reset();
    b_.reset();
    events_.reset();
    counts = nullptr;
  }
  // A stream whose device's event pool is events_ (as adopt_stream makes).
  std::shared_ptr<Stream> MakeStream(std::uintptr_t id) {
    return std::make_shared<Stream>(Stream{&backend_, 0, reinterpret_cast<anydev_bk_stream_t>(id),
                                           backend_.table, events_.get()});
  }
  int Creates() const { return counts_.creates.load(); }
  int Destroys() const { return counts_.destroys.load(); }

  Counts counts_;
  Backend backend_;
  std::unique_ptr<EventPool> events_;
  std::shared_ptr<Stream> a_;
  std::shared_ptr<Stream> b_;
};

TEST_F(EventPoolTest, CrossStreamOrderingInSteadyStateCreatesNoEvents) {
  ASSERT_EQ(order_after(*a_, *b_), ANYDEV_SUCCESS);  // warm-up: the pool's first event
  const int creates = Creates();
  const int destroys = Destroys();
  const int records = counts_.records.load();
  const int waits = counts_.waits.load();
  for (int i = 0; i < kSteadyRounds; ++i) {
    ASSERT_EQ(order_after(*a_, *b_), ANYDEV_SUCCESS);
    ASSERT_EQ(order_after(*b_, *a_), ANYDEV_SUCCESS);
  }
  EXPECT_EQ(Creates() - creates, 0) << "no event created per ordering";
  EXPECT_EQ(Destroys() - destroys, 0) << "no event destroyed per ordering";
  // Two backend calls per ordering: record on the signaler, wait on the waiter.
  EXPECT_EQ(counts_.records.load() - records, 2 * kSteadyRounds);
  EXPECT_EQ(counts_.waits.load() - waits, 2 * kSteadyRounds);
}

TEST_F(EventPoolTest, OrderingAStreamAfterItselfUsesNoEvent) {
  ASSERT_EQ(order_after(*a_, *a_), ANYDEV_SUCCESS);
  EXPECT_EQ(Creates(), 0);
  EXPECT_EQ(counts_.records.load(), 0);
}

TEST_F(EventPoolTest, StreamOrderedReleaseInSteadyStateCreatesNoEvents) {
  // Host memory used by another stream than its owner: its release orders
  // the owner after that stream and frees after an event on the owner.
  auto round = [&] {
    void* handle = nullptr;
    void* address = nullptr;
    ASSERT_EQ(HostAlloc(0, 256, &handle, &address), ANYDEV_SUCCESS);
    auto allocation =
        make_plain_allocation(&backend_, 0, ANYDEV_BK_MEMORY_HOST, handle, address, 256, a_);
    allocation->last_stream = b_;
    allocation.reset();
    drain_releases();  // the reclaimer gives the event back
  };
  round();
  const int creates = Creates();
  const int destroys = Destroys();
  for (int i = 0; i < kSteadyRounds; ++i) round();
  EXPECT_EQ(Creates() - creates, 0) << "no event created per release";
  EXPECT_EQ(Destroys() - destroys, 0) << "no event destroyed per release";
  std::lock_guard lock(counts_.mutex);
  EXPECT_TRUE(counts_.live_blocks.empty()) << "every block freed";
}

TEST_F(EventPoolTest, CachingPoolSharesTheDevicePoolAndCreatesNoEventsInSteadyState) {
  CachingPool pool(&backend_, 0, ANYDEV_BK_MEMORY_HOST, true, kPoolNoTrim, events_.get());
  auto round = [&] {
    PoolBlock block;
    ASSERT_EQ(pool.allocate(a_, 4096, &block), ANYDEV_SUCCESS);
    auto allocation = make_pooled_allocation(&backend_, 0, ANYDEV_BK_MEMORY_HOST, block, 4096, a_);
    allocation->last_stream = b_;  // ordering, then a release event on a_
    allocation.reset();
  };
  round();
  round();
  const int creates = Creates();
  const int destroys = Destroys();
  for (int i = 0; i < kSteadyRounds; ++i) round();
  EXPECT_EQ(Creates() - creates, 0) << "no event created per pooled allocation";
  EXPECT_EQ(Destroys() - destroys, 0) << "no event destroyed per pooled allocation";
  EXPECT_EQ(pool.stats().cache_hits, static_cast<std::uint64_t>(kSteadyRounds + 1));
}

TEST_F(EventPoolTest, IsBoundedAndDestroysWhatDoesNotFit) {
  EventPool pool(&kTable, 0, 4);
  std::vector<anydev_bk_event_t> taken(6);
  for (auto& event : taken) ASSERT_EQ(pool.take(&event), ANYDEV_SUCCESS);
  EXPECT_EQ(Creates(), 6);
  for (auto event : taken) pool.give_back(event);
  EXPECT_EQ(pool.idle(), 4u);
  EXPECT_EQ(Destroys(), 2) << "the events beyond the capacity are destroyed";
  pool.give_back(nullptr);  // ignored
  EXPECT_EQ(pool.idle(), 4u);
}

TEST_F(EventPoolTest, FailedOrderingDestroysItsEventAndKeepsTheError) {
  ASSERT_EQ(order_after(*a_, *b_), ANYDEV_SUCCESS);
  ASSERT_EQ(events_->idle(), 1u);
  counts_.fail_record = true;
  EXPECT_EQ(order_after(*a_, *b_), ANYDEV_ERROR_DEVICE);
  EXPECT_EQ(last_error_message(), std::string("fake: record failed"));
  counts_.fail_record = false;
  EXPECT_EQ(events_->idle(), 0u) << "an event whose record failed is not reused";
  EXPECT_EQ(Destroys(), 1);
}

// A backend that answers event_query from memory
// (ANYDEV_BK_FLAG_CHEAP_EVENT_QUERY): a release whose stream has already
// finished frees on the releasing thread, its event idle again at once,
// without a request to the reclaimer (the hand-over to the reclaimer is
// most of a release's cost with many live buffers). Without the flag the
// reclaimer frees it.
TEST_F(EventPoolTest, CheapQueriesFreeAFinishedReleaseOnTheCallersThread) {
  for (const bool cheap : {true, false}) {
    SCOPED_TRACE(cheap ? "cheap queries" : "queries are driver calls");
    backend_.flags = cheap ? ANYDEV_BK_FLAG_CHEAP_EVENT_QUERY : 0;
    drain_releases();
    {
      std::lock_guard lock(counts_.mutex);
      counts_.free_threads.clear();
    }
    const int creates = Creates();
    void* handle = nullptr;
    void* address = nullptr;
    ASSERT_EQ(DeviceAlloc(0, 256, nullptr, &handle, &address), ANYDEV_SUCCESS);
    auto allocation =
        make_plain_allocation(&backend_, 0, ANYDEV_BK_MEMORY_DEVICE, handle, address, 256, a_);
    allocation->last_stream = a_;
    allocation.reset();
    drain_releases();
    std::lock_guard lock(counts_.mutex);
    EXPECT_TRUE(counts_.live_blocks.empty());
    ASSERT_EQ(counts_.free_threads.size(), 1u);
    EXPECT_EQ(counts_.free_threads[0] == std::this_thread::get_id(), cheap)
        << "freed on the releasing thread only when the query is cheap";
    EXPECT_LE(Creates() - creates, 1);
    EXPECT_EQ(events_->idle(), 1u) << "the release event is idle again";
  }
}

// The foreign release strategy (foreign_memory.h) when its release event
// cannot be recorded: the producer's callback runs only after the last
// user's stream has been waited for (before, it ran at once: the fresh
// event it waited on instead was complete).
using ForeignReleaseTest = EventPoolTest;

TEST_F(ForeignReleaseTest, WithoutARecordedEventWaitsForTheLastStreamBeforeTheCallback) {
  int syncs_at_callback = -1;
  char memory[64];
  auto allocation =
      make_foreign_allocation(&backend_, 0, ANYDEV_BK_MEMORY_USER_HOST, memory, sizeof memory, a_,
                              [&] { syncs_at_callback = counts_.stream_syncs; });
  allocation->last_stream = b_;
  counts_.fail_record = true;
  allocation.reset();
  counts_.fail_record = false;
  EXPECT_EQ(syncs_at_callback, 1) << "the callback ran before the last stream was waited for";
  EXPECT_EQ(events_->idle(), 0u) << "an event whose record failed is not reused";
}

TEST_F(ForeignReleaseTest, RunsTheCallbackAfterTheEventAndGivesTheEventBack) {
  bool called = false;
  char memory[64];
  auto allocation = make_foreign_allocation(&backend_, 0, ANYDEV_BK_MEMORY_USER_HOST, memory,
                                            sizeof memory, a_, [&] { called = true; });
  allocation->last_stream = b_;
  allocation.reset();
  drain_releases();
  EXPECT_TRUE(called);
  EXPECT_EQ(events_->idle(), 1u) << "the release event went back to the pool";
  EXPECT_EQ(counts_.stream_syncs.load(), 0) << "the releasing thread never waits";
}

}  // namespace
}  // namespace anydev::core
