// SPDX-License-Identifier: Apache-2.0
// Pattern fill: writes a 1, 2, 4, 8 or 16-byte pattern repeatedly over a
// range of host-addressable memory, with the pattern's exact bits.
//
// Cached fills: byte-uniform patterns go to memset; on x86-64, 2, 4 and
// 8-byte words (and 16-byte patterns of two equal words) to rep stos,
// memset's own fast-string stores. Other 16-byte patterns: aligned 64-byte
// (AVX-512), 32-byte (AVX2, chosen at run time) or 16-byte vector stores of
// a 64-byte block holding the pattern at the right phase. Streaming fills
// (the caller asks for them: a fill past the last-level cache, or past four
// times it for patterns with a fast-string form where the CPU's fast-string
// stores keep up with streaming ones, cpu_streaming.h and
// cpu_store_probe.h), of every pattern width: non-temporal stores of that
// block, where reading the lines
// first would only waste bandwidth (64-byte AVX-512 stores where the CPU has
// them, one per cache line). Every width streams past the threshold: memset
// and rep stos read each line first and fall behind on uncached memory.
//
// Pure functions of their arguments: thread-safe; the caller owns the memory.
#ifndef ANYDEV_BACKENDS_CPU_CPU_FILL_H_
#define ANYDEV_BACKENDS_CPU_CPU_FILL_H_

#include <cstddef>

namespace anydev::cpu {

// Copies a pattern of a valid size into `out` (16 bytes of room) with one
// fixed-size move: a memcpy call for a variable size of at most 16 bytes
// costs more than the copy.
inline void copy_pattern(unsigned char* out, const void* pattern, std::size_t pattern_size) {
  switch (pattern_size) {
    case 1:
      __builtin_memcpy(out, pattern, 1);
      break;
    case 2:
      __builtin_memcpy(out, pattern, 2);
      break;
    case 4:
      __builtin_memcpy(out, pattern, 4);
      break;
    case 8:
      __builtin_memcpy(out, pattern, 8);
      break;
    default:
      __builtin_memcpy(out, pattern, 16);
      break;
  }
}

// How fill_pattern writes a pattern (the decision is exposed so that tests
// can pin it without timing anything).
enum class FillStores {
  memset,           // byte-uniform pattern, cached
  rep_stos,         // 2, 4 or 8-byte word, cached (x86-64)
  vector,           // the 64-byte block, cached vector stores
  vector_streaming  // the 64-byte block, non-temporal stores (every width)
};

// The stores fill_pattern uses for this pattern and `streaming`. Pure.
FillStores fill_stores(const void* pattern, std::size_t pattern_size, bool streaming);

// True when the cached stores of this pattern are fast-string ones (memset,
// rep stos), which stay cached to a larger size (cpu_streaming.h). Pure.
inline bool has_string_form(const void* pattern, std::size_t pattern_size) {
  const FillStores cached = fill_stores(pattern, pattern_size, false);
  return cached == FillStores::memset || cached == FillStores::rep_stos;
}

// Writes `pattern` (pattern_size bytes, a valid size) over `bytes` bytes at
// `dst`, starting with the pattern's first byte at dst. `bytes` must be a
// multiple of pattern_size. `dst` needs no particular alignment. With
// `streaming`, the vector body uses non-temporal stores.
void fill_pattern(void* dst, const void* pattern, std::size_t pattern_size, std::size_t bytes,
                  bool streaming = false);

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_FILL_H_
