// SPDX-License-Identifier: Apache-2.0
// SmallMutex: a mutex in four bytes, for the records there is one of per
// live buffer (the handle, anydev_buffer_s, and its Allocation), where
// std::mutex's 40 bytes would be about a sixth of the goal of 256 bytes of
// host memory per live buffer handle (docs/reliability.md).
//
// States: 0 free, 1 locked, 2 locked and a thread may sleep on it. lock()
// takes a free mutex with one compare-exchange; under contention it spins
// briefly, then sleeps on the word (std::atomic wait: a futex on Linux) and
// unlock() wakes one sleeper when the state says there may be one. Not
// recursive, not fair; meets the Lockable requirements (std::lock_guard,
// std::unique_lock). Never throws.
//
// Counted as a core lock while held (log_hold.h): no log callback runs
// while a thread holds one. Thread-safe, of course; it owns nothing.
#ifndef ANYDEV_SRC_SUPPORT_SMALL_MUTEX_H_
#define ANYDEV_SRC_SUPPORT_SMALL_MUTEX_H_

#include <atomic>
#include <cstdint>

#include "support/log_hold.h"

namespace anydev::core {

class SmallMutex {
 public:
  SmallMutex() = default;
  SmallMutex(const SmallMutex&) = delete;
  SmallMutex& operator=(const SmallMutex&) = delete;

  void lock() noexcept {
    std::uint32_t expected = 0;
    if (state_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                       std::memory_order_relaxed)) [[likely]] {
      note_core_lock_taken();
      return;
    }
    lock_contended();
    note_core_lock_taken();
  }
  bool try_lock() noexcept {
    std::uint32_t expected = 0;
    if (!state_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
      return false;
    }
    note_core_lock_taken();
    return true;
  }
  void unlock() noexcept {
    if (state_.exchange(0, std::memory_order_release) == 2) [[unlikely]]
      state_.notify_one();
    note_core_lock_released();
  }

 private:
  void lock_contended() noexcept;

  std::atomic<std::uint32_t> state_{0};
};

static_assert(sizeof(SmallMutex) == 4);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_SMALL_MUTEX_H_
