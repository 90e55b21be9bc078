// Fork detection. Every handle records the fork generation it was created
// in; a child process of fork() has a newer generation, so using a handle
// created before the fork fails with INVALID_STATE instead of hanging on
// driver state or worker threads that do not exist in the child.
// Thread-safe (an atomic counter bumped by a pthread_atfork child handler).
#ifndef ANYDEV_SRC_FORK_GUARD_H_
#define ANYDEV_SRC_FORK_GUARD_H_

#include <cstdint>

namespace anydev::core {

// The current process's generation: 0 in the original process, +1 per fork.
std::uint64_t fork_generation() noexcept;

}  // namespace anydev::core

#endif  // ANYDEV_SRC_FORK_GUARD_H_
