// SPDX-License-Identifier: Apache-2.0
// The cpu streams' contention policy: how long a thread spins before it
// sleeps on a stream, and how a thread that finds a stream's lock held tries
// again (spinning, backing off, yielding, then blocking).
//
// Why spin at all: under contention a stream's lock is held only to move
// tasks and counters, or for one small copy, so it is free again well
// before a futex sleep and wake-up would have returned. Why back off: each
// try takes the lock's cache line from its holder, so an enqueuer that
// tries every few nanoseconds hands the stream from thread to thread after
// nearly every copy; waiting microseconds lets the holder run many tasks
// per hand-over. docs/performance.md ("cpu stream contention policy") keeps
// the measurements behind the constants.
//
// Ownership and thread-safety: the constants and functions here hold no
// state of their own except two thread_locals in cpu_contention.cpp, one
// ContentionLevel and one count of failed tries per thread, which only
// their thread touches. lock_spinning takes the caller's mutex exactly as
// unique_lock::lock() would; everything here may be called from any thread.
#ifndef ANYDEV_BACKENDS_CPU_CPU_CONTENTION_H_
#define ANYDEV_BACKENDS_CPU_CPU_CONTENTION_H_

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <mutex>

namespace anydev::cpu {

// Spinning before a futex sleep: a waiter in synchronize() or an event wait
// spins up to kWaitSpin, yielding the CPU after kSpinBeforeYield (a thread
// it waits for may need the core).
inline constexpr std::chrono::microseconds kWaitSpin{200};
inline constexpr std::chrono::microseconds kSpinBeforeYield{5};

// A contended drain or completion tries the lock kLockSpins times, spinning,
// then kLockYields times, yielding the CPU in between (the holder may have
// been preempted: more threads than cores), before it blocks. A thread that
// blocks makes every later unlock a futex wake-up system call while the
// lock stays contended, so blocking is the last resort.
inline constexpr int kLockSpins = 64;
inline constexpr int kLockYields = 16;

// A contended enqueue of a copy or fill instead waits between its tries,
// doubling the wait up to kEnqueueBackoffLongest, for kEnqueueBackoffTries
// tries (yielding the CPU inside a wait past kSpinBeforeYield), then yields
// and blocks as above. Each hand-over of the stream costs a few hundred
// nanoseconds (its cache lines move to the new holder's core), so the
// longer the turns, the less is lost.
//
// The first wait escalates per thread (ContentionLevel): a thread's first
// contended enqueue waits kEnqueueBackoff first, and each contended enqueue
// it wins doubles the first wait of its next one, up to
// kEnqueueBackoffLongest, as long as its contended enqueues come less than
// kContentionMemory apart. So a thread that meets a busy stream now and then
// waits microseconds, while threads that keep enqueueing on one stream
// settle into long turns. The price is a waiter's latency while another
// thread keeps the stream busy: up to kEnqueueBackoffLongest per try.
inline constexpr std::chrono::nanoseconds kEnqueueBackoff{4000};
inline constexpr std::chrono::nanoseconds kEnqueueBackoffLongest{64000};
inline constexpr std::chrono::microseconds kContentionMemory{1000};
inline constexpr int kEnqueueBackoffTries = 16;

// One thread's escalating first wait for contended enqueues (the rule
// above): each contended enqueue the thread wins doubles the first wait of
// its next one, up to kEnqueueBackoffLongest; a contended enqueue that
// begins more than kContentionMemory after the last win starts again at
// kEnqueueBackoff. One per thread (a thread_local in cpu_contention.cpp), so
// not thread-safe; the times are passed in, for tests.
class ContentionLevel {
 public:
  using Clock = std::chrono::steady_clock;
  // The first wait of a contended enqueue that begins at `now`.
  std::chrono::nanoseconds first_wait(Clock::time_point now);
  // A contended enqueue got the stream at `now`.
  void won(Clock::time_point now);

 private:
  std::chrono::nanoseconds first_wait_ = kEnqueueBackoff;
  Clock::time_point last_won_{};  // the epoch: long ago
};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or `limit` has passed; true when done() held. Yields the
// CPU after kSpinBeforeYield, so that a thread this one waits for (a split
// copy's helper) is not kept off a core by the spinning.
template <class Done>
bool spin_until(Done&& done, std::chrono::microseconds limit) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    const Clock::duration spent = Clock::now() - start;
    if (spent >= limit) return done();
    if (spent >= kSpinBeforeYield) sched_yield();
  }
}

// How a contended lock_spinning waits between its tries.
enum class LockWait {
  kSpin,     // a pause: the holder is about to release (completion, drains)
  kBackOff,  // microseconds: another thread's enqueue (kEnqueueBackoff)
};

// The contended part of lock_spinning, out of line: the first try has
// failed. Tries again after each wait (kLockSpins or kEnqueueBackoffTries
// waits, then kLockYields yields), then blocks. Instantiated for both
// LockWait values in cpu_contention.cpp.
template <LockWait kWait>
void lock_contended(std::unique_lock<std::mutex>& lock);

// Takes the lock behind `lock` (which must not own it), trying for a while
// before it blocks. The first try is the uncontended path: nothing else
// runs there.
template <LockWait kWait>
[[gnu::always_inline]] inline void lock_spinning(std::unique_lock<std::mutex>& lock) {
  std::mutex& mutex = *lock.mutex();
  if (mutex.try_lock()) [[likely]] {
    lock = std::unique_lock<std::mutex>(mutex, std::adopt_lock);
    return;
  }
  lock_contended<kWait>(lock);
}

// Tries for a lock through lock_spinning that found it held, by the calling
// thread, so far (tests: how often a contended enqueue tries).
std::uint64_t failed_lock_tries_on_this_thread();

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_CONTENTION_H_
