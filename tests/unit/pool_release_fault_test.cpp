// SPDX-License-Identifier: Apache-2.0
// Release paths under an allocation failure: giving a
// block back to its pool, trimming, releasing the cache and freeing an
// unpooled allocation must neither throw nor abort when operator new fails
// (the memory-mapping limit). This executable replaces the global operator
// new: while `fail_allocations` is set on a thread, every allocation on that
// thread fails. A separate executable, so no other test runs under it.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <vector>

#include "anydev/kit/table.h"
#include "api/objects.h"
#include "fake_backend_table.h"
#include "memory/allocation.h"
#include "memory/pool/caching_pool.h"
#include "memory/pool/pooled_allocation.h"
#include "memory/stream_ordered_release.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
thread_local bool fail_allocations = false;
// Set: the fake's event_record starts failing this thread's allocations (a
// point right after a driver allocation that the carver records on).
thread_local bool fail_after_record = false;
}  // namespace

void* operator new(std::size_t bytes) {
  if (fail_allocations) throw std::bad_alloc();
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t bytes) { return ::operator new(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  if (fail_allocations) return nullptr;
  return std::malloc(bytes == 0 ? 1 : bytes);
}
void* operator new[](std::size_t bytes, const std::nothrow_t& tag) noexcept {
  return ::operator new(bytes, tag);
}
// operator delete is replaced too, so that sanitizers that replace both see
// malloc paired with free. GCC cannot tell that the pair matches.
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace anydev::core {
namespace {

// ---- a fake backend that allocates nothing with operator new ----------------------
// Streams finish their work at once; events are complete; memory is counted.
std::mutex fake_mutex;
std::set<void*>* live_blocks = nullptr;  // made outside the failing sections
std::atomic<std::uintptr_t> next_address{0x10000};
std::atomic<int> live_events{0};

anydev_status_t Alloc(std::size_t bytes, void** handle, void** address) {
  void* p = reinterpret_cast<void*>(next_address.fetch_add(bytes + 4096));
  std::lock_guard lock(fake_mutex);
  live_blocks->insert(p);
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
  std::lock_guard lock(fake_mutex);
  live_blocks->erase(handle);
  return ANYDEV_SUCCESS;
}
anydev_status_t EventCreate(int, anydev_bk_event_t* out) {
  ++live_events;
  *out = reinterpret_cast<anydev_bk_event_t>(std::malloc(1));
  return ANYDEV_SUCCESS;
}
anydev_status_t EventDestroy(anydev_bk_event_t event) {
  --live_events;
  std::free(event);
  return ANYDEV_SUCCESS;
}
anydev_status_t EventRecord(anydev_bk_event_t, anydev_bk_stream_t) {
  if (fail_after_record) fail_allocations = true;
  return ANYDEV_SUCCESS;
}
anydev_status_t EventSynchronize(anydev_bk_event_t) { return ANYDEV_SUCCESS; }
anydev_status_t EventQuery(anydev_bk_event_t, int* complete) {
  *complete = 1;
  return ANYDEV_SUCCESS;
}
anydev_status_t StreamWaitEvent(anydev_bk_stream_t, anydev_bk_event_t) { return ANYDEV_SUCCESS; }
anydev_status_t StreamSynchronize(anydev_bk_stream_t) { return ANYDEV_SUCCESS; }

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

// Every allocation on this thread fails while one lives.
struct FailAllocations {
  FailAllocations() { fail_allocations = true; }
  ~FailAllocations() { fail_allocations = false; }
  FailAllocations(const FailAllocations&) = delete;
  FailAllocations& operator=(const FailAllocations&) = delete;
};

class PoolReleaseFaultTest : public ::testing::Test {
 protected:
  PoolReleaseFaultTest() {
    live_blocks = &blocks_;
    backend_.name = "fake";
    backend_.available = true;
    backend_.table = &kTable;
    stream_ = MakeStream(1);
    other_ = MakeStream(2);
    // Start the reclaimer thread before any allocation fails: its start
    // under a failing operator new (or the thread limit) is
    // stream_ordered_release.cpp's matter, not the pool's.
    anydev_bk_event_t event = nullptr;
    EventCreate(0, &event);
    run_after_event(&backend_, event, [] {});
    drain_releases();
  }
  ~PoolReleaseFaultTest() override {
    drain_releases();
    live_blocks = nullptr;
  }
  std::shared_ptr<Stream> MakeStream(std::uintptr_t id) {
    return std::make_shared<Stream>(
        Stream{&backend_, 0, reinterpret_cast<anydev_bk_stream_t>(id), backend_.table});
  }
  std::size_t LiveBlocks() {
    std::lock_guard lock(fake_mutex);
    return blocks_.size();
  }
  // A buffer's allocation from `pool`, last used by another stream (so its
  // release orders the owner after it and records an event).
  std::shared_ptr<Allocation> Pooled(CachingPool& pool, anydev_bk_memory_kind_t kind,
                                     std::size_t bytes) {
    PoolBlock block;
    EXPECT_EQ(pool.allocate(stream_, bytes, &block), ANYDEV_SUCCESS);
    auto allocation = make_pooled_allocation(&backend_, 0, kind, block, bytes, stream_);
    allocation->last_stream = other_;
    return allocation;
  }

  std::set<void*> blocks_;
  Backend backend_;
  std::shared_ptr<Stream> stream_;
  std::shared_ptr<Stream> other_;
};

TEST_F(PoolReleaseFaultTest, GivingBlocksBackWithoutMemoryNeverThrows) {
  // Threshold 0: each give-back also trims and hands blocks to the reclaimer.
  auto pool = std::make_unique<CachingPool>(&backend_, 0, ANYDEV_BK_MEMORY_HOST, true, 0);
  std::vector<std::shared_ptr<Allocation>> buffers;
  for (int i = 0; i < 64; ++i) {
    buffers.push_back(Pooled(*pool, ANYDEV_BK_MEMORY_HOST, 4096u << (i % 12)));
  }
  {
    FailAllocations fail;
    for (auto& buffer : buffers) EXPECT_NO_THROW(buffer.reset());
    EXPECT_NO_THROW(pool->release_cached(false));
  }
  drain_releases();
  EXPECT_EQ(LiveBlocks(), 0u) << "every block freed, by the reclaimer or the caller";
  EXPECT_EQ(pool->stats().bytes_in_use, 0u);
  EXPECT_EQ(pool->stats().bytes_cached, 0u);
  pool.reset();
  EXPECT_EQ(live_events.load(), 0);
}

TEST_F(PoolReleaseFaultTest, TrimmingAndSettingTheThresholdWithoutMemoryNeverThrow) {
  auto pool = std::make_unique<CachingPool>(&backend_, 0, ANYDEV_BK_MEMORY_DEVICE, true);
  std::vector<std::shared_ptr<Allocation>> buffers;
  for (int i = 0; i < 64; ++i) {
    buffers.push_back(Pooled(*pool, ANYDEV_BK_MEMORY_DEVICE, 1024u << (i % 10)));
  }
  // A block in use has no pool node; the first give-back makes a
  // chunk of 64, so the others need no memory to be cached.
  buffers.front().reset();
  {
    FailAllocations fail;
    for (auto& buffer : buffers) EXPECT_NO_THROW(buffer.reset());
    EXPECT_EQ(pool->stats().bytes_in_use, 0u);
    EXPECT_NO_THROW(pool->set_release_threshold(0));
  }
  drain_releases();
  EXPECT_EQ(LiveBlocks(), 1u) << "only the newest block stays cached";
  pool.reset();
  EXPECT_EQ(LiveBlocks(), 0u);
}

TEST_F(PoolReleaseFaultTest, GivingBackWithoutMemoryForANodeFreesTheBlock) {
  // No spare node and none can be made: the block is freed, not cached, and
  // leaves the accounting (blocks in use hold no node).
  auto pool = std::make_unique<CachingPool>(&backend_, 0, ANYDEV_BK_MEMORY_DEVICE, true);
  auto buffer = Pooled(*pool, ANYDEV_BK_MEMORY_DEVICE, 4096);
  {
    FailAllocations fail;
    EXPECT_NO_THROW(buffer.reset());
  }
  drain_releases();
  EXPECT_EQ(LiveBlocks(), 0u);
  EXPECT_EQ(pool->stats().bytes_in_use, 0u);
  EXPECT_EQ(pool->stats().bytes_cached, 0u);
  pool.reset();
  EXPECT_EQ(live_events.load(), 0);
}

TEST_F(PoolReleaseFaultTest, UnpooledReleaseWithoutMemoryNeverThrows) {
  // ANYDEV_POOL=0's path: the free goes to the reclaimer, or is done here.
  auto pool = std::make_unique<CachingPool>(&backend_, 0, ANYDEV_BK_MEMORY_HOST, false);
  std::vector<std::shared_ptr<Allocation>> buffers;
  for (int i = 0; i < 64; ++i) buffers.push_back(Pooled(*pool, ANYDEV_BK_MEMORY_HOST, 4096));
  {
    FailAllocations fail;
    for (auto& buffer : buffers) EXPECT_NO_THROW(buffer.reset());
  }
  drain_releases();
  EXPECT_EQ(LiveBlocks(), 0u);
  EXPECT_EQ(live_events.load(), 0);
}

// A segment the driver made, whose bookkeeping then cannot be allocated, is
// freed again: the request fails with the allocation's exception (the API
// turns it into out_of_memory) and the driver holds nothing.
TEST_F(PoolReleaseFaultTest, ASegmentWithoutMemoryForItsBookkeepingIsFreedAgain) {
  CachingPool pool(&backend_, 0, ANYDEV_BK_MEMORY_DEVICE, true, kPoolNoTrim, nullptr,
                   CarveMode::kAddresses);
  PoolBlock block;
  fail_after_record = true;
  EXPECT_THROW(pool.allocate(stream_, 64, &block), std::bad_alloc);
  fail_after_record = false;
  fail_allocations = false;
  EXPECT_EQ(LiveBlocks(), 0u) << "the segment's driver memory was lost";
  EXPECT_EQ(pool.carver_stats().segments, 0u);
  ASSERT_EQ(pool.allocate(stream_, 64, &block), ANYDEV_SUCCESS);
  ASSERT_TRUE(pool.give_back(block, stream_, false, true));
}

}  // namespace
}  // namespace anydev::core
