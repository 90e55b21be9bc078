// SPDX-License-Identifier: Apache-2.0
// Fork detection. Every handle records the fork generation it was created
// in; a child process of fork() has a newer generation, so using a handle
// created before the fork fails with INVALID_STATE instead of hanging on
// driver state or worker threads that do not exist in the child.
// Thread-safe (an atomic counter bumped by a pthread_atfork child handler,
// registered when the library is loaded).
//
// Also ProcessObject, the fork-safe replacement for a lazily initialised
// function-local static (see below).
#ifndef ANYDEV_SRC_SUPPORT_FORK_GUARD_H_
#define ANYDEV_SRC_SUPPORT_FORK_GUARD_H_

#include <atomic>
#include <cstdint>
#include <utility>

namespace anydev::core {

namespace detail {
// The counter behind fork_generation(); only fork_guard.cpp writes it.
extern std::atomic<std::uint64_t> g_fork_generation;
}  // namespace detail

// The current process's generation: 0 in the original process, +1 per fork.
// Inline: every C entry point asks, so it is one load, not a call.
inline std::uint64_t fork_generation() noexcept {
  return detail::g_fork_generation.load(std::memory_order_relaxed);
}

// A process-wide object made on first use, never destroyed, without a C++
// static guard. A function-local `static T* x = new T;` takes a lock (the
// guard) while it runs its initializer: a fork() at that moment leaves the
// guard locked in the child, whose first use then blocks forever. A
// ProcessObject takes no lock: racing threads each make an object, the first
// one published wins and the others are deleted; a forked child whose parent
// was inside make() simply makes its own. So make() must have no side effect
// beyond the object it returns; a side effect that must happen once (a
// pthread_atfork or atexit registration) goes in on_made, which runs once, on
// the thread whose object was published, after publication.
//
// Declare it `static ProcessObject<T> x;` (constant-initialized: no guard) or
// at namespace scope. Thread-safe and fork-safe. The object it holds lives
// for the process.
template <typename T>
class ProcessObject {
 public:
  constexpr ProcessObject() noexcept = default;
  ProcessObject(const ProcessObject&) = delete;
  ProcessObject& operator=(const ProcessObject&) = delete;

  // The object; make() returns a new T* on first use.
  template <typename Make>
  T& get(Make&& make) {
    return get(std::forward<Make>(make), [](T&) {});
  }

  template <typename Make, typename OnMade>
  T& get(Make&& make, OnMade&& on_made) {
    T* object = object_.load(std::memory_order_acquire);
    if (object != nullptr) return *object;
    T* fresh = make();
    if (object_.compare_exchange_strong(object, fresh, std::memory_order_acq_rel,
                                        std::memory_order_acquire)) {
      on_made(*fresh);
      return *fresh;
    }
    delete fresh;  // another thread's object was published first
    return *object;
  }

 private:
  std::atomic<T*> object_{nullptr};
};

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_FORK_GUARD_H_
