// SPDX-License-Identifier: Apache-2.0
// Which host memory is really page-locked (pinned), per device of each
// backend. The core notes every host block it gets from a backend's
// host_alloc (asking the backend's optional memory_is_locked; without it the
// block counts as locked) and every host block it hands back to
// memory_free, so anydev_context_host_memory_locks can say how much of the
// process's host memory (live buffers and pool caches) is locked. The first
// pageable block of a backend is logged, once per process per backend: a
// warning naming RLIMIT_MEMLOCK and how to raise it, or, on a device that is
// the host's own processor (where it does not matter), an info line.
//
// Thread-safe: one mutex over a hash map of live host blocks (keyed by
// backend, device and handle) and the per-device totals. note_host_free
// never throws and never blocks on a backend. Fork: the mutex is held across
// fork() (pthread_atfork). Leaked on purpose at exit.
#ifndef ANYDEV_SRC_MEMORY_HOST_MEMORY_LOCKS_H_
#define ANYDEV_SRC_MEMORY_HOST_MEMORY_LOCKS_H_

#include <cstddef>

#include "anydev/backend.h"

namespace anydev::core {

struct Backend;

// After host_alloc gave `handle` of `bytes` bytes on `device`. Never throws
// (a block that cannot be recorded is left out of the totals).
void note_host_alloc(const Backend* backend, int device, void* handle, std::size_t bytes) noexcept;

// Before memory_free of `handle` (of `kind`; device memory is ignored).
void note_host_free(const Backend* backend, int device, anydev_bk_memory_kind_t kind,
                    void* handle) noexcept;

// Host memory noted on the device and still live, and its locked part.
struct HostMemoryLocks {
  std::size_t locked_bytes = 0;
  std::size_t total_bytes = 0;
};
HostMemoryLocks host_memory_locks(const Backend* backend, int device) noexcept;

// Asks the backend whether host memory `handle` is locked (1) or not (0);
// locked when the backend has no memory_is_locked. Sets the last error on
// failure.
anydev_status_t backend_memory_is_locked(const Backend* backend, int device, void* handle,
                                         int* locked);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_HOST_MEMORY_LOCKS_H_
