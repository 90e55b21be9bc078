// SPDX-License-Identifier: Apache-2.0
// anydev's fill kernel on AMD GPUs: the same contract as the CUDA one
// (backends/gpu/gpu_fill_kernel.h, backends/cuda/kernels/fill_pattern.cu),
// for patterns whose period is 8 or 16 bytes. The source of the code objects
// in hip_fill_code_objects.cpp, which are committed and compiled into the hip
// plugin: scripts/make-fill-hsaco regenerates them with clang's HIP device
// compilation, with no HIP headers and no device libraries, so the kernel
// takes its indices from compiler builtins and the dispatch packet.
//
// anydev_fill_pattern16(dst, bytes, lo, hi) writes every byte at address a in
// [dst, dst + bytes) with byte (a mod 16) of the 16-byte little-endian value
// lo | hi << 64. One launch per fill: a grid-stride loop of aligned 16-byte
// stores over the 16-byte-aligned body, and byte stores for the head and tail
// (under 16 bytes each) by the grid's first 16 work-items.

typedef unsigned long long anydev_u64;
typedef anydev_u64 anydev_u64x2 __attribute__((ext_vector_type(2)));

// Byte (address mod 16) of lo | hi << 64.
static __attribute__((device)) inline unsigned char anydev_pattern_byte(anydev_u64 address,
                                                                        anydev_u64 lo,
                                                                        anydev_u64 hi) {
  const unsigned k = static_cast<unsigned>(address & 15ull);
  return static_cast<unsigned char>((k < 8u ? lo : hi) >> (8u * (k & 7u)));
}

extern "C" __attribute__((global)) void anydev_fill_pattern16(unsigned char* dst, anydev_u64 bytes,
                                                              anydev_u64 lo, anydev_u64 hi) {
  // The HSA dispatch packet: workgroup_size_x (16 bits at byte 4) and
  // grid_size_x (32 bits at byte 12, in work-items).
  const auto* packet = static_cast<const unsigned char*>(__builtin_amdgcn_dispatch_ptr());
  const anydev_u64 group_size = *reinterpret_cast<const unsigned short*>(packet + 4);
  const anydev_u64 grid_size = *reinterpret_cast<const unsigned*>(packet + 12);
  const anydev_u64 item = __builtin_amdgcn_workgroup_id_x() * group_size +
                          __builtin_amdgcn_workitem_id_x();

  const anydev_u64 start = reinterpret_cast<anydev_u64>(dst);
  anydev_u64 head = (16ull - (start & 15ull)) & 15ull;  // bytes before the first aligned vector
  if (head > bytes) head = bytes;
  const anydev_u64 vectors = (bytes - head) / 16ull;
  const anydev_u64 body_end = head + vectors * 16ull;

  if (item < 16ull) {
    if (item < head) dst[item] = anydev_pattern_byte(start + item, lo, hi);
    const anydev_u64 tail = body_end + item;
    if (tail < bytes) dst[tail] = anydev_pattern_byte(start + tail, lo, hi);
  }

  const anydev_u64x2 value = {lo, hi};
  anydev_u64x2* const body = reinterpret_cast<anydev_u64x2*>(dst + head);
  for (anydev_u64 i = item; i < vectors; i += grid_size) body[i] = value;
}
