// SPDX-License-Identifier: Apache-2.0
// Size classes of the caching pools: every request is rounded up to one of a
// fixed set of block sizes, so that a freed block can serve any later request
// of the same class. Pure functions; thread-safe.
//
//   bytes <= 512 B            one class of 512 B
//   512 B < bytes <= 256 MiB  four classes per doubling: 2^k, 1.25 * 2^k,
//                             1.5 * 2^k, 1.75 * 2^k (at most 25% rounding)
//   bytes > 256 MiB           multiples of 2 MiB (exact class: a block is
//                             reused only for requests of the same 2 MiB
//                             multiple; less than 1% rounding)
#ifndef ANYDEV_SRC_MEMORY_POOL_SIZE_CLASSES_H_
#define ANYDEV_SRC_MEMORY_POOL_SIZE_CLASSES_H_

#include <cstddef>
#include <optional>

namespace anydev::core {

inline constexpr std::size_t kPoolMinimumBlock = 512;
inline constexpr std::size_t kPoolLargeThreshold = std::size_t{256} << 20;
inline constexpr std::size_t kPoolLargeGranularity = std::size_t{2} << 20;

// The class (block size) that serves a request of `bytes` (> 0); nullopt
// when rounding up would overflow size_t.
std::optional<std::size_t> pool_size_class(std::size_t bytes) noexcept;

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_POOL_SIZE_CLASSES_H_
