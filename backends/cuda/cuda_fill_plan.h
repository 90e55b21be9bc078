// SPDX-License-Identifier: Apache-2.0
// How a fill pattern becomes CUDA driver memsets, with no host round trip.
//
// A pattern is first reduced to its shortest period (a 16-byte pattern of
// four equal words is a 4-byte pattern). Periods of 1, 2 and 4 bytes are one
// cuMemsetD8/D16/D32Async. An 8- or 16-byte period is written as one strided
// cuMemsetD2D32Async per 4-byte word of the pattern: the word's offset in the
// pattern, pitch = the period, width = one 32-bit element, height = the
// number of repetitions. Every byte gets its exact bits. Pure; thread-safe.
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_FILL_PLAN_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_FILL_PLAN_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace anydev::cuda {

struct FillPass {
  enum class Kind { kD8, kD16, kD32, kD2D32 };
  Kind kind;
  std::uint32_t value;  // the byte, half-word or word to write
  std::size_t offset;   // bytes from the start of the destination
  std::size_t count;    // elements (D8/D16/D32) or rows (D2D32)
  std::size_t pitch;    // D2D32 only: bytes between rows
};

struct FillPlan {
  std::array<FillPass, 4> passes;
  int size = 0;
};

// `pattern_size` is 1, 2, 4, 8 or 16 and divides `bytes`. The passes need the
// destination aligned to min(pattern_size, 4) bytes, no more.
FillPlan plan_fill(const void* pattern, std::size_t pattern_size, std::size_t bytes);

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_FILL_PLAN_H_
