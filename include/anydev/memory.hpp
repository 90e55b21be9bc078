// SPDX-License-Identifier: Apache-2.0
// anydev C++ API: what a context reports about memory (MemoryKind,
// MemoryInfo, PoolStats, HostMemoryLocks, RecordMemory) and whether the
// caching pools are on. Part of anydev.hpp (include that); usable alone.
// Plain value types: nothing owned; pool_enabled() and record_memory() are
// safe from any thread.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_MEMORY_HPP_
#define ANYDEV_MEMORY_HPP_

#include <cstddef>
#include <cstdint>

#include "anydev/anydev.h"

namespace anydev {

// Free and total memory of a device, in bytes.
struct MemoryInfo {
  std::size_t free;
  std::size_t total;
};

// Where a buffer's memory is: pinned host memory (HostBuffer) or device
// memory (DeviceBuffer).
enum class MemoryKind {
  host = ANYDEV_MEMORY_HOST,
  device = ANYDEV_MEMORY_DEVICE,
};

// Statistics of one caching pool (docs/memory-pools.md). Sizes are block
// sizes (requests rounded up to a size class); allocation_count ==
// cache_hits + cache_misses.
struct PoolStats {
  std::size_t bytes_in_use;
  std::size_t bytes_cached;
  std::size_t peak_bytes_in_use;
  std::uint64_t allocation_count;
  std::uint64_t cache_hits;
  std::uint64_t cache_misses;
  std::size_t bytes_waiting_for_release;     // freed, waiting for their stream work
  std::uint64_t blocks_waiting_for_release;  // (bounded: docs/memory-pools.md)
  std::size_t bytes_in_segments;             // device memory small blocks are carved from
};

// Host memory held from one device (live host buffers, taken pointers and
// the host pool's cache) and how much of it is page-locked.
struct HostMemoryLocks {
  std::size_t locked_bytes;
  std::size_t total_bytes;
};

// Host memory anydev holds for its per-buffer records, process-wide
// (anydev_record_memory).
struct RecordMemory {
  std::size_t bytes_in_use;
  std::size_t bytes_reserved;
};

inline RecordMemory record_memory() noexcept {
  anydev_record_memory_t out{};
  out.struct_size = sizeof(out);
  // Cannot fail with a correct struct_size.
  (void)anydev_record_memory(&out);
  return RecordMemory{out.bytes_in_use, out.bytes_reserved};
}

// False when ANYDEV_POOL=0 turned the caching pools off.
inline bool pool_enabled() noexcept { return anydev_pool_enabled() != 0; }

}  // namespace anydev

#endif  // ANYDEV_MEMORY_HPP_
