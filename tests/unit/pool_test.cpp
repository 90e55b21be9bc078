// SPDX-License-Identifier: Apache-2.0
// The caching pool (src/memory/pool/) against a fake backend whose streams only
// finish their work when the test says so: size classes, when a block may be
// reused, statistics, the out-of-memory retry and releasing the cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "anydev/kit/table.h"
#include "api/objects.h"
#include "fake_backend_table.h"
#include "memory/pool/caching_pool.h"
#include "memory/pool/pool_registry.h"
#include "memory/pool/size_classes.h"
#include "memory/stream_ordered_release.h"
#include "support/status.h"

namespace anydev::core {
namespace {

// ---- the fake backend -------------------------------------------------------------
// A stream is a counter of enqueued work and a counter of finished work; an
// event captures the enqueued count of the stream it was recorded on.
struct FakeStream {
  std::uint64_t enqueued = 0;
  std::uint64_t finished = 0;
};
struct FakeEvent {
  FakeStream* stream = nullptr;  // null: never recorded (complete)
  std::uint64_t target = 0;
};

struct Fake {
  std::mutex mutex;
  std::condition_variable changed;
  int allocs = 0;            // host_alloc + device_alloc calls
  int fail_next_allocs = 0;  // that many next allocations fail with OUT_OF_MEMORY
  bool fail_event_record = false;
  int queries = 0;
  int records = 0;                     // event_record calls
  int synchronizing = 0;               // threads inside EventSynchronize
  std::set<void*> live;                // allocated, not freed
  std::map<void*, std::size_t> sizes;  // of the live blocks
  std::size_t live_bytes = 0;          // their sum: what the backend holds
  std::vector<void*> freed;
  std::vector<std::thread::id> free_threads;  // who called memory_free
  int live_events = 0;
  int stream_waits = 0;  // stream_wait_event calls
  bool fail_stream_wait = false;
  int stream_syncs = 0;  // stream_synchronize calls
  std::uintptr_t next_address = 0x10000;

  bool complete_locked(const FakeEvent* e) const {
    return e->stream == nullptr || e->stream->finished >= e->target;
  }
};

Fake* fake = nullptr;

anydev_status_t FakeAlloc(std::size_t bytes, void** handle, void** address) {
  std::lock_guard lock(fake->mutex);
  ++fake->allocs;
  if (fake->fail_next_allocs > 0) {
    --fake->fail_next_allocs;
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY, "fake: out of memory");
  }
  void* p = reinterpret_cast<void*>(fake->next_address);
  fake->next_address += bytes + 4096;
  fake->live.insert(p);
  fake->sizes[p] = bytes;
  fake->live_bytes += bytes;
  *handle = p;
  *address = p;
  return ANYDEV_SUCCESS;
}

anydev_status_t HostAlloc(int, std::size_t bytes, void** handle, void** address) {
  return FakeAlloc(bytes, handle, address);
}
anydev_status_t DeviceAlloc(int, std::size_t bytes, anydev_bk_stream_t, void** handle,
                            void** address) {
  return FakeAlloc(bytes, handle, address);
}
anydev_status_t MemoryFree(int, anydev_bk_memory_kind_t, void* handle) {
  std::lock_guard lock(fake->mutex);
  if (fake->live.erase(handle) != 1) return set_error(ANYDEV_ERROR_INTERNAL, "fake: double free");
  fake->freed.push_back(handle);
  fake->live_bytes -= fake->sizes[handle];
  fake->sizes.erase(handle);
  fake->free_threads.push_back(std::this_thread::get_id());
  fake->changed.notify_all();
  return ANYDEV_SUCCESS;
}
anydev_status_t EventCreate(int, anydev_bk_event_t* out) {
  std::lock_guard lock(fake->mutex);
  ++fake->live_events;
  *out = reinterpret_cast<anydev_bk_event_t>(new FakeEvent());
  return ANYDEV_SUCCESS;
}
anydev_status_t EventDestroy(anydev_bk_event_t event) {
  std::lock_guard lock(fake->mutex);
  --fake->live_events;
  delete reinterpret_cast<FakeEvent*>(event);
  return ANYDEV_SUCCESS;
}
anydev_status_t EventRecord(anydev_bk_event_t event, anydev_bk_stream_t stream) {
  std::lock_guard lock(fake->mutex);
  if (fake->fail_event_record) return set_error(ANYDEV_ERROR_DEVICE, "fake: record failed");
  ++fake->records;
  auto* e = reinterpret_cast<FakeEvent*>(event);
  e->stream = reinterpret_cast<FakeStream*>(stream);
  e->target = e->stream->enqueued;
  return ANYDEV_SUCCESS;
}
anydev_status_t EventQuery(anydev_bk_event_t event, int* complete) {
  std::lock_guard lock(fake->mutex);
  ++fake->queries;
  *complete = fake->complete_locked(reinterpret_cast<FakeEvent*>(event)) ? 1 : 0;
  return ANYDEV_SUCCESS;
}
// Blocks until the test finishes the stream's work.
anydev_status_t EventSynchronize(anydev_bk_event_t event) {
  std::unique_lock lock(fake->mutex);
  ++fake->synchronizing;
  fake->changed.notify_all();
  fake->changed.wait(lock,
                     [&] { return fake->complete_locked(reinterpret_cast<FakeEvent*>(event)); });
  --fake->synchronizing;
  return ANYDEV_SUCCESS;
}

anydev_status_t StreamWaitEvent(anydev_bk_stream_t, anydev_bk_event_t) {
  std::lock_guard lock(fake->mutex);
  ++fake->stream_waits;
  if (fake->fail_stream_wait) return set_error(ANYDEV_ERROR_DEVICE, "fake: wait failed");
  return ANYDEV_SUCCESS;
}
// Finishes the stream's work (the test's streams only run when told).
anydev_status_t StreamSynchronize(anydev_bk_stream_t stream) {
  std::lock_guard lock(fake->mutex);
  ++fake->stream_syncs;
  auto* native = reinterpret_cast<FakeStream*>(stream);
  native->finished = native->enqueued;
  fake->changed.notify_all();
  return ANYDEV_SUCCESS;
}

anydev_backend_table_t MakeTable() {
  anydev_backend_table_t t = anydev::test::fake_table();
  anydev::test::set_memory_entries<HostAlloc, DeviceAlloc, MemoryFree>(t);
  anydev::test::set_event_entries<EventCreate, EventDestroy, EventRecord, EventQuery,
                                  EventSynchronize>(t);
  t.stream_wait_event = kit::entry<StreamWaitEvent>;
  t.stream_synchronize = kit::entry<StreamSynchronize>;
  return t;
}

const anydev_backend_table_t kTable = MakeTable();

// The use epoch a block gets when an operation using it is enqueued on `s`.
std::uint16_t UseEpoch(const std::shared_ptr<Stream>& s) { return s->release.epoch(); }

class PoolTest : public ::testing::Test {
 protected:
  PoolTest() {
    fake = &state_;
    backend_.name = "fake";
    backend_.available = true;
    backend_.table = &kTable;
  }
  ~PoolTest() override {
    // Let every stream finish so that destroying the pools never waits.
    {
      std::lock_guard lock(state_.mutex);
      for (const auto& native : natives_) native->finished = native->enqueued;
    }
    pools_.clear();
    drain_releases();
    fake = nullptr;
  }

  // Owned by the fixture: destroyed (after the streams finish) at the end.
  CachingPool& MakePool(anydev_bk_memory_kind_t kind, bool caching = true,
                        std::size_t release_threshold = kPoolNoTrim,
                        CarveMode carve = CarveMode::kNone) {
    pools_.push_back(std::make_unique<CachingPool>(&backend_, 0, kind, caching, release_threshold,
                                                   nullptr, carve));
    return *pools_.back();
  }
  // A caching device pool that carves small blocks (block_carver.h).
  CachingPool& MakeCarvingPool(std::size_t release_threshold = kPoolNoTrim,
                               CarveMode mode = CarveMode::kAddresses) {
    return MakePool(ANYDEV_BK_MEMORY_DEVICE, true, release_threshold, mode);
  }
  void CarveFromSeveralThreads(CarveMode mode);
  void UncachableCarvedBlockGoesBackToItsSegment(CarveMode mode);
  // The fake stream outlives the Stream: events recorded on it stay valid.
  std::shared_ptr<Stream> MakeStream() {
    natives_.push_back(std::make_unique<FakeStream>());
    return std::make_shared<Stream>(Stream{
        &backend_, 0, reinterpret_cast<anydev_bk_stream_t>(natives_.back().get()), backend_.table});
  }
  // Work enqueued on the stream that has not finished yet.
  void Enqueue(const std::shared_ptr<Stream>& s) {
    std::lock_guard lock(state_.mutex);
    ++reinterpret_cast<FakeStream*>(s->native)->enqueued;
  }
  void Finish(const std::shared_ptr<Stream>& s) {
    std::lock_guard lock(state_.mutex);
    auto* native = reinterpret_cast<FakeStream*>(s->native);
    native->finished = native->enqueued;
    state_.changed.notify_all();
  }
  PoolBlock Allocate(CachingPool& pool, const std::shared_ptr<Stream>& s, std::size_t bytes) {
    PoolBlock block;
    EXPECT_EQ(pool.allocate(s, bytes, &block), ANYDEV_SUCCESS) << last_error_message();
    return block;
  }
  // `n` blocks of 4 KiB allocated on `s`, used by work still running on it,
  // then given back in a row with that work's use epoch (release_event.h).
  // Call it inside ASSERT_NO_FATAL_FAILURE.
  void ReleaseInARow(CachingPool& pool, const std::shared_ptr<Stream>& s, int n,
                     std::vector<PoolBlock>* blocks) {
    for (int i = 0; i < n; ++i) blocks->push_back(Allocate(pool, s, 4096));
    Enqueue(s);
    const std::uint16_t used = UseEpoch(s);
    for (const PoolBlock& b : *blocks) ASSERT_TRUE(pool.give_back(b, s, true, true, used));
  }
  int Allocs() {
    std::lock_guard lock(state_.mutex);
    return state_.allocs;
  }
  bool Live(void* handle) {
    std::lock_guard lock(state_.mutex);
    return state_.live.count(handle) == 1;
  }

  // Blocks until the reclaimer has freed the block (bounded by the test's
  // timeout, not by a clock).
  void WaitUntilFreed(void* handle) {
    std::unique_lock lock(state_.mutex);
    state_.changed.wait(lock, [&] { return state_.live.count(handle) == 0; });
  }
  std::size_t BackendBytes() {
    std::lock_guard lock(state_.mutex);
    return state_.live_bytes;
  }
  int Queries() {
    std::lock_guard lock(state_.mutex);
    return state_.queries;
  }
  int StreamWaits() {
    std::lock_guard lock(state_.mutex);
    return state_.stream_waits;
  }
  std::size_t LiveAllocations() {
    std::lock_guard lock(state_.mutex);
    return state_.live.size();
  }

  Fake state_;
  Backend backend_;
  std::vector<std::unique_ptr<FakeStream>> natives_;
  std::vector<std::unique_ptr<CachingPool>> pools_;
};

// ---- size classes --------------------------------------------------------------------

TEST(PoolSizeClassTest, SmallRequestsShareTheMinimumBlock) {
  EXPECT_EQ(pool_size_class(1), 512u);
  EXPECT_EQ(pool_size_class(512), 512u);
}

TEST(PoolSizeClassTest, FourClassesPerDoubling) {
  EXPECT_EQ(pool_size_class(513), 640u);
  EXPECT_EQ(pool_size_class(641), 768u);
  EXPECT_EQ(pool_size_class(1000), 1024u);
  EXPECT_EQ(pool_size_class(1024), 1024u);
  EXPECT_EQ(pool_size_class(1025), 1280u);
  constexpr std::size_t MiB = std::size_t{1} << 20;
  EXPECT_EQ(pool_size_class(64 * MiB), 64 * MiB);
  EXPECT_EQ(pool_size_class(64 * MiB + 1), 80 * MiB);
  EXPECT_EQ(pool_size_class(100 * MiB), 112 * MiB);
  EXPECT_EQ(pool_size_class(256 * MiB), 256 * MiB);
}

TEST(PoolSizeClassTest, LargeBlocksRoundToTwoMebibytes) {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  EXPECT_EQ(pool_size_class(256 * MiB + 1), 258 * MiB);
  EXPECT_EQ(pool_size_class(1000 * MiB), 1000 * MiB);
  EXPECT_EQ(pool_size_class(1001 * MiB), 1002 * MiB);
}

TEST(PoolSizeClassTest, NeverSmallerAndAtMostAQuarterMore) {
  for (std::size_t bytes = 1; bytes < (std::size_t{1} << 30); bytes = bytes * 3 / 2 + 7) {
    const std::optional<std::size_t> c = pool_size_class(bytes);
    ASSERT_TRUE(c.has_value()) << bytes;
    EXPECT_GE(*c, bytes);
    if (bytes > kPoolMinimumBlock) {
      EXPECT_LE(*c - bytes, bytes / 4) << bytes;
    }
    EXPECT_EQ(pool_size_class(*c), c) << "a class is its own class: " << bytes;
  }
}

TEST(PoolSizeClassTest, OverflowIsReported) {
  EXPECT_FALSE(pool_size_class(std::numeric_limits<std::size_t>::max()).has_value());
}

TEST(PoolSettingTest, AcceptsExactlyZeroAndOne) {
  EXPECT_EQ(parse_pool_setting("1"), std::optional<bool>(true));
  EXPECT_EQ(parse_pool_setting("0"), std::optional<bool>(false));
  for (const char* bad : {"", "true", "off", " 1", "1 ", "01", "2", "-0"}) {
    EXPECT_FALSE(parse_pool_setting(bad).has_value()) << '"' << bad << '"';
  }
}

// ---- reuse ----------------------------------------------------------------------------

TEST_F(PoolTest, BlockNoStreamTouchedIsReusedAtOnceFromAnyStream) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto s = MakeStream();
  auto t = MakeStream();
  const PoolBlock first = Allocate(pool, s, 1000);
  EXPECT_EQ(first.bytes, 1024u);
  ASSERT_TRUE(pool.give_back(first, s, /*used_by_streams=*/false, /*in_use=*/true));
  const PoolBlock second = Allocate(pool, t, 900);
  EXPECT_EQ(second.handle, first.handle);
  EXPECT_EQ(Allocs(), 1);
}

TEST_F(PoolTest, HostBlockWaitsForItsEventEvenOnItsOwnerStream) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto s = MakeStream();
  const PoolBlock first = Allocate(pool, s, 4096);
  Enqueue(s);  // a copy into it, still running
  ASSERT_TRUE(pool.give_back(first, s, true, true));
  const PoolBlock second = Allocate(pool, s, 4096);
  EXPECT_NE(second.handle, first.handle) << "host memory reused while a stream still uses it";
  Finish(s);
  const PoolBlock third = Allocate(pool, s, 4096);
  EXPECT_EQ(third.handle, first.handle);
  EXPECT_EQ(Allocs(), 2);
}

TEST_F(PoolTest, DeviceBlockIsReusedAtOnceOnItsOwnerStream) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_DEVICE);
  auto s = MakeStream();
  const PoolBlock first = Allocate(pool, s, 1 << 20);
  Enqueue(s);
  ASSERT_TRUE(pool.give_back(first, s, true, true));
  const PoolBlock second = Allocate(pool, s, 1 << 20);
  EXPECT_EQ(second.handle, first.handle);
  EXPECT_EQ(Allocs(), 1);
}

TEST_F(PoolTest, DeviceBlockWaitsForItsEventOnAnotherStream) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_DEVICE);
  auto s = MakeStream();
  auto t = MakeStream();
  const PoolBlock first = Allocate(pool, s, 1 << 20);
  Enqueue(s);
  ASSERT_TRUE(pool.give_back(first, s, true, true));
  const PoolBlock on_t = Allocate(pool, t, 1 << 20);
  EXPECT_NE(on_t.handle, first.handle) << "reused on another stream before the owner passed it";
  Finish(s);
  const PoolBlock later = Allocate(pool, t, 1 << 20);
  EXPECT_EQ(later.handle, first.handle);
}

TEST_F(PoolTest, WorkEnqueuedAfterTheReleaseDoesNotDelayReuse) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto s = MakeStream();
  const PoolBlock first = Allocate(pool, s, 4096);
  Enqueue(s);
  ASSERT_TRUE(pool.give_back(first, s, true, true));
  Finish(s);
  Enqueue(s);  // unrelated later work, still pending
  EXPECT_EQ(Allocate(pool, s, 4096).handle, first.handle);
}

TEST_F(PoolTest, OtherClassesAreNotReused) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto s = MakeStream();
  const PoolBlock small = Allocate(pool, s, 1024);
  ASSERT_TRUE(pool.give_back(small, s, false, true));
  EXPECT_NE(Allocate(pool, s, 2048).handle, small.handle);
  EXPECT_NE(Allocate(pool, s, 512).handle, small.handle);
  EXPECT_EQ(Allocate(pool, s, 1024).handle, small.handle);
}

// ---- statistics -------------------------------------------------------------------------

TEST_F(PoolTest, StatisticsCountBlockSizesHitsAndMisses) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto s = MakeStream();
  const PoolBlock a = Allocate(pool, s, 1000);  // 1024
  const PoolBlock b = Allocate(pool, s, 3000);  // 3072
  PoolStats st = pool.stats();
  EXPECT_EQ(st.bytes_in_use, 4096u);
  EXPECT_EQ(st.peak_bytes_in_use, 4096u);
  EXPECT_EQ(st.bytes_cached, 0u);
  ASSERT_TRUE(pool.give_back(a, s, false, true));
  st = pool.stats();
  EXPECT_EQ(st.bytes_in_use, 3072u);
  EXPECT_EQ(st.bytes_cached, 1024u);
  const PoolBlock c = Allocate(pool, s, 1024);
  EXPECT_EQ(c.handle, a.handle);
  st = pool.stats();
  EXPECT_EQ(st.bytes_in_use, 4096u);
  EXPECT_EQ(st.bytes_cached, 0u);
  EXPECT_EQ(st.allocation_count, 3u);
  EXPECT_EQ(st.cache_hits, 1u);
  EXPECT_EQ(st.cache_misses, 2u);
  ASSERT_TRUE(pool.give_back(b, s, false, true));
  ASSERT_TRUE(pool.give_back(c, s, false, true));
  st = pool.stats();
  EXPECT_EQ(st.bytes_in_use, 0u);
  EXPECT_EQ(st.bytes_cached, 4096u);
  EXPECT_EQ(st.peak_bytes_in_use, 4096u);
}

TEST_F(PoolTest, TakenMemoryLeavesInUseAndComesBackAsCached) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto s = MakeStream();
  const PoolBlock a = Allocate(pool, s, 8192);
  pool.forget_in_use(a.bytes);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  ASSERT_TRUE(pool.give_back(a, s, false, /*in_use=*/false));
  const PoolStats st = pool.stats();
  EXPECT_EQ(st.bytes_in_use, 0u);
  EXPECT_EQ(st.bytes_cached, 8192u);
}

TEST_F(PoolTest, CachingOffKeepsStatisticsButNeverKeepsABlock) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST, /*caching=*/false);
  auto s = MakeStream();
  const PoolBlock a = Allocate(pool, s, 1000);
  EXPECT_EQ(a.bytes, 1000u) << "no rounding without caching";
  EXPECT_EQ(pool.stats().bytes_in_use, 1000u);
  EXPECT_FALSE(pool.give_back(a, s, false, true)) << "the caller must free it";
  EXPECT_TRUE(Live(a.handle));
  const PoolStats st = pool.stats();
  EXPECT_EQ(st.bytes_in_use, 0u);
  EXPECT_EQ(st.bytes_cached, 0u);
  EXPECT_EQ(st.peak_bytes_in_use, 1000u);
  EXPECT_EQ(st.cache_misses, 1u);
  EXPECT_EQ(st.cache_hits, 0u);
  EXPECT_EQ(MemoryFree(0, ANYDEV_BK_MEMORY_HOST, a.handle), ANYDEV_SUCCESS);
}

TEST_F(PoolTest, AFailedReleaseEventHandsTheBlockBack) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_DEVICE);
  auto s = MakeStream();
  const PoolBlock a = Allocate(pool, s, 4096);
  state_.fail_event_record = true;
  EXPECT_FALSE(pool.give_back(a, s, true, true));
  state_.fail_event_record = false;
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  EXPECT_EQ(pool.stats().bytes_cached, 0u);
  EXPECT_EQ(MemoryFree(0, ANYDEV_BK_MEMORY_DEVICE, a.handle), ANYDEV_SUCCESS);
}

// ---- cheap event queries (ANYDEV_BK_FLAG_CHEAP_EVENT_QUERY) -------------------------------

int LiveEvents(Fake& state) {
  std::lock_guard lock(state.mutex);
  return state.live_events;
}

// An event kept with every cached block makes a release's cost grow with
// the number of live buffers (events made, destroyed, and given back under
// the releasing thread's lock; docs/performance.md). A backend that answers
// a query from memory lets the pool see that the stream is done at once.
TEST_F(PoolTest, CheapQueriesCacheABlockOfAnIdleStreamWithoutAnEvent) {
  backend_.flags = ANYDEV_BK_FLAG_CHEAP_EVENT_QUERY;
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_DEVICE);
  auto s = MakeStream();
  auto t = MakeStream();
  constexpr int kBlocks = 100;
  std::vector<PoolBlock> blocks;
  for (int i = 0; i < kBlocks; ++i) blocks.push_back(Allocate(pool, s, 4096));
  for (const PoolBlock& b : blocks) ASSERT_TRUE(pool.give_back(b, s, true, true));
  EXPECT_LE(LiveEvents(state_), 1) << "a cached block of an idle stream holds no event";
  const int queries = Queries();
  // Ready for anyone at once: another stream takes it without a query.
  const PoolBlock on_t = Allocate(pool, t, 4096);
  EXPECT_EQ(on_t.handle, blocks.back().handle);
  EXPECT_EQ(Queries(), queries);
  EXPECT_EQ(Allocs(), kBlocks);
}

TEST_F(PoolTest, CheapQueriesStillWaitForAStreamThatIsBusy) {
  backend_.flags = ANYDEV_BK_FLAG_CHEAP_EVENT_QUERY;
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto s = MakeStream();
  const PoolBlock first = Allocate(pool, s, 4096);
  Enqueue(s);  // a copy into it, still running
  ASSERT_TRUE(pool.give_back(first, s, true, true));
  EXPECT_EQ(LiveEvents(state_), 1) << "the block keeps its event while its stream runs";
  EXPECT_NE(Allocate(pool, s, 4096).handle, first.handle)
      << "host memory reused while a stream still uses it";
  Finish(s);
  EXPECT_EQ(Allocate(pool, s, 4096).handle, first.handle);
}

// A backend whose query is a driver call (cuda, hip, level_zero, opencl):
// a release stays one event_record, no query (driver calls are costly).
TEST_F(PoolTest, WithoutCheapQueriesAReleaseQueriesNothing) {
  ASSERT_EQ(backend_.flags & ANYDEV_BK_FLAG_CHEAP_EVENT_QUERY, 0u);
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_DEVICE);
  auto s = MakeStream();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(pool.give_back(Allocate(pool, s, 4096), s, true, true));
  EXPECT_EQ(Queries(), 0);
}

// ---- release events shared by releases in a row (release_event.h) ------------------------

TEST_F(PoolTest, ReleasesInARowOnOneStreamRecordOneEvent) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_DEVICE);
  auto s = MakeStream();
  auto t = MakeStream();
  constexpr int kBlocks = 1000;
  std::vector<PoolBlock> blocks;
  ASSERT_NO_FATAL_FAILURE(ReleaseInARow(pool, s, kBlocks, &blocks));
  EXPECT_EQ(state_.records, 1) << "one release event for the releases in a row";
  EXPECT_EQ(LiveEvents(state_), 1);
  EXPECT_NE(Allocate(pool, t, 4096).handle, blocks.front().handle)
      << "reused on another stream before the shared event completed";
  Finish(s);
  std::set<void*> reused;
  const int queries = Queries();
  for (int i = 0; i < kBlocks; ++i) reused.insert(Allocate(pool, t, 4096).handle);
  EXPECT_EQ(reused.size(), std::size_t{kBlocks});
  EXPECT_LE(Queries() - queries, 1) << "seen complete once, never queried again";
  EXPECT_EQ(pool.stats().cache_hits, std::uint64_t{kBlocks});
}

TEST_F(PoolTest, ABlockUsedAfterTheSharedEventWasRecordedGetsItsOwn) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_DEVICE);
  auto s = MakeStream();
  auto t = MakeStream();
  const PoolBlock a = Allocate(pool, s, 4096);
  const PoolBlock b = Allocate(pool, s, 4096);
  Enqueue(s);  // uses a and b
  const std::uint16_t first = UseEpoch(s);
  ASSERT_TRUE(pool.give_back(a, s, true, true, first));
  Enqueue(s);  // uses b again, after a's release event was recorded
  const std::uint16_t second = UseEpoch(s);
  EXPECT_NE(second, first);
  ASSERT_TRUE(pool.give_back(b, s, true, true, second));
  EXPECT_EQ(state_.records, 2) << "b's later use is not covered by a's release event";
  {
    std::lock_guard lock(state_.mutex);
    reinterpret_cast<FakeStream*>(s->native)->finished = 1;  // only the first work done
  }
  EXPECT_EQ(Allocate(pool, t, 4096).handle, a.handle);
  EXPECT_NE(Allocate(pool, t, 4096).handle, b.handle) << "reused while its last use still runs";
  Finish(s);
  EXPECT_EQ(Allocate(pool, t, 4096).handle, b.handle);
}

TEST_F(PoolTest, AReleaseWithoutAUseEpochRecordsItsOwnEvent) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_DEVICE);
  auto s = MakeStream();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(pool.give_back(Allocate(pool, s, 4096), s, true, true));
  EXPECT_EQ(state_.records, 3);
  EXPECT_EQ(LiveEvents(state_), 1) << "each record replaces the stream's previous event";
}

TEST_F(PoolTest, TrimmedBlocksSharingAnEventAreFreedOnceItCompletes) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST, true, /*release_threshold=*/0);
  auto s = MakeStream();
  constexpr int kBlocks = 64;
  std::vector<PoolBlock> blocks;
  ASSERT_NO_FATAL_FAILURE(ReleaseInARow(pool, s, kBlocks, &blocks));
  EXPECT_EQ(state_.records, 1);
  for (int i = 0; i + 1 < kBlocks; ++i) {
    EXPECT_TRUE(Live(blocks[i].handle)) << "trimmed block freed while its stream still runs";
  }
  Finish(s);
  for (int i = 0; i + 1 < kBlocks; ++i) WaitUntilFreed(blocks[i].handle);
  EXPECT_TRUE(Live(blocks.back().handle)) << "the newest block stays cached";
}

// ---- out of memory and releasing the cache ------------------------------------------------

TEST_F(PoolTest, OutOfMemoryFreesTheCacheAndTriesOnceMore) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_DEVICE);
  auto s = MakeStream();
  const PoolBlock cached_idle = Allocate(pool, s, 4096);
  const PoolBlock cached_busy = Allocate(pool, s, 8192);
  ASSERT_TRUE(pool.give_back(cached_idle, s, false, true));
  Enqueue(s);
  ASSERT_TRUE(pool.give_back(cached_busy, s, true, true));
  state_.fail_next_allocs = 1;
  // The busy block's event completes only when the test finishes the stream;
  // the retry waits for it, so finish it from another thread.
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Finish(s);
  });
  PoolBlock fresh;
  const anydev_status_t status = pool.allocate(s, 1 << 20, &fresh);
  finisher.join();
  ASSERT_EQ(status, ANYDEV_SUCCESS) << last_error_message();
  EXPECT_EQ(Allocs(), 4) << "two blocks, one failure, one retry";
  EXPECT_FALSE(Live(cached_idle.handle));
  EXPECT_FALSE(Live(cached_busy.handle));
  const PoolStats st = pool.stats();
  EXPECT_EQ(st.bytes_cached, 0u);
  EXPECT_EQ(st.bytes_in_use, std::size_t{1} << 20);
  EXPECT_EQ(st.cache_misses, 3u);
}

TEST_F(PoolTest, OutOfMemoryWithNothingCachedFailsWithTheBackendsError) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto s = MakeStream();
  state_.fail_next_allocs = 1;
  PoolBlock block;
  EXPECT_EQ(pool.allocate(s, 4096, &block), ANYDEV_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(last_error_message(), "fake: out of memory");
  EXPECT_EQ(Allocs(), 1) << "no retry when nothing could be freed";
  const PoolStats st = pool.stats();
  EXPECT_EQ(st.allocation_count, 0u);
  EXPECT_EQ(st.bytes_in_use, 0u);
}

TEST_F(PoolTest, OutOfMemoryTwiceFails) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto s = MakeStream();
  const PoolBlock a = Allocate(pool, s, 4096);
  ASSERT_TRUE(pool.give_back(a, s, false, true));
  state_.fail_next_allocs = 2;
  PoolBlock block;
  EXPECT_EQ(pool.allocate(s, 1 << 16, &block), ANYDEV_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(Allocs(), 3) << "one retry only";
  EXPECT_FALSE(Live(a.handle));
}

TEST_F(PoolTest, CachedBlocksOfASlowStreamHoldUpNoOtherRelease) {
  // A released cache whose block a slow stream still uses, then a block no
  // stream uses: the reclaimer frees the second without waiting (blocking
  // in event_synchronize) for the slow stream. Deterministic: the wait ends
  // when the block is freed or when the reclaimer blocks on an event.
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto slow = MakeStream();
  auto other = MakeStream();
  const PoolBlock busy = Allocate(pool, slow, 4096);
  Enqueue(slow);
  ASSERT_TRUE(pool.give_back(busy, slow, true, true));
  EXPECT_EQ(pool.release_cached(false), 4096u);
  const PoolBlock idle = Allocate(pool, other, 4096);
  ASSERT_NE(idle.handle, busy.handle);
  ASSERT_TRUE(pool.give_back(idle, other, false, true));
  EXPECT_EQ(pool.release_cached(false), 4096u);
  {
    std::unique_lock lock(state_.mutex);
    state_.changed.wait(
        lock, [&] { return state_.live.count(idle.handle) == 0 || state_.synchronizing > 0; });
    EXPECT_EQ(state_.live.count(idle.handle), 0u)
        << "the reclaimer waits for the slow stream before freeing a block no stream uses";
    EXPECT_EQ(state_.synchronizing, 0) << "the reclaimer blocks on the slow stream's event";
    EXPECT_EQ(state_.live.count(busy.handle), 1u) << "freed while a stream may still use it";
  }
  Finish(slow);
  drain_releases();
  EXPECT_FALSE(Live(busy.handle));
  EXPECT_FALSE(Live(idle.handle));
}

TEST_F(PoolTest, ReleaseCachedNeverWaitsAndFreesBusyBlocksOnceTheirStreamPasses) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto s = MakeStream();
  const PoolBlock idle = Allocate(pool, s, 4096);
  const PoolBlock busy = Allocate(pool, s, 4096);
  ASSERT_TRUE(pool.give_back(idle, s, false, true));
  Enqueue(s);
  ASSERT_TRUE(pool.give_back(busy, s, true, true));
  EXPECT_EQ(pool.release_cached(false), 8192u);  // returns although s is still busy
  EXPECT_EQ(pool.stats().bytes_cached, 0u);
  WaitUntilFreed(idle.handle);  // by the reclaimer, which does not wait for s first
  EXPECT_TRUE(Live(busy.handle)) << "freed while a stream may still use it";
  Finish(s);
  drain_releases();
  EXPECT_FALSE(Live(busy.handle));
}

TEST_F(PoolTest, DestroyingThePoolFreesEverythingAndEveryEvent) {
  auto s = MakeStream();
  auto t = MakeStream();
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_DEVICE);
  const PoolBlock a = Allocate(pool, s, 4096);
  const PoolBlock b = Allocate(pool, s, 4096);
  Enqueue(s);
  ASSERT_TRUE(pool.give_back(a, s, true, true));
  ASSERT_TRUE(pool.give_back(b, s, true, true));
  Finish(s);
  const PoolBlock c = Allocate(pool, t, 4096);    // its event completed: kept for reuse
  ASSERT_TRUE(pool.give_back(c, t, true, true));  // reuses that event
  pools_.clear();
  drain_releases();
  EXPECT_FALSE(Live(a.handle));
  EXPECT_FALSE(Live(b.handle));
  // A stream keeps the event of its latest release (release_event.h) until it goes.
  s.reset();
  t.reset();
  std::lock_guard lock(state_.mutex);
  EXPECT_EQ(state_.live_events, 0);
}

// ---- scale: O(1) reuse, trimming, impossible sizes ------------------------------------------

TEST_F(PoolTest, ReuseQueriesAFewEventsWhateverTheNumberOfCachedBlocks) {
  // A request must not scan each cached block's event under the pool lock:
  // with 10^5 cached blocks that costs tens of microseconds per buffer.
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto s = MakeStream();
  constexpr int kCached = 20000;
  std::vector<PoolBlock> blocks;
  for (int i = 0; i < kCached; ++i) blocks.push_back(Allocate(pool, s, 4096));
  Enqueue(s);  // a copy that still reads every one of them
  for (const PoolBlock& b : blocks) ASSERT_TRUE(pool.give_back(b, s, true, true));
  const int before_miss = Queries();
  const PoolBlock miss = Allocate(pool, s, 4096);  // none reusable yet
  EXPECT_LE(Queries() - before_miss, CachingPool::kQueriesPerRequest);
  EXPECT_EQ(pool.stats().cache_misses, std::uint64_t{kCached} + 1);
  Finish(s);
  const int before_hits = Queries();
  for (int i = 0; i < 100; ++i) {
    const PoolBlock hit = Allocate(pool, s, 4096);
    EXPECT_NE(hit.handle, miss.handle);
  }
  EXPECT_LE(Queries() - before_hits, 100 * CachingPool::kQueriesPerRequest);
  EXPECT_EQ(pool.stats().cache_hits, 100u) << "completed blocks are found from the oldest";
}

TEST_F(PoolTest, ASlowStreamDoesNotHideTheBlocksOfOthers) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto slow = MakeStream();
  auto fast = MakeStream();
  const PoolBlock held = Allocate(pool, slow, 4096);
  const PoolBlock done = Allocate(pool, fast, 4096);
  Enqueue(slow);
  Enqueue(fast);
  ASSERT_TRUE(pool.give_back(held, slow, true, true));  // the oldest, never finishes here
  ASSERT_TRUE(pool.give_back(done, fast, true, true));
  Finish(fast);
  EXPECT_EQ(Allocate(pool, fast, 4096).handle, done.handle);
  EXPECT_TRUE(Live(held.handle));
}

// Log-uniform sizes of 1 B - 64 MiB, about 100 alive, as the issue measured.
struct RandomMix {
  std::mt19937_64 random{20};
  std::size_t Size() {
    std::uniform_real_distribution<double> exponent(0.0, 26.0);
    return static_cast<std::size_t>(std::exp2(exponent(random)));
  }
};

TEST_F(PoolTest, RandomMixKeepsReservedNearLiveAndReturnsEverything) {
  // A pool that never trims holds gigabytes for a few hundred MiB live, and
  // keeps them once everything is released.
  constexpr std::size_t kThreshold = std::size_t{8} << 20;
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST, true, kThreshold);
  auto s = MakeStream();
  RandomMix mix;
  std::vector<std::pair<PoolBlock, std::size_t>> alive;
  std::size_t live = 0;  // requested bytes of the alive buffers
  double worst = 0;
  for (int op = 0; op < 20000; ++op) {
    const bool grow =
        alive.size() < 100 ? (alive.size() < 80 || mix.random() % 2 == 0) : mix.random() % 4 == 0;
    if (grow) {
      const std::size_t bytes = mix.Size() + 1;
      alive.emplace_back(Allocate(pool, s, bytes), bytes);
      live += bytes;
    } else {
      const std::size_t i = mix.random() % alive.size();
      const PoolBlock block = alive[i].first;
      live -= alive[i].second;
      alive[i] = alive.back();
      alive.pop_back();
      ASSERT_TRUE(pool.give_back(block, s, /*used_by_streams=*/op % 3 == 0, true));
      // The invariant: the threshold, a quarter of what is in use, and the
      // block given back last.
      const PoolStats st = pool.stats();
      ASSERT_LE(st.bytes_cached, kThreshold + st.bytes_in_use / 4 + block.bytes) << "op " << op;
    }
    if (op % 16 == 0) {
      Finish(s);         // stream work completes now and then
      drain_releases();  // and the reclaimer frees what was trimmed
      if (live >= (std::size_t{64} << 20)) {
        worst = std::max(worst, static_cast<double>(BackendBytes()) / static_cast<double>(live));
      }
    }
  }
  // Size classes round up by at most 25%, the cache adds at most a quarter
  // of that plus the threshold and one block.
  EXPECT_LE(worst, 2.0) << "backend bytes / live bytes";
  RecordProperty("worst_reserved_per_live", std::to_string(worst));
  for (const auto& [block, bytes] : alive) ASSERT_TRUE(pool.give_back(block, s, true, true));
  pool.release_cached(false);
  Finish(s);
  drain_releases();
  EXPECT_EQ(BackendBytes(), 0u) << "everything is handed back";
  EXPECT_EQ(pool.stats().bytes_cached, 0u);
}

// Under the scale bench's mix (anydev-scale-bench pool: sizes log-uniform
// over 1 B - 64 MiB, at most 32 alive, allocate or release with equal odds)
// reserved / live stays at a median of at most 1.5 with the default
// threshold: with some 60 MiB live, a threshold of 32 MiB alone would allow
// half as much again. Pool statistics only (no stream, no timing): the same
// numbers on every run.
TEST_F(PoolTest, DefaultThresholdKeepsTheScaleMixMedianRatioAtMostOneAndAHalf) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_DEVICE, true, kPoolDefaultReleaseThreshold);
  auto s = MakeStream();
  std::mt19937_64 random(19);
  std::uniform_real_distribution<double> log_size(0.0, std::log(64.0 * 1024 * 1024));
  std::vector<std::pair<PoolBlock, std::size_t>> alive;
  std::size_t live = 0;
  std::vector<double> ratios;
  for (int op = 0; op < 20000; ++op) {
    if (alive.empty() || (alive.size() < 32 && (random() & 1) != 0)) {
      const std::size_t bytes = std::max<std::size_t>(1, std::exp(log_size(random)));
      alive.emplace_back(Allocate(pool, s, bytes), bytes);
      live += bytes;
    } else {
      const std::size_t i = random() % alive.size();
      ASSERT_TRUE(pool.give_back(alive[i].first, s, /*used_by_streams=*/false, true));
      live -= alive[i].second;
      alive[i] = alive.back();
      alive.pop_back();
    }
    if (op % 100 == 99 && live > 0) {
      const PoolStats st = pool.stats();
      ratios.push_back(static_cast<double>(st.bytes_in_use + st.bytes_cached) /
                       static_cast<double>(live));
    }
  }
  std::sort(ratios.begin(), ratios.end());
  const double median = ratios[ratios.size() / 2];
  RecordProperty("median_reserved_per_live", std::to_string(median));
  EXPECT_LE(median, 1.5) << "threshold " << kPoolDefaultReleaseThreshold;
  for (const auto& [block, bytes] : alive) ASSERT_TRUE(pool.give_back(block, s, false, true));
  pool.release_cached(false);
  drain_releases();
  EXPECT_EQ(pool.stats().bytes_cached, 0u);
}

TEST_F(PoolTest, ReleaseThresholdTrimsTheOldestButKeepsTheNewestBlock) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST, true, /*release_threshold=*/0);
  auto s = MakeStream();
  const PoolBlock a = Allocate(pool, s, 4096);
  const PoolBlock b = Allocate(pool, s, 8192);
  ASSERT_TRUE(pool.give_back(a, s, false, true));
  EXPECT_EQ(pool.stats().bytes_cached, 4096u) << "the newest block stays: hot loops stay hot";
  ASSERT_TRUE(pool.give_back(b, s, false, true));
  EXPECT_EQ(pool.stats().bytes_cached, 8192u);
  WaitUntilFreed(a.handle);
  EXPECT_TRUE(Live(b.handle));
  EXPECT_EQ(Allocate(pool, s, 8192).handle, b.handle);
}

// A trim to the limit exactly would make every further release trim one
// block once the cache is at its limit: a reclaimer request (and often a
// wake-up) per release. A trim goes an eighth below the limit, handed over
// as one batch.
TEST_F(PoolTest, TrimsGoBelowTheLimitSoMostReleasesTrimNothing) {
  constexpr std::size_t kThreshold = 256 << 10;
  constexpr std::size_t kBlock = 4096;
  constexpr int kBlocks = 512;  // 2 MiB
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST, true, kThreshold);
  auto s = MakeStream();
  std::vector<PoolBlock> blocks;
  for (int i = 0; i < kBlocks; ++i) blocks.push_back(Allocate(pool, s, kBlock));
  int trims = 0;
  int past_limit = 0;  // releases after the first trim: each trimmed before
  for (const PoolBlock& b : blocks) {
    const PoolStats before = pool.stats();
    ASSERT_TRUE(pool.give_back(b, s, false, true));
    const PoolStats after = pool.stats();
    const std::size_t limit = kThreshold + after.bytes_in_use / 4;
    EXPECT_LE(after.bytes_cached, limit);
    if (trims > 0) ++past_limit;
    if (after.bytes_cached < before.bytes_cached + kBlock) {
      ++trims;
      EXPECT_LE(after.bytes_cached, limit - limit / kTrimSlackDivisor + kBlock)
          << "a trim goes an eighth below the limit";
    }
  }
  RecordProperty("trims", std::to_string(trims));
  RecordProperty("releases_past_the_limit", std::to_string(past_limit));
  ASSERT_GT(past_limit, 100) << "the test must cross the limit many times";
  EXPECT_LE(trims * 8, past_limit) << "at most one release in eight trims";
  pool.release_cached(false);
  drain_releases();
  EXPECT_EQ(BackendBytes(), 0u) << "every trimmed block was freed";
}

TEST_F(PoolTest, SettingTheThresholdTrimsAtOnceAndNeverTrimIsKept) {
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_DEVICE);
  EXPECT_EQ(pool.release_threshold(), kPoolNoTrim);
  auto s = MakeStream();
  std::vector<PoolBlock> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(Allocate(pool, s, 1 << 20));
  Enqueue(s);
  for (const PoolBlock& b : blocks) ASSERT_TRUE(pool.give_back(b, s, true, true));
  EXPECT_EQ(pool.stats().bytes_cached, 8u << 20) << "SIZE_MAX never trims";
  pool.set_release_threshold(2u << 20);  // returns although s is busy
  EXPECT_EQ(pool.release_threshold(), 2u << 20);
  EXPECT_EQ(pool.stats().bytes_cached, 2u << 20);
  EXPECT_TRUE(Live(blocks.front().handle)) << "freed while a stream may still use it";
  Finish(s);
  drain_releases();
  for (int i = 0; i < 6; ++i) EXPECT_FALSE(Live(blocks[i].handle)) << i;
  EXPECT_TRUE(Live(blocks[7].handle));
}

TEST_F(PoolTest, ReleaseCachedCallsNoMemoryFreeOnTheCallersThread) {
  // cuMemFree / cuMemFreeHost may synchronize, and backend.h promises that
  // releasing never blocks the caller.
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST, true, /*release_threshold=*/0);
  auto s = MakeStream();
  const PoolBlock a = Allocate(pool, s, 4096);
  const PoolBlock b = Allocate(pool, s, 4096);
  const PoolBlock c = Allocate(pool, s, 1 << 20);
  ASSERT_TRUE(pool.give_back(a, s, false, true));
  ASSERT_TRUE(pool.give_back(b, s, false, true));  // trims a
  ASSERT_TRUE(pool.give_back(c, s, false, true));  // trims b
  EXPECT_EQ(pool.release_cached(false), std::size_t{1} << 20);
  drain_releases();
  std::lock_guard lock(state_.mutex);
  ASSERT_EQ(state_.free_threads.size(), 3u);
  for (const std::thread::id& id : state_.free_threads) EXPECT_NE(id, std::this_thread::get_id());
}

TEST_F(PoolTest, ImpossibleSizesAreOutOfMemoryNamingTheRequest) {
  // The message names the request's fate, not a detail of the pool such as
  // "pool: ... cannot be rounded up to a block size".
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  for (bool caching : {true, false}) {
    CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST, caching);
    auto s = MakeStream();
    for (std::size_t bytes : {kMax, kMax / 2 + 1, kMax - kPoolLargeGranularity + 2}) {
      PoolBlock block;
      EXPECT_EQ(pool.allocate(s, bytes, &block), ANYDEV_ERROR_OUT_OF_MEMORY) << bytes;
      EXPECT_NE(last_error_message().find(std::to_string(bytes)), std::string::npos)
          << last_error_message();
      EXPECT_EQ(last_error_message().find("round"), std::string::npos) << last_error_message();
    }
    EXPECT_EQ(Allocs(), 0) << "the backend is not asked";
    EXPECT_EQ(pool.stats().allocation_count, 0u);
  }
}

TEST_F(PoolTest, TheLargestRequestStillRoundsToAClass) {
  // The size-class rounding edge: everything the pool accepts has a class.
  EXPECT_TRUE(pool_size_class(kPoolLargestRequest).has_value());
  EXPECT_GE(*pool_size_class(kPoolLargestRequest), kPoolLargestRequest);
  CachingPool& pool = MakePool(ANYDEV_BK_MEMORY_HOST);
  auto s = MakeStream();
  state_.fail_next_allocs = 1;
  PoolBlock block;
  EXPECT_EQ(pool.allocate(s, kPoolLargestRequest, &block), ANYDEV_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(last_error_message(), "fake: out of memory") << "the backend's answer";
}

TEST(PoolSettingTest, ReleaseThresholdIsDecimalBytes) {
  EXPECT_EQ(parse_release_threshold("0"), std::optional<std::size_t>(0));
  EXPECT_EQ(parse_release_threshold("33554432"), std::optional<std::size_t>(33554432));
  EXPECT_EQ(parse_release_threshold("18446744073709551615"),
            std::optional<std::size_t>(std::numeric_limits<std::size_t>::max()));
  for (const char* bad : {"", "-1", "1e9", " 1", "1 ", "32M", "0x10", "18446744073709551616"}) {
    EXPECT_FALSE(parse_release_threshold(bad).has_value()) << '"' << bad << '"';
  }
}

}  // namespace
}  // namespace anydev::core

namespace anydev::core {
namespace {

// ---- carved blocks (block_carver.h) ----------------------------------------------------

constexpr std::size_t kSegment = BlockCarver::kSegmentBytes;

TEST_F(PoolTest, CarvingCutsSmallDeviceBlocksOutOfOneDriverAllocation) {
  CachingPool& pool = MakeCarvingPool();
  auto s = MakeStream();
  constexpr std::size_t kPerSegment = kSegment / 512;  // 64-byte requests: the 512-byte class
  std::set<std::uintptr_t> handles;
  std::vector<PoolBlock> blocks;
  for (std::size_t i = 0; i < kPerSegment; ++i) {
    blocks.push_back(Allocate(pool, s, 64));
    handles.insert(reinterpret_cast<std::uintptr_t>(blocks.back().handle));
  }
  EXPECT_EQ(Allocs(), 1);
  EXPECT_EQ(handles.size(), kPerSegment);
  // Every block lies in the one segment, a whole class apart.
  EXPECT_EQ(*handles.rbegin() - *handles.begin(), kSegment - 512);
  for (const PoolBlock& b : blocks) EXPECT_EQ(b.address, b.handle);
  blocks.push_back(Allocate(pool, s, 64));  // the segment is full: a second one
  EXPECT_EQ(Allocs(), 2);
  // Larger classes stay driver allocations of their own.
  blocks.push_back(Allocate(pool, s, 64 << 10));
  EXPECT_EQ(Allocs(), 3);
  const CarverStats carved = pool.carver_stats();
  EXPECT_EQ(carved.segments, 2u);
  EXPECT_EQ(carved.bytes_reserved, 2 * kSegment);
  EXPECT_EQ(carved.blocks_out, kPerSegment + 1);
  for (const PoolBlock& b : blocks) ASSERT_TRUE(pool.give_back(b, s, false, true));
}

TEST_F(PoolTest, HostPoolsAndPoolsThatDoNotCacheNeverCarve) {
  auto s = MakeStream();
  CachingPool& host = MakePool(ANYDEV_BK_MEMORY_HOST, true, kPoolNoTrim, CarveMode::kAddresses);
  CachingPool& uncached =
      MakePool(ANYDEV_BK_MEMORY_DEVICE, false, kPoolNoTrim, CarveMode::kAddresses);
  EXPECT_FALSE(host.carves());
  EXPECT_FALSE(uncached.carves());
  const PoolBlock a = Allocate(host, s, 64);
  const PoolBlock b = Allocate(host, s, 64);
  const PoolBlock c = Allocate(uncached, s, 64);
  EXPECT_EQ(Allocs(), 3);
  ASSERT_TRUE(host.give_back(a, s, false, true));
  ASSERT_TRUE(host.give_back(b, s, false, true));
  EXPECT_FALSE(uncached.give_back(c, s, false, true));
  EXPECT_EQ(MemoryFree(0, ANYDEV_BK_MEMORY_DEVICE, c.handle), ANYDEV_SUCCESS);
}

TEST_F(PoolTest, ASegmentIsFreedOnlyAfterItsLastBlockAndThatBlocksStreamWork) {
  CachingPool& pool = MakeCarvingPool();
  auto s = MakeStream();
  const PoolBlock a = Allocate(pool, s, 64);
  const PoolBlock b = Allocate(pool, s, 64);
  void* const segment = std::min(a.handle, b.handle);  // the first block starts the segment
  ASSERT_TRUE(pool.give_back(a, s, false, true));
  Enqueue(s);  // b is still used by the stream
  ASSERT_TRUE(pool.give_back(b, s, true, true, UseEpoch(s)));
  EXPECT_EQ(pool.release_cached(false), 1024u);
  // The reclaimer hands a back to the carver at once; b waits for s.
  for (int i = 0; i < 10000 && pool.carver_stats().blocks_out != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(Live(segment)) << "a segment was freed while a stream may still use a block of it";
  EXPECT_EQ(pool.carver_stats().blocks_out, 1u);
  Finish(s);
  WaitUntilFreed(segment);
  EXPECT_EQ(pool.carver_stats().segments, 0u);
  EXPECT_EQ(LiveAllocations(), 0u);
}

TEST_F(PoolTest, ABlockOfASegmentAllocatedOnAnotherStreamWaitsForTheAllocation) {
  CachingPool& pool = MakeCarvingPool();
  auto s = MakeStream();
  auto t = MakeStream();
  Enqueue(s);  // work ahead of the segment's allocation on s
  const PoolBlock on_s = Allocate(pool, s, 64);
  EXPECT_EQ(StreamWaits(), 0) << "the allocating stream needs no wait";
  const PoolBlock on_t = Allocate(pool, t, 64);
  EXPECT_EQ(StreamWaits(), 1) << "t used the segment before its allocation on s was done";
  Finish(s);
  const PoolBlock later = Allocate(pool, t, 64);
  EXPECT_EQ(StreamWaits(), 1) << "once the allocation is seen done, no stream waits any more";
  EXPECT_EQ(Allocs(), 1);
  for (const PoolBlock& b : {on_s, on_t, later}) ASSERT_TRUE(pool.give_back(b, s, false, true));
}

TEST_F(PoolTest, AFailedWaitForTheSegmentsAllocationFailsTheRequestAndChangesNothing) {
  CachingPool& pool = MakeCarvingPool();
  auto s = MakeStream();
  auto t = MakeStream();
  Enqueue(s);
  const PoolBlock on_s = Allocate(pool, s, 64);
  state_.fail_stream_wait = true;
  PoolBlock on_t;
  EXPECT_EQ(pool.allocate(t, 64, &on_t), ANYDEV_ERROR_DEVICE);
  state_.fail_stream_wait = false;
  EXPECT_NE(last_error_message().find("fake: wait failed"), std::string::npos)
      << last_error_message();
  EXPECT_EQ(pool.stats().bytes_in_use, 512u);
  EXPECT_EQ(pool.carver_stats().blocks_out, 1u) << "the block of the failed request is back";
  const PoolBlock retried = Allocate(pool, t, 64);
  EXPECT_NE(retried.handle, on_s.handle);
  for (const PoolBlock& b : {on_s, retried}) ASSERT_TRUE(pool.give_back(b, s, false, true));
}

// A carved block the pool cannot cache is taken back (never memory_free of
// a block inside a segment), once the owner stream has finished with it.
void PoolTest::UncachableCarvedBlockGoesBackToItsSegment(CarveMode mode) {
  CachingPool& pool = MakeCarvingPool(kPoolNoTrim, mode);
  auto s = MakeStream();
  const PoolBlock a = Allocate(pool, s, 64);
  Enqueue(s);
  state_.fail_event_record = true;
  EXPECT_TRUE(pool.give_back(a, s, true, true));
  state_.fail_event_record = false;
  {
    std::lock_guard lock(state_.mutex);
    EXPECT_EQ(state_.stream_syncs, 1);
    EXPECT_TRUE(state_.freed.size() == 1 && state_.freed.front() == a.handle)
        << "the segment, freed with its last block";
  }
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  EXPECT_EQ(pool.stats().bytes_cached, 0u);
}

TEST_F(PoolTest, ACarvedBlockThePoolCannotCacheGoesBackToItsSegmentAfterItsStream) {
  UncachableCarvedBlockGoesBackToItsSegment(CarveMode::kAddresses);
}

TEST_F(PoolTest, WhereNoSegmentFitsASmallBlockIsADriverAllocationOfItsOwn) {
  CachingPool& pool = MakeCarvingPool();
  auto s = MakeStream();
  state_.fail_next_allocs = 1;  // the segment
  const PoolBlock alone = Allocate(pool, s, 64);
  EXPECT_EQ(Allocs(), 2);
  EXPECT_EQ(pool.carver_stats().segments, 0u);
  {
    std::lock_guard lock(state_.mutex);
    EXPECT_EQ(state_.sizes[alone.handle], 512u) << "the block's own allocation";
  }
  // Cached and reused like any block, and freed with memory_free.
  ASSERT_TRUE(pool.give_back(alone, s, false, true));
  const PoolBlock again = Allocate(pool, s, 64);
  EXPECT_EQ(again.handle, alone.handle);
  ASSERT_TRUE(pool.give_back(again, s, false, true));
  pool.release_cached(true);
  EXPECT_FALSE(Live(alone.handle));
}

TEST_F(PoolTest, ASmallBlockOfItsOwnThePoolCannotCacheIsLeftToTheCallerWithoutAWait) {
  CachingPool& pool = MakeCarvingPool();
  auto s = MakeStream();
  state_.fail_next_allocs = 1;  // the segment
  const PoolBlock alone = Allocate(pool, s, 64);
  Enqueue(s);
  state_.fail_event_record = true;
  // Not carved: the caller frees it after the stream, as any uncached block.
  EXPECT_FALSE(pool.give_back(alone, s, true, true));
  state_.fail_event_record = false;
  {
    std::lock_guard lock(state_.mutex);
    EXPECT_EQ(state_.stream_syncs, 0) << "waited for a stream to free a block the carver lacks";
  }
  EXPECT_EQ(MemoryFree(0, ANYDEV_BK_MEMORY_DEVICE, alone.handle), ANYDEV_SUCCESS);
}

TEST_F(PoolTest, ASmallBlockThatFitsNowhereFailsTheRequestAndChangesNothing) {
  CachingPool& pool = MakeCarvingPool();
  auto s = MakeStream();
  state_.fail_next_allocs = 2;  // the segment, then the block alone
  PoolBlock block;
  EXPECT_EQ(pool.allocate(s, 64, &block), ANYDEV_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  EXPECT_EQ(pool.carver_stats().segments, 0u);
  EXPECT_EQ(LiveAllocations(), 0u);
  const PoolBlock a = Allocate(pool, s, 64);
  EXPECT_EQ(pool.carver_stats().segments, 1u);
  ASSERT_TRUE(pool.give_back(a, s, false, true));
}

// Threads that allocate and give back carved blocks while trims hand others
// to the reclaimer: every block handed out is distinct while held (by its
// address: where handles are objects, blocks share their segment's), and
// everything goes back to the driver at the end.
void PoolTest::CarveFromSeveralThreads(CarveMode mode) {
  CachingPool& pool = MakeCarvingPool(/*release_threshold=*/0, mode);
  constexpr int kThreads = 4;
  constexpr int kRounds = 2000;
  std::vector<std::shared_ptr<Stream>> streams;
  for (int i = 0; i < kThreads; ++i) streams.push_back(MakeStream());
  std::mutex held_mutex;
  std::set<void*> held;
  std::atomic<int> duplicates{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      std::mt19937 random(static_cast<unsigned>(i));
      std::vector<PoolBlock> mine;
      for (int round = 0; round < kRounds; ++round) {
        if (mine.size() < 64 && (mine.empty() || random() % 3 != 0)) {
          PoolBlock block;
          if (pool.allocate(streams[i], 1 + random() % 16384, &block) != ANYDEV_SUCCESS) continue;
          std::lock_guard lock(held_mutex);
          if (!held.insert(block.address).second) ++duplicates;
          mine.push_back(block);
        } else {
          const PoolBlock block = mine.back();
          mine.pop_back();
          {
            std::lock_guard lock(held_mutex);
            held.erase(block.address);
          }
          pool.give_back(block, streams[i], false, true);
        }
      }
      for (const PoolBlock& block : mine) {
        {
          std::lock_guard lock(held_mutex);
          held.erase(block.address);
        }
        pool.give_back(block, streams[i], false, true);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(duplicates.load(), 0) << "a block was handed out twice";
  pool.release_cached(true);
  drain_releases();
  EXPECT_EQ(pool.carver_stats().segments, 0u);
  EXPECT_EQ(pool.carver_stats().blocks_out, 0u);
  EXPECT_EQ(LiveAllocations(), 0u);
}

TEST_F(PoolTest, CarvingFromSeveralThreadsHandsOutEachBlockOnceAndReturnsEverything) {
  CarveFromSeveralThreads(CarveMode::kAddresses);
}

TEST_F(PoolTest, CarvingObjectsFromSeveralThreadsHandsOutEachBlockOnceAndReturnsEverything) {
  CarveFromSeveralThreads(CarveMode::kObjectOffsets);
}

// ---- blocks carved out of backend objects (ANYDEV_BK_FLAG_DEVICE_OBJECT_OFFSETS) ----

TEST_F(PoolTest, CarvedObjectBlocksShareTheirSegmentsHandleAndHaveUniqueAlignedTokens) {
  CachingPool& pool = MakeCarvingPool(kPoolNoTrim, CarveMode::kObjectOffsets);
  EXPECT_TRUE(pool.carves_objects());
  auto s = MakeStream();
  constexpr std::size_t kPerSegment = kSegment / 512;
  std::vector<PoolBlock> blocks;
  for (std::size_t i = 0; i <= kPerSegment; ++i) blocks.push_back(Allocate(pool, s, 64));
  EXPECT_EQ(Allocs(), 2) << "one segment full of blocks, then a second";
  std::set<void*> tokens;
  for (std::size_t i = 0; i < kPerSegment; ++i) {
    const PoolBlock& b = blocks[i];
    EXPECT_EQ(b.handle, blocks[0].handle) << "block " << i << ": the segment's object";
    EXPECT_NE(b.address, b.handle);
    // The token's low bits are the block's offset in the object.
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.address) & (kSegment - 1), i * 512) << i;
    tokens.insert(b.address);
  }
  const PoolBlock& next = blocks.back();
  EXPECT_NE(next.handle, blocks[0].handle);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(next.address) & (kSegment - 1), 0u);
  tokens.insert(next.address);
  EXPECT_EQ(tokens.size(), kPerSegment + 1) << "two blocks share a token";
  // No token lies inside a driver allocation (the fake's handles are heap
  // pointers): tokens are addresses the carver reserved.
  {
    std::lock_guard lock(state_.mutex);
    for (const auto& [handle, bytes] : state_.sizes) {
      const auto begin = reinterpret_cast<std::uintptr_t>(handle);
      for (void* token : tokens) {
        const auto at = reinterpret_cast<std::uintptr_t>(token);
        EXPECT_FALSE(at >= begin && at < begin + bytes) << "a token inside an allocation";
      }
    }
  }
  for (const PoolBlock& b : blocks) ASSERT_TRUE(pool.give_back(b, s, false, true));
  pool.release_cached(true);
  drain_releases();
  EXPECT_EQ(pool.carver_stats().segments, 0u);
  EXPECT_EQ(LiveAllocations(), 0u);
}

TEST_F(PoolTest, ACarvedObjectBlockIsReusedWithItsSegmentsHandleAndFreedWithItsLastBlock) {
  CachingPool& pool = MakeCarvingPool(kPoolNoTrim, CarveMode::kObjectOffsets);
  auto s = MakeStream();
  const PoolBlock a = Allocate(pool, s, 64);
  const PoolBlock b = Allocate(pool, s, 64);
  Enqueue(s);
  ASSERT_TRUE(pool.give_back(a, s, true, true, UseEpoch(s)));
  Finish(s);
  const PoolBlock again = Allocate(pool, s, 64);
  EXPECT_EQ(again.handle, a.handle);
  EXPECT_EQ(again.address, a.address) << "the cached block, by its token";
  ASSERT_TRUE(pool.give_back(again, s, false, true));
  ASSERT_TRUE(pool.give_back(b, s, false, true));
  EXPECT_EQ(pool.release_cached(true), 1024u);
  drain_releases();
  std::lock_guard lock(state_.mutex);
  EXPECT_TRUE(state_.freed.size() == 1 && state_.freed.front() == a.handle)
      << "memory_free is given the segment's handle once, never a token";
  EXPECT_TRUE(state_.live.empty());
}

TEST_F(PoolTest, ACarvedObjectBlockThePoolCannotCacheGoesBackToItsSegment) {
  UncachableCarvedBlockGoesBackToItsSegment(CarveMode::kObjectOffsets);
}

TEST_F(PoolTest, WhereNoSegmentFitsASmallObjectBlockIsItsOwnObjectAtOffsetZero) {
  CachingPool& pool = MakeCarvingPool(kPoolNoTrim, CarveMode::kObjectOffsets);
  auto s = MakeStream();
  state_.fail_next_allocs = 1;  // the segment
  const PoolBlock alone = Allocate(pool, s, 64);
  EXPECT_EQ(alone.address, alone.handle) << "not carved: the driver's handle as its address";
  ASSERT_TRUE(pool.give_back(alone, s, false, true));
  pool.release_cached(true);
  drain_releases();
  EXPECT_FALSE(Live(alone.handle));
  EXPECT_EQ(LiveAllocations(), 0u);
}

TEST_F(PoolTest, CarvedBlocksTrimmedFromTheCacheFreeTheirSegmentsAndNothingIsLeft) {
  CachingPool& pool = MakeCarvingPool(/*release_threshold=*/0);
  auto s = MakeStream();
  std::vector<PoolBlock> blocks;
  for (int i = 0; i < 3000; ++i) blocks.push_back(Allocate(pool, s, 1 + i % 4096));
  Enqueue(s);
  const std::uint16_t used = UseEpoch(s);
  for (const PoolBlock& b : blocks) ASSERT_TRUE(pool.give_back(b, s, true, true, used));
  Finish(s);
  pool.release_cached(true);
  drain_releases();
  EXPECT_EQ(pool.carver_stats().segments, 0u);
  EXPECT_EQ(pool.carver_stats().blocks_out, 0u);
  EXPECT_EQ(LiveAllocations(), 0u);
}

}  // namespace
}  // namespace anydev::core
