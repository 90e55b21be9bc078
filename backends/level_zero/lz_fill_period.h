// SPDX-License-Identifier: Apache-2.0
// The shortest period of a fill pattern, which is what a native fill needs to
// be given (a 16-byte pattern of four equal words is a 4-byte fill). Used by
// the stream's fills (lz_transfer.cpp) and by graphs (lz_graph.cpp).
// Stateless; thread-safe.
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_FILL_PERIOD_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_FILL_PERIOD_H_

#include <cstddef>
#include <cstring>

namespace anydev::level_zero {

// `size` is a power of two; the answer is the smallest power of two whose
// repetition gives the pattern.
inline std::size_t shortest_period(const unsigned char* p, std::size_t size) {
  std::size_t period = size;
  while (period > 1 && std::memcmp(p, p + period / 2, period / 2) == 0) period /= 2;
  return period;
}

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_FILL_PERIOD_H_
