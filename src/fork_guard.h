// Fork detection. Every handle records the fork generation it was created
// in; a child process of fork() has a newer generation, so using a handle
// created before the fork fails with INVALID_STATE instead of hanging on
// driver state or worker threads that do not exist in the child.
// Thread-safe (an atomic counter bumped by a pthread_atfork child handler,
// registered when the library is loaded).
#ifndef ANYDEV_SRC_FORK_GUARD_H_
#define ANYDEV_SRC_FORK_GUARD_H_

#include <atomic>
#include <cstdint>

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

}  // namespace anydev::core

#endif  // ANYDEV_SRC_FORK_GUARD_H_
