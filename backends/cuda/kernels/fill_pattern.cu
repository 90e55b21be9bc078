// SPDX-License-Identifier: Apache-2.0
// anydev's fill kernel for patterns whose period is 8 or 16 bytes (the ones
// no single cuMemsetD*Async writes). The source of fill_pattern.ptx, which
// is committed and embedded in the cuda plugin: scripts/make-fill-ptx
// regenerates it; the build never runs nvcc.
//
// Contract (the host side is cuda_fill_kernel.cpp; the CUDA emulator
// performs the same contract by the entry's name):
//   anydev_fill_pattern16(dst, bytes, lo, hi) writes every byte at address a
//   in [dst, dst + bytes) with byte (a mod 16) of the 16-byte little-endian
//   value lo | hi << 64. The pattern is anchored to addresses, not to dst:
//   the host rotates it so that dst gets the pattern's first byte.
// One launch per fill: a grid-stride loop of aligned 16-byte stores over the
// 16-byte-aligned body, and byte stores for the head and tail (under 16
// bytes each) by the grid's first threads.

extern "C" __global__ void anydev_fill_pattern16(unsigned char* dst, unsigned long long bytes,
                                                 unsigned long long lo, unsigned long long hi) {
  const unsigned long long start = reinterpret_cast<unsigned long long>(dst);
  const unsigned long long end = start + bytes;
  unsigned long long body_begin = (start + 15ull) & ~15ull;
  if (body_begin > end) body_begin = end;
  unsigned long long body_end = end & ~15ull;
  if (body_end < body_begin) body_end = body_begin;

  const unsigned long long thread =
      static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;

  // Head [start, body_begin) and tail [body_end, end): under 16 bytes each.
  if (thread < 16ull) {
    const unsigned long long head = start + thread;
    const unsigned long long tail = body_end + thread;
    if (head < body_begin) {
      const unsigned int k = static_cast<unsigned int>(head & 15ull);
      const unsigned long long word = k < 8u ? lo : hi;
      *reinterpret_cast<unsigned char*>(head) =
          static_cast<unsigned char>(word >> (8u * (k & 7u)));
    }
    if (tail < end) {
      const unsigned int k = static_cast<unsigned int>(tail & 15ull);
      const unsigned long long word = k < 8u ? lo : hi;
      *reinterpret_cast<unsigned char*>(tail) =
          static_cast<unsigned char>(word >> (8u * (k & 7u)));
    }
  }

  const ulonglong2 value = make_ulonglong2(lo, hi);
  ulonglong2* const body = reinterpret_cast<ulonglong2*>(body_begin);
  const unsigned long long vectors = (body_end - body_begin) / 16ull;
  for (unsigned long long i = thread; i < vectors; i += stride) body[i] = value;
}
