// Page-aligned memory for the cpu backend, one anonymous mmap per allocation.
//
//  - Pinned host memory (host_alloc): faulted in at allocation
//    (MAP_POPULATE) and locked with mlock unless locking is disabled; when
//    the lock limit (RLIMIT_MEMLOCK) refuses, the memory stays populated but
//    unlocked, and this is logged once at debug level.
//  - Device memory (device_alloc): a plain mapping, faulted in on first use.
//
// A registry maps each live allocation's address to its length and kind, so
// that a free needs only the address and an unknown or mismatched address is
// an error instead of undefined behaviour. Allocations of at least
// kAvailabilityCheckBytes that exceed the host's available memory are
// refused with OUT_OF_MEMORY rather than left to the OOM killer.
//
// Thread-safe. Fork: the registry's lock is held across fork() (pthread_atfork
// handlers installed by install_fork_handlers), so a child can allocate.
#ifndef ANYDEV_BACKENDS_CPU_CPU_MEMORY_H_
#define ANYDEV_BACKENDS_CPU_CPU_MEMORY_H_

#include <cstddef>

#include "anydev/backend.h"

namespace anydev::cpu {

// Which of the two allocation policies above a mapping follows.
enum class MemoryKind { kPinnedHost, kDevice };

inline constexpr std::size_t kAvailabilityCheckBytes = std::size_t{16} << 20;

// Whether pinned host memory is locked with mlock (default: true).
void set_lock_pinned_memory(bool lock);
bool lock_pinned_memory();

// Idempotent; call before the first allocation.
void install_fork_handlers();

// Maps at least `bytes` (> 0) bytes, page-aligned, into *out. On failure sets
// the core's error (OUT_OF_MEMORY naming the byte count and errno text) and
// returns its status; *out is untouched.
anydev_status_t allocate_pages(MemoryKind kind, std::size_t bytes, void** out);

// Unmaps an allocation made by allocate_pages with the same kind.
// INVALID_ARGUMENT (nothing freed) for an unknown address or another kind.
anydev_status_t free_pages(MemoryKind kind, void* address);

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_MEMORY_H_
