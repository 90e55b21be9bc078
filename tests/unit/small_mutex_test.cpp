// SPDX-License-Identifier: Apache-2.0
// SmallMutex (src/support/small_mutex.h), the 4-byte lock of buffer handles and
// allocation records: mutual exclusion under contention (sleepers woken),
// try_lock, and the record sizes it keeps small (host memory per live
// buffer handle).
#include "support/small_mutex.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

#include "api/objects.h"

namespace anydev::core {
namespace {

TEST(SmallMutex, ContendedIncrementsAreNeverLost) {
  SmallMutex mutex;
  long counter = 0;  // guarded by mutex; TSan checks the guard
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard hold(mutex);
        ++counter;
        if (i % 1000 == 0) std::this_thread::yield();  // holders get preempted: sleepers
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter, long{kThreads} * kRounds);
}

TEST(SmallMutex, TryLockFailsWhileHeldAndSucceedsAfter) {
  SmallMutex mutex;
  ASSERT_TRUE(mutex.try_lock());
  bool other = true;
  std::thread([&] { other = mutex.try_lock(); }).join();
  EXPECT_FALSE(other);
  mutex.unlock();
  std::thread([&] {
    other = mutex.try_lock();
    if (other) mutex.unlock();
  }).join();
  EXPECT_TRUE(other);
}

// Goal: at most 256 bytes of heap per live buffer handle, where two
// std::mutex alone would take 80. The records with one per live buffer stay
// small.
TEST(SmallMutex, PerBufferRecordsStaySmall) {
  EXPECT_EQ(sizeof(SmallMutex), 4u);
  EXPECT_LE(sizeof(anydev_buffer_s), 88u);
  EXPECT_LE(sizeof(Allocation), 96u);
}

}  // namespace
}  // namespace anydev::core
