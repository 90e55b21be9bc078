// SPDX-License-Identifier: Apache-2.0
// Concurrency stress: many threads x streams x events x buffers, with every
// handle released on a thread other than the one that made it, and streams
// waiting for events recorded by other threads. Results are checked, and the
// suite runs under ThreadSanitizer in CI (.ci/run), which reports any data
// race or lock-order inversion in the core or the cpu backend.
//
// The sizes are small so that the TSan run stays within seconds;
// ANYDEV_STRESS_ROUNDS scales the rounds for a longer local run.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "anydev/anydev.h"
#include "anydev/anydev.hpp"

namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::DeviceEvent;
using anydev::HostBuffer;

// Unset: 40. A malformed value (not a decimal from 1 to 1000000, empty
// included) is refused like every ANYDEV_* variable (docs/environment.md):
// the binary exits with the reason instead of running another count.
int Rounds() {
  const char* value = std::getenv("ANYDEV_STRESS_ROUNDS");
  if (value == nullptr) return 40;
  long rounds = 0;
  bool ok = *value != '\0';
  for (const char* c = value; ok && *c != '\0'; ++c) {
    ok = *c >= '0' && *c <= '9' && rounds <= 1000000;
    rounds = rounds * 10 + (*c - '0');
  }
  if (!ok || rounds < 1 || rounds > 1000000) {
    std::fprintf(stderr, "ANYDEV_STRESS_ROUNDS is not a decimal number from 1 to 1000000\n");
    std::exit(2);
  }
  return static_cast<int>(rounds);
}

// A queue of things to drop on the releasing threads.
class Graveyard {
 public:
  void Bury(std::function<void()> release) {
    {
      std::lock_guard lock(mutex_);
      items_.push_back(std::move(release));
    }
    ready_.notify_one();
  }
  // Runs releases until Close() and the queue is empty.
  void Dig() {
    std::unique_lock lock(mutex_);
    while (true) {
      ready_.wait(lock, [&] { return closed_ || !items_.empty(); });
      if (items_.empty()) return;
      std::function<void()> release = std::move(items_.front());
      items_.pop_front();
      lock.unlock();
      release();
      lock.lock();
    }
  }
  void Close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> items_;
  bool closed_ = false;
};

// Events recorded by some threads, waited for by others.
class EventBoard {
 public:
  void Post(DeviceEvent event) {
    std::lock_guard lock(mutex_);
    if (events_.size() >= 16) events_.erase(events_.begin());
    events_.push_back(std::move(event));
  }
  void Clear() {
    std::lock_guard lock(mutex_);
    events_.clear();
  }
  std::optional<DeviceEvent> Pick(std::mt19937& random) {
    std::lock_guard lock(mutex_);
    if (events_.empty()) return std::nullopt;
    return events_[random() % events_.size()];
  }

 private:
  std::mutex mutex_;
  std::vector<DeviceEvent> events_;
};

class Failures {
 public:
  void Add(std::string what) {
    std::lock_guard lock(mutex_);
    if (failures_.size() < 20) failures_.push_back(std::move(what));
  }
  void Report() {
    std::lock_guard lock(mutex_);
    for (const std::string& f : failures_) ADD_FAILURE() << f;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> failures_;
};

constexpr std::size_t kWords = 2048;

void Worker(const DeviceContext& shared, int thread, int rounds, EventBoard& board,
            Graveyard& graveyard, Failures& failures) {
  std::mt19937 random(static_cast<std::uint32_t>(thread) * 7919u + 1);
  try {
    for (int round = 0; round < rounds; ++round) {
      // A new stream every few rounds; the old one is dropped elsewhere.
      const DeviceContext ctx = shared.with_stream(shared.create_stream());
      const std::uint32_t value =
          static_cast<std::uint32_t>(thread) << 20 | static_cast<std::uint32_t>(round);
      HostBuffer<std::uint32_t> source = ctx.enqueue_create_host_buffer<std::uint32_t>(kWords);
      DeviceBuffer<std::uint32_t> device = ctx.enqueue_create_buffer<std::uint32_t>(kWords);
      HostBuffer<std::uint32_t> result = ctx.enqueue_create_host_buffer<std::uint32_t>(kWords);
      // A view of the second half, used on the shared context's stream:
      // cross-stream ordering through the allocation.
      DeviceBuffer<std::uint32_t> half =
          device.create_sub_buffer<std::uint32_t>(kWords / 2, kWords / 2);
      source.enqueue_fill(value);
      source.enqueue_copy_to(device);
      shared.enqueue_memset(half, value + 1);
      DeviceEvent event = ctx.create_event();
      ctx.stream().record_event(event);
      board.Post(event);
      if (auto other = board.Pick(random)) {
        ctx.stream().enqueue_wait_for(*other);
        (void)other->is_complete();
        graveyard.Bury([e = std::move(*other)]() mutable { e = DeviceEvent(); });
      }
      device.enqueue_copy_to(result);
      ctx.synchronize();
      for (std::size_t k = 0; k < kWords; ++k) {
        const std::uint32_t expected = k < kWords / 2 ? value : value + 1;
        if (result[k] != expected) {
          failures.Add("thread " + std::to_string(thread) + " round " + std::to_string(round) +
                       ": element " + std::to_string(k) + " is " + std::to_string(result[k]) +
                       ", expected " + std::to_string(expected));
          break;
        }
      }
      // More work still queued when the handles go to other threads.
      device.enqueue_fill(value + 2);
      // Raw C handles: an extra reference taken here, released over there.
      anydev_buffer_t raw = device.handle();
      if (anydev_buffer_retain(raw) != ANYDEV_SUCCESS) failures.Add("retain failed");
      graveyard.Bury([raw, &failures] {
        if (anydev_buffer_release(raw) != ANYDEV_SUCCESS) failures.Add("release failed");
      });
      graveyard.Bury([s = std::move(source), d = std::move(device), r = std::move(result),
                      h = std::move(half), e = std::move(event), c = ctx]() mutable {
        s = HostBuffer<std::uint32_t>();
        h = DeviceBuffer<std::uint32_t>();
        d = DeviceBuffer<std::uint32_t>();
        r = HostBuffer<std::uint32_t>();
        e = DeviceEvent();
        c = DeviceContext::adopt(nullptr);
      });
    }
  } catch (const std::exception& e) {
    failures.Add("thread " + std::to_string(thread) + " threw: " + e.what());
  }
}

TEST(Stress, ThreadsStreamsEventsBuffersReleasedElsewhere) {
  const DeviceContext shared(0, "cpu");
  constexpr int kThreads = 8;
  const int rounds = Rounds();
  EventBoard board;
  Graveyard graveyard;
  Failures failures;
  std::vector<std::thread> releasers;
  for (int i = 0; i < 2; ++i) releasers.emplace_back([&] { graveyard.Dig(); });
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] { Worker(shared, t, rounds, board, graveyard, failures); });
  }
  for (std::thread& w : workers) w.join();
  graveyard.Close();
  for (std::thread& r : releasers) r.join();
  board.Clear();
  shared.synchronize();
  failures.Report();
}

// Contexts created and dropped on many threads at once while another thread
// keeps using a shared one: the registry and the reclaimer under contention.
TEST(Stress, ContextsComeAndGoWhileOthersWork) {
  const DeviceContext shared(0, "cpu");
  std::atomic<bool> stop{false};
  Failures failures;
  std::thread user([&] {
    try {
      const DeviceBuffer<std::uint8_t> buffer = shared.enqueue_create_buffer<std::uint8_t>(4096);
      while (!stop.load()) {
        buffer.enqueue_fill(std::uint8_t{1});
        shared.synchronize();
      }
    } catch (const std::exception& e) {
      failures.Add(std::string("user threw: ") + e.what());
    }
  });
  std::vector<std::thread> makers;
  for (int t = 0; t < 6; ++t) {
    makers.emplace_back([&] {
      try {
        for (int i = 0; i < Rounds(); ++i) {
          const DeviceContext ctx(0, "cpu");
          const HostBuffer<std::uint16_t> host = ctx.enqueue_create_host_buffer<std::uint16_t>(64);
          host.enqueue_fill(std::uint16_t{9});
        }
      } catch (const std::exception& e) {
        failures.Add(std::string("maker threw: ") + e.what());
      }
    });
  }
  for (std::thread& m : makers) m.join();
  stop.store(true);
  user.join();
  failures.Report();
}

}  // namespace
