// SPDX-License-Identifier: Apache-2.0
#include "memory/pool/size_classes.h"

#include <bit>
#include <limits>

namespace anydev::core {

std::optional<std::size_t> pool_size_class(std::size_t bytes) noexcept {
  if (bytes <= kPoolMinimumBlock) return kPoolMinimumBlock;
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  if (bytes > kPoolLargeThreshold) {
    const std::size_t remainder = bytes % kPoolLargeGranularity;
    if (remainder == 0) return bytes;
    const std::size_t up = kPoolLargeGranularity - remainder;
    if (bytes > kMax - up) return std::nullopt;
    return bytes + up;
  }
  // 2^k <= bytes - 1 < 2^(k+1); the classes in (2^k, 2^(k+1)] are steps of
  // 2^k / 4. bytes > 512, so k >= 9 and the step is a whole number.
  const unsigned k = static_cast<unsigned>(std::bit_width(bytes - 1)) - 1;
  const std::size_t step = std::size_t{1} << (k - 2);
  return (bytes + step - 1) / step * step;
}

}  // namespace anydev::core
