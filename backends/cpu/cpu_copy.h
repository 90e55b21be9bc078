// SPDX-License-Identifier: Apache-2.0
// A copy with streaming (non-temporal) stores, for copies whose footprint is
// past the last-level cache (cpu_streaming.h). memcpy decides its store kind
// by the size of each call (glibc streams only above its own threshold), so
// the chunks of a split copy, each small, would all take the cached path.
//
// On x86-64: unaligned vector loads, aligned streaming stores (64-byte
// AVX-512, else 32-byte AVX2, else 16-byte SSE2, chosen at run time), the
// source read four pages in turn (cpu_copy.cpp says why), the unaligned head
// and tail through memcpy, and a store fence before returning.
// Elsewhere: memcpy.
//
// A pure function of its arguments: thread-safe; the caller owns the memory.
#ifndef ANYDEV_BACKENDS_CPU_CPU_COPY_H_
#define ANYDEV_BACKENDS_CPU_CPU_COPY_H_

#include <cstddef>

namespace anydev::cpu {

// Copies `bytes` from `src` to `dst` (no overlap; any alignment) with
// streaming stores for the 64-byte aligned body of dst.
void copy_streaming(void* dst, const void* src, std::size_t bytes);

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_COPY_H_
