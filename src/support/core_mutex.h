// SPDX-License-Identifier: Apache-2.0
// CoreMutex: the mutex of every core lock except the per-buffer ones
// (SmallMutex). A std::mutex that counts itself as held for log delivery
// (log_hold.h), so that no log callback runs while it is held. Lockable
// (std::lock_guard, std::unique_lock, std::scoped_lock); waits on a
// std::condition_variable go through wait()/wait_for() below: a thread that
// holds only this lock delivers its queued messages (unlocked) before it
// sleeps, so a thread that lives in a wait loop still delivers them.
// Thread-safe; owns nothing.
#ifndef ANYDEV_SRC_SUPPORT_CORE_MUTEX_H_
#define ANYDEV_SRC_SUPPORT_CORE_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "support/log_hold.h"

namespace anydev::core {

class CoreMutex {
 public:
  CoreMutex() = default;
  CoreMutex(const CoreMutex&) = delete;
  CoreMutex& operator=(const CoreMutex&) = delete;

  void lock() {
    mutex_.lock();
    note_core_lock_taken();
  }
  bool try_lock() {
    if (!mutex_.try_lock()) return false;
    note_core_lock_taken();
    return true;
  }
  void unlock() {
    mutex_.unlock();
    note_core_lock_released();
  }

  // The underlying mutex, for condition-variable waits (below).
  std::mutex& native() noexcept { return mutex_; }

 private:
  std::mutex mutex_;
};

// Before a wait: a thread whose only core lock is `lock` lets it go for a
// moment to deliver its queued messages. A waiter rechecks its condition
// after this, as after any wake-up.
inline void deliver_held_messages_before_wait(std::unique_lock<CoreMutex>& lock) {
  if (t_log_hold.queued != 0 && t_log_hold.locks_held == 1) [[unlikely]] {
    lock.unlock();
    lock.lock();
  }
}

// cv.wait(lock, pred) for a lock on a CoreMutex.
template <class Predicate>
void wait(std::condition_variable& cv, std::unique_lock<CoreMutex>& lock, Predicate pred) {
  deliver_held_messages_before_wait(lock);
  std::unique_lock<std::mutex> native(lock.mutex()->native(), std::adopt_lock);
  cv.wait(native, pred);
  native.release();
}

template <class Rep, class Period>
void wait_for(std::condition_variable& cv, std::unique_lock<CoreMutex>& lock,
              const std::chrono::duration<Rep, Period>& timeout) {
  deliver_held_messages_before_wait(lock);
  std::unique_lock<std::mutex> native(lock.mutex()->native(), std::adopt_lock);
  cv.wait_for(native, timeout);
  native.release();
}

template <class Rep, class Period, class Predicate>
bool wait_for(std::condition_variable& cv, std::unique_lock<CoreMutex>& lock,
              const std::chrono::duration<Rep, Period>& timeout, Predicate pred) {
  deliver_held_messages_before_wait(lock);
  std::unique_lock<std::mutex> native(lock.mutex()->native(), std::adopt_lock);
  const bool result = cv.wait_for(native, timeout, pred);
  native.release();
  return result;
}

template <class Clock, class Duration, class Predicate>
bool wait_until(std::condition_variable& cv, std::unique_lock<CoreMutex>& lock,
                const std::chrono::time_point<Clock, Duration>& deadline, Predicate pred) {
  deliver_held_messages_before_wait(lock);
  std::unique_lock<std::mutex> native(lock.mutex()->native(), std::adopt_lock);
  const bool result = cv.wait_until(native, deadline, pred);
  native.release();
  return result;
}

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_CORE_MUTEX_H_
