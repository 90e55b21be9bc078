// SPDX-License-Identifier: Apache-2.0
#include "support/small_mutex.h"

namespace anydev::core {

void SmallMutex::lock_contended() noexcept {
  // Held for a few hundred nanoseconds at most in the common case (a
  // handle's fields, an allocation's ordering): spin a little first.
  for (int i = 0; i < 100; ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    std::uint32_t expected = 0;
    if (state_.load(std::memory_order_relaxed) == 0 &&
        state_.compare_exchange_weak(expected, 1, std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
      return;
    }
  }
  // Mark it contended; whoever unlocks then wakes one sleeper. Taking it
  // with state 2 is conservative: at worst one wake-up too many.
  while (state_.exchange(2, std::memory_order_acquire) != 0) {
    state_.wait(2, std::memory_order_relaxed);
  }
}

}  // namespace anydev::core
