// SPDX-License-Identifier: Apache-2.0
// Small blocks carved out of large segments, so that a small host or device
// buffer costs its size (rounded up to a power of two) instead of a page and
// a memory mapping of its own.
//
// Requests of at most kLargestSmallBlock bytes are rounded up to a power of
// two of at least kSmallestBlock bytes (the block's class) and served from a
// 2 MiB segment of that class and kind: one mapping, aligned to its size,
// populated and locked as a whole for pinned host memory (cpu_pages.h). A
// block is aligned to its class (64 B to 16 KiB), so to at least 64 bytes.
// A segment is unmapped when its last block is freed, except one empty
// segment kept per class and kind so that a lone allocate/free loop does
// not map and unmap 2 MiB each time.
//
// Bookkeeping lives outside the segments (a user's write past its block
// cannot corrupt it): per segment a bitmap of live blocks, found from any
// address in O(1) through a hash map of segment bases; segments with free
// blocks form a list per class and kind. A double free or a foreign address
// inside a segment is detected.
//
// Thread-safe: one mutex, held only for bookkeeping (mapping and unmapping
// happen outside it). Fork: before_fork/after_fork hold the mutex across
// fork() so that a child can allocate. Leaked on purpose at exit.
#ifndef ANYDEV_BACKENDS_CPU_CPU_SMALL_BLOCKS_H_
#define ANYDEV_BACKENDS_CPU_CPU_SMALL_BLOCKS_H_

#include <cstddef>

#include "anydev/backend.h"
#include "cpu_pages.h"

namespace anydev::cpu {

inline constexpr std::size_t kSmallestBlock = 64;
inline constexpr std::size_t kLargestSmallBlock = std::size_t{16} << 10;
inline constexpr std::size_t kSegmentBytes = std::size_t{2} << 20;

// Whether a request of `bytes` is served by the small-block allocator.
inline bool is_small_block(std::size_t bytes) { return bytes <= kLargestSmallBlock; }

// The block size serving `bytes` (0 < bytes <= kLargestSmallBlock).
std::size_t small_block_class(std::size_t bytes);

// Outcome of a small-block free or query.
enum class SmallBlockLookup {
  kFound,         // the address is a live block of the given kind
  kNotSmall,      // the address lies in no segment: ask the large allocator
  kWrongKind,     // a live block of the other kind (*actual tells which)
  kNotLiveBlock,  // inside a segment, but no live block starts there
};

// A block of small_block_class(bytes) bytes into *out; on failure sets the
// core's error (OUT_OF_MEMORY naming the operation, bytes and errno text).
anydev_status_t allocate_small_block(MemoryKind kind, std::size_t bytes, void** out);

// Frees a block; changes nothing unless kFound. Never throws.
SmallBlockLookup free_small_block(MemoryKind kind, void* address, MemoryKind* actual) noexcept;

// Whether the live block's segment is locked (*locked), when kFound.
SmallBlockLookup small_block_locked(MemoryKind kind, void* address, bool* locked,
                                    MemoryKind* actual) noexcept;

// Live figures, for tests and reports.
struct SmallBlockStats {
  std::size_t segments = 0;     // mapped segments, empty ones included
  std::size_t live_blocks = 0;  // blocks allocated and not freed
};
SmallBlockStats small_block_stats() noexcept;

void lock_small_blocks_before_fork() noexcept;
void unlock_small_blocks_after_fork() noexcept;

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_SMALL_BLOCKS_H_
