// SPDX-License-Identifier: Apache-2.0
// How a fill pattern becomes a device's memsets (and copies), with no host
// round trip. API-neutral: any backend whose device offers 8-, 16- and 32-bit
// memsets, optionally a strided 32-bit memset, and in-order device-to-device
// copies can run a plan (CUDA, HIP, Level Zero).
//
// A pattern is first reduced to its shortest period (a 16-byte pattern of
// four equal words is a 4-byte pattern). Periods of 1, 2 and 4 bytes are one
// 8-, 16- or 32-bit memset. An 8- or 16-byte period first gets a head written
// by memsets, either
//   - strided: one strided 32-bit memset per 4-byte word of the pattern (the
//     word's offset in the pattern, pitch = the period, width = one 32-bit
//     element, height = the head's repetitions), when the device has one
//     (cuMemsetD2D32Async): the head is the first kStridedFillHeadBytes
//     bytes, or the whole fill when it is no longer; or
//   - one 32-bit memset of one element per word: the head is one period;
// then copies within the destination double what is written (head, 2 heads,
// 4, ...; the last copy takes what is left), each copy reading only bytes
// already written and ordered after them on the stream: log2(bytes / head)
// copies, rounded up. Either way every byte gets its exact bits. Pure;
// thread-safe.
#ifndef ANYDEV_BACKENDS_GPU_GPU_FILL_PLAN_H_
#define ANYDEV_BACKENDS_GPU_GPU_FILL_PLAN_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace anydev::gpu {

struct FillPass {
  enum class Kind { kD8, kD16, kD32, kD2D32 };
  Kind kind;
  std::uint32_t value;  // the byte, half-word or word to write
  std::size_t offset;   // bytes from the start of the destination
  std::size_t count;    // elements (D8/D16/D32) or rows (D2D32)
  std::size_t pitch;    // D2D32 only: bytes between rows
};

// The most bytes of an 8- or 16-byte fill that strided memsets write.
// A strided memset writes one 4-byte element per row, hundreds of times
// slower than a 32-bit memset of the same bytes (docs/hardware-results.md).
// Past the head, device-to-device copies move whole blocks.
// A multiple of every period (8 and 16).
inline constexpr std::size_t kStridedFillHeadBytes = 4096;
static_assert(kStridedFillHeadBytes % 16 == 0, "the head must hold whole periods");

struct FillPlan {
  std::array<FillPass, 4> passes;
  int size = 0;
  // When not 0: after the passes, which wrote the first `replicate_from`
  // bytes (the head), copies double them up to the whole fill (next_replica).
  std::size_t replicate_from = 0;
};

// `pattern_size` is 1, 2, 4, 8 or 16 and divides `bytes`. The passes need the
// destination aligned to min(pattern_size, 4) bytes, no more. `strided` says
// whether the device has a strided 32-bit memset (FillPass::Kind::kD2D32).
FillPlan plan_fill(const void* pattern, std::size_t pattern_size, std::size_t bytes, bool strided);

// One copy of a replicated fill: `bytes` bytes from the destination's start
// to `offset` bytes into it.
struct FillCopy {
  std::size_t offset;
  std::size_t bytes;
};

// The copy that follows `written` bytes already filled out of `total`
// (written >= the period, < total): it doubles them, or ends the fill.
inline FillCopy next_replica(std::size_t written, std::size_t total) {
  const std::size_t left = total - written;
  return {written, left < written ? left : written};
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_FILL_PLAN_H_
