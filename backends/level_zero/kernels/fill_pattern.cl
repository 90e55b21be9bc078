// SPDX-License-Identifier: Apache-2.0
// anydev's fill kernel on Level Zero devices: the same contract as the CUDA
// one (backends/gpu/gpu_fill_kernel.h, backends/cuda/kernels/fill_pattern.cu),
// for patterns whose period is wider than the device's native fills (8 or 16
// bytes). The source of the SPIR-V in lz_fill_spirv.cpp, which is committed
// and compiled into the level_zero plugin: scripts/make-fill-kernels
// regenerates it; the build never runs clang or llvm-spirv.
//
// anydev_fill_pattern16(dst, bytes, lo, hi) writes every byte at address a in
// [dst, dst + bytes) with byte (a mod 16) of the 16-byte little-endian value
// lo | hi << 64. One launch per fill: a grid-stride loop of aligned 16-byte
// stores over the 16-byte-aligned body, and byte stores for the head and tail
// (under 16 bytes each) by the first 16 work-items.

// Byte (address mod 16) of lo | hi << 64.
static uchar anydev_pattern_byte(ulong address, ulong lo, ulong hi) {
  const uint k = (uint)(address & 15ul);
  return (uchar)((k < 8u ? lo : hi) >> (8u * (k & 7u)));
}

kernel void anydev_fill_pattern16(global uchar* dst, ulong bytes, ulong lo, ulong hi) {
  const ulong item = get_global_id(0);
  const ulong stride = get_global_size(0);

  const ulong start = (ulong)dst;
  ulong head = (16ul - (start & 15ul)) & 15ul;  // bytes before the first aligned vector
  if (head > bytes) head = bytes;
  const ulong vectors = (bytes - head) / 16ul;
  const ulong body_end = head + vectors * 16ul;

  if (item < 16ul) {
    if (item < head) dst[item] = anydev_pattern_byte(start + item, lo, hi);
    const ulong tail = body_end + item;
    if (tail < bytes) dst[tail] = anydev_pattern_byte(start + tail, lo, hi);
  }

  const ulong2 value = (ulong2)(lo, hi);
  global ulong2* const body = (global ulong2*)(dst + head);
  for (ulong i = item; i < vectors; i += stride) body[i] = value;
}
