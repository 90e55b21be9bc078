// SPDX-License-Identifier: Apache-2.0
// The contract of anydev's wide fill kernel, anydev_fill_pattern16 (the
// CUDA source is backends/cuda/kernels/fill_pattern.cu), as the host side of
// any GPU backend sees it: which fills it takes, its four 64-bit arguments
// and its launch shape. API-neutral and pure; thread-safe.
//
// The kernel writes every byte at address a in [dst, dst + bytes) with byte
// (a mod 16) of the 16-byte little-endian value lo | hi << 64: the pattern is
// anchored to addresses, so the host rotates the fill's pattern by dst mod 16
// (wide_fill_args). An 8-byte period is its pattern twice.
#ifndef ANYDEV_BACKENDS_GPU_GPU_FILL_KERNEL_H_
#define ANYDEV_BACKENDS_GPU_GPU_FILL_KERNEL_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace anydev::gpu {

inline constexpr const char* kWideFillKernel = "anydev_fill_pattern16";
// Threads per block; the grid is capped at kWideFillBlocksPerUnit blocks per
// multiprocessor (compute unit) and strides over the rest.
inline constexpr unsigned kWideFillThreads = 256;
inline constexpr unsigned kWideFillBlocksPerUnit = 8;

// What a backend's fill_kernel did with a wide fill (gpu_transfer.h).
enum class KernelFill { kLaunched, kFailed, kUnavailable };

// The kernel's parameters, in the order and layout of its entry: four
// 64-bit values.
struct WideFillArgs {
  std::uint64_t dst = 0;
  std::uint64_t bytes = 0;
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
};

// The shortest period of a 1-, 2-, 4-, 8- or 16-byte pattern: a 16-byte
// pattern of two equal halves has the period of its half, and so on.
inline std::size_t fill_period(const void* pattern, std::size_t pattern_size) {
  const auto* p = static_cast<const unsigned char*>(pattern);
  std::size_t period = pattern_size;
  while (period > 1 && std::memcmp(p, p + period / 2, period / 2) == 0) period /= 2;
  return period;
}

// The arguments that fill `bytes` at `address` with `period` bytes of
// `pattern` repeated (period 8 or 16, dividing bytes).
inline WideFillArgs wide_fill_args(std::uintptr_t address, const void* pattern, std::size_t period,
                                   std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(pattern);
  unsigned char anchored[16];
  // The byte at an address a with a mod 16 == k is byte (k - address) mod
  // period of the pattern (the fill starts with the pattern's first byte).
  for (std::size_t k = 0; k < 16; ++k) {
    anchored[k] = p[(k + 16 - address % 16) % period];
  }
  WideFillArgs args;
  args.dst = address;
  args.bytes = bytes;
  std::memcpy(&args.lo, anchored, 8);
  std::memcpy(&args.hi, anchored + 8, 8);
  return args;
}

// Blocks of kWideFillThreads for `bytes`: enough for one 16-byte store per
// thread, at most kWideFillBlocksPerUnit per unit of `units`, at least one
// (whose first threads write the head and tail).
inline unsigned wide_fill_blocks(std::size_t bytes, unsigned units) {
  const std::size_t per_block = std::size_t{kWideFillThreads} * 16;
  const std::size_t wanted = (bytes + per_block - 1) / per_block;
  const std::size_t cap = std::size_t{units == 0 ? 1u : units} * kWideFillBlocksPerUnit;
  const std::size_t blocks = wanted < cap ? wanted : cap;
  return blocks == 0 ? 1u : static_cast<unsigned>(blocks);
}

// One launch of the kernel as launch calls and kernel nodes take it: a copy
// of the values (the APIs take pointers to non-const and copy them at the
// call), a pointer to each in parameter order, and the grid for a device of
// `units` multiprocessors. Not copyable: `params` points into the object.
struct WideFillLaunch {
  WideFillLaunch(const WideFillArgs& args, unsigned units)
      : values(args), blocks(wide_fill_blocks(static_cast<std::size_t>(args.bytes), units)) {}
  WideFillLaunch(const WideFillLaunch&) = delete;
  WideFillLaunch& operator=(const WideFillLaunch&) = delete;

  WideFillArgs values;
  void* params[4] = {&values.dst, &values.bytes, &values.lo, &values.hi};
  unsigned blocks;
};

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_FILL_KERNEL_H_
