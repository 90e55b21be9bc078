// SPDX-License-Identifier: Apache-2.0
#include "cpu_contention.h"

#include <algorithm>

namespace anydev::cpu {
namespace {

// See failed_lock_tries_on_this_thread().
thread_local std::uint64_t t_failed_lock_tries = 0;

// Waits `wait` without touching memory that another thread writes, yielding
// the CPU once it has waited kSpinBeforeYield (the holder may need this
// core: more threads than cores).
[[gnu::cold, gnu::noinline]] void back_off(std::chrono::nanoseconds wait) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  for (;;) {
    for (int i = 0; i < 8; ++i) cpu_relax();
    const Clock::duration spent = Clock::now() - start;
    if (spent >= wait) return;
    if (spent >= kSpinBeforeYield) sched_yield();
  }
}

// The calling thread's escalating first wait for contended enqueues:
// touched only when an enqueue finds the stream's lock held, never on the
// uncontended path.
thread_local ContentionLevel t_contention;

[[gnu::cold]] std::chrono::nanoseconds first_contended_wait() {
  return t_contention.first_wait(std::chrono::steady_clock::now());
}

[[gnu::cold]] void won_contended() { t_contention.won(std::chrono::steady_clock::now()); }

}  // namespace

std::chrono::nanoseconds ContentionLevel::first_wait(Clock::time_point now) {
  if (now - last_won_ > kContentionMemory) first_wait_ = kEnqueueBackoff;
  return first_wait_;
}

void ContentionLevel::won(Clock::time_point now) {
  last_won_ = now;
  first_wait_ = std::min(first_wait_ * 2, kEnqueueBackoffLongest);
}

template <LockWait kWait>
[[gnu::cold, gnu::noinline]] void lock_contended(std::unique_lock<std::mutex>& lock) {
  std::mutex& mutex = *lock.mutex();
  constexpr int kTries = kWait == LockWait::kBackOff ? kEnqueueBackoffTries : kLockSpins;
  std::chrono::nanoseconds wait{0};  // kBackOff: the last wait
  for (int i = 0; i < kTries + kLockYields; ++i) {
    ++t_failed_lock_tries;  // the try before this wait
    if (i < kTries) {
      if constexpr (kWait == LockWait::kBackOff) {
        // The first wait is the thread's level, then each doubles, at most
        // the longest.
        wait = i == 0 ? first_contended_wait() : std::min(wait * 2, kEnqueueBackoffLongest);
        back_off(wait);
      } else {
        cpu_relax();
      }
    } else {
      sched_yield();
    }
    if (mutex.try_lock()) {
      lock = std::unique_lock<std::mutex>(mutex, std::adopt_lock);
      if constexpr (kWait == LockWait::kBackOff) won_contended();
      return;
    }
  }
  lock.lock();
  if constexpr (kWait == LockWait::kBackOff) won_contended();
}

template void lock_contended<LockWait::kSpin>(std::unique_lock<std::mutex>& lock);
template void lock_contended<LockWait::kBackOff>(std::unique_lock<std::mutex>& lock);

std::uint64_t failed_lock_tries_on_this_thread() { return t_failed_lock_tries; }

}  // namespace anydev::cpu
