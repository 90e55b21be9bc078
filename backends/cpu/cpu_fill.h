// Pattern fill: writes a 1, 2, 4, 8 or 16-byte pattern repeatedly over a
// range of host-addressable memory, with the pattern's exact bits.
//
// Pure function of its arguments: thread-safe; the caller owns the memory.
#ifndef ANYDEV_BACKENDS_CPU_CPU_FILL_H_
#define ANYDEV_BACKENDS_CPU_CPU_FILL_H_

#include <cstddef>

namespace anydev::cpu {

// True for the pattern sizes the backend ABI allows (1, 2, 4, 8, 16).
bool is_valid_fill_pattern_size(std::size_t pattern_size);

// Writes `pattern` (pattern_size bytes, a valid size) over `bytes` bytes at
// `dst`, starting with the pattern's first byte at dst. `bytes` must be a
// multiple of pattern_size. `dst` needs no particular alignment.
void fill_pattern(void* dst, const void* pattern, std::size_t pattern_size, std::size_t bytes);

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_FILL_H_
