// SPDX-License-Identifier: Apache-2.0
// The cpu backend's page mappings: anonymous mmap, optionally aligned beyond
// a page, populated and locked for pinned host memory. The two allocators
// build on it: cpu_memory.h (one mapping per large allocation) and
// cpu_small_blocks.h (small blocks carved out of shared segments).
//
// Pure functions over the OS plus two process-wide switches (atomics);
// thread-safe. Never throw.
#ifndef ANYDEV_BACKENDS_CPU_CPU_PAGES_H_
#define ANYDEV_BACKENDS_CPU_CPU_PAGES_H_

#include <cstddef>
#include <string>

namespace anydev::cpu {

// Which allocation policy a mapping follows.
//  - kPinnedHost (host_alloc): faulted in at allocation and locked with mlock
//    unless locking is disabled; when RLIMIT_MEMLOCK refuses, the memory
//    stays populated but pageable (logged once at debug level; the core
//    warns, see memory_is_locked).
//  - kDevice (device_alloc): a plain mapping, faulted in on first use.
enum class MemoryKind { kPinnedHost, kDevice };

// Whether pinned host memory is locked with mlock (default: true).
void set_lock_pinned_memory(bool lock);
bool lock_pinned_memory();

// The system's page size.
std::size_t page_bytes();

// A live mapping of map_pages.
struct PageMapping {
  void* address = nullptr;
  bool locked = false;  // mlock succeeded (pinned host memory only)
};

// Maps `length` bytes (a multiple of the page size, > 0) aligned to
// `alignment` (a power of two; at most a page means page-aligned) following
// `kind`'s policy. False with *error set to the errno of the failing mmap.
// `huge_pages`: ask for transparent huge pages (madvise) before any page is
// populated; for buffers of their own, not for segments that small blocks
// share (a huge page would make a whole segment resident for one block).
bool map_pages(MemoryKind kind, std::size_t length, std::size_t alignment, PageMapping* out,
               int* error, bool huge_pages = false);

// Unmaps what map_pages mapped; the errno of a failing munmap, else 0.
int unmap_pages(void* address, std::size_t length);

// "Cannot allocate memory (errno 12)".
std::string errno_text(int error);

// RLIMIT_MEMLOCK's soft limit: "65536 bytes", "unlimited" or "unknown".
std::string memlock_limit_text();

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_PAGES_H_
