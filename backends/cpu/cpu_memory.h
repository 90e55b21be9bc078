// SPDX-License-Identifier: Apache-2.0
// Memory for the cpu backend's host_alloc and device_alloc.
//
//  - Small allocations (at most kLargestSmallBlock bytes) are blocks carved
//    out of shared 2 MiB segments (cpu_small_blocks.h): no mapping and no
//    page of their own, aligned to their size rounded up to a power of two
//    (at least 64 bytes).
//  - Larger ones get one page-aligned anonymous mmap each (cpu_pages.h).
// Pinned host memory is faulted in at allocation and locked with mlock
// unless locking is disabled or RLIMIT_MEMLOCK refuses (then it stays
// populated but pageable; memory_locked tells which).
//
// A registry maps each large allocation's address to its length, kind and
// lock state, so that a free needs only the address and an unknown or
// mismatched address is an error instead of undefined behaviour. Allocations
// of at least kAvailabilityCheckBytes that exceed the host's available
// memory are refused with OUT_OF_MEMORY rather than left to the OOM killer.
//
// Thread-safe. Fork: the registries' locks are held across fork()
// (pthread_atfork handlers installed by install_fork_handlers), so a child
// can allocate.
#ifndef ANYDEV_BACKENDS_CPU_CPU_MEMORY_H_
#define ANYDEV_BACKENDS_CPU_CPU_MEMORY_H_

#include <cstddef>

#include "anydev/backend.h"
#include "cpu_pages.h"

namespace anydev::cpu {

inline constexpr std::size_t kAvailabilityCheckBytes = std::size_t{16} << 20;

// Idempotent; call before the first allocation.
void install_fork_handlers();

// Allocates at least `bytes` (> 0) bytes into *out, aligned as above. On
// failure sets the core's error (OUT_OF_MEMORY naming the byte count and
// errno text) and returns its status; *out is untouched.
anydev_status_t allocate_pages(MemoryKind kind, std::size_t bytes, void** out);

// Frees an allocation made by allocate_pages with the same kind. Never
// throws. INVALID_ARGUMENT (nothing freed) for an unknown address or another
// kind.
anydev_status_t free_pages(MemoryKind kind, void* address);

// *locked = whether the live allocation at `address` of `kind` is locked
// (always false for device memory). INVALID_ARGUMENT for an unknown address
// or another kind.
anydev_status_t memory_locked(MemoryKind kind, void* address, bool* locked);

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_MEMORY_H_
