// SPDX-License-Identifier: Apache-2.0
// Calls from many threads: each with its own stream, several sharing one
// context, and buffers released on a thread other than the one that made
// them.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::HostBuffer;

class ThreadTest : public DeviceTest {};

// Failures seen on worker threads, reported on the test's thread.
class Failures {
 public:
  void Add(std::string what) {
    const std::lock_guard<std::mutex> lock(mutex_);
    failures_.push_back(std::move(what));
  }
  void Report() const {
    for (const std::string& f : failures_) ADD_FAILURE() << f;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> failures_;
};

// Fill, copy host -> device -> host, synchronize, check; `iterations` times.
void CopyFillLoop(const DeviceContext& ctx, int thread, int iterations, Failures& failures) {
  try {
    constexpr std::size_t kWords = 16384;
    const HostBuffer<std::uint32_t> source = ctx.enqueue_create_host_buffer<std::uint32_t>(kWords);
    const DeviceBuffer<std::uint32_t> device = ctx.enqueue_create_buffer<std::uint32_t>(kWords);
    const HostBuffer<std::uint32_t> result = ctx.enqueue_create_host_buffer<std::uint32_t>(kWords);
    for (int i = 0; i < iterations; ++i) {
      const std::uint32_t value =
          static_cast<std::uint32_t>(thread) << 16 | static_cast<std::uint32_t>(i);
      source.enqueue_fill(value);
      source.enqueue_copy_to(device);
      device.enqueue_copy_to(result);
      ctx.synchronize();
      for (std::size_t k = 0; k < kWords; ++k) {
        if (result[k] != value) {
          failures.Add("thread " + std::to_string(thread) + " iteration " + std::to_string(i) +
                       ": element " + std::to_string(k) + " is " + std::to_string(result[k]) +
                       ", expected " + std::to_string(value));
          return;
        }
      }
    }
  } catch (const std::exception& e) {
    failures.Add("thread " + std::to_string(thread) + " threw: " + e.what());
  }
}

TEST_P(ThreadTest, EightThreadsEachWithItsOwnStream) {
  Failures failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const DeviceContext own = ctx().with_stream(ctx().create_stream());
      CopyFillLoop(own, t, 20, failures);
    });
  }
  for (std::thread& t : threads) t.join();
  failures.Report();
}

TEST_P(ThreadTest, FourThreadsShareOneContext) {
  Failures failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] { CopyFillLoop(ctx(), t, 20, failures); });
  }
  for (std::thread& t : threads) t.join();
  failures.Report();
}

TEST_P(ThreadTest, ContextsCreatedAndDroppedConcurrently) {
  Failures failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        try {
          const DeviceContext own(GetParam().device, api());
          CopyFillLoop(own, t, 2, failures);
        } catch (const std::exception& e) {
          failures.Add("thread " + std::to_string(t) + ": " + e.what());
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  failures.Report();
}

// Two threads copy between the same two buffers in opposite directions, each
// on its own stream: an enqueue holds both buffers' handles (and their
// memory's ordering state) while it checks and enqueues, so a lock order
// that depended on the argument order would deadlock here.
TEST_P(ThreadTest, CopiesBothWaysBetweenTwoBuffersOnTwoThreads) {
  constexpr std::size_t kWords = 4096;
  constexpr std::uint32_t kValue = 0x5EED5EEDu;
  const DeviceBuffer<std::uint32_t> a = ctx().enqueue_create_buffer<std::uint32_t>(kWords);
  const DeviceBuffer<std::uint32_t> b = ctx().enqueue_create_buffer<std::uint32_t>(kWords);
  a.enqueue_fill(kValue);
  b.enqueue_fill(kValue);
  ctx().synchronize();
  Failures failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      try {
        const DeviceContext own = ctx().with_stream(ctx().create_stream());
        for (int i = 0; i < 5000; ++i) {
          if (t == 0) {
            own.enqueue_copy(b, a);
          } else {
            own.enqueue_copy(a, b);
          }
        }
        own.synchronize();
      } catch (const std::exception& e) {
        failures.Add("thread " + std::to_string(t) + " threw: " + e.what());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  failures.Report();
  ctx().synchronize();
  EXPECT_TRUE(AllEqual(Contents(a), kValue));
  EXPECT_TRUE(AllEqual(Contents(b), kValue));
}

// The last handles to buffers with queued copies are dropped on another
// thread; the copies still complete with the right bytes.
TEST_P(ThreadTest, BuffersReleasedOnAnotherThread) {
  constexpr std::size_t kWords = 1 << 18;
  constexpr int kParts = 8;
  const HostBuffer<std::uint32_t> result =
      ctx().enqueue_create_host_buffer<std::uint32_t>(kWords * kParts);
  std::vector<HostBuffer<std::uint32_t>> sources;
  std::vector<DeviceBuffer<std::uint32_t>> devices;
  for (int p = 0; p < kParts; ++p) {
    sources.push_back(ctx().enqueue_create_host_buffer<std::uint32_t>(kWords));
    devices.push_back(ctx().enqueue_create_buffer<std::uint32_t>(kWords));
    sources.back().enqueue_fill(0xA0000000u + static_cast<std::uint32_t>(p));
    sources.back().enqueue_copy_to(devices.back());
    devices.back().enqueue_copy_to(result.create_sub_buffer<std::uint32_t>(p * kWords, kWords));
  }
  std::thread releaser([s = std::move(sources), d = std::move(devices)]() mutable {
    s.clear();
    d.clear();
  });
  releaser.join();
  ctx().synchronize();
  for (int p = 0; p < kParts; ++p) {
    EXPECT_TRUE(
        AllEqual(std::span<const std::uint32_t>(result.as_span().subspan(p * kWords, kWords)),
                 0xA0000000u + static_cast<std::uint32_t>(p)))
        << "part " << p;
  }
}

// Buffers made on worker threads and released on the test's thread.
TEST_P(ThreadTest, BuffersMadeOnOtherThreadsReleasedHere) {
  constexpr int kThreads = 4;
  std::vector<DeviceBuffer<std::uint64_t>> made(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      made[t] = ctx().enqueue_create_buffer<std::uint64_t>(4096);
      made[t].enqueue_fill(0x1111111111111111ull * static_cast<std::uint64_t>(t + 1));
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(
        AllEqual(Contents(made[t]), 0x1111111111111111ull * static_cast<std::uint64_t>(t + 1)));
  }
  made.clear();
  ctx().synchronize();
}

ANYDEV_CONFORMANCE_SUITE(ThreadTest);

}  // namespace
}  // namespace anydev_conformance
