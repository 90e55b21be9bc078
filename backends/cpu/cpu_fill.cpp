// SPDX-License-Identifier: Apache-2.0
#include "cpu_fill.h"

#include <atomic>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ANYDEV_CPU_FILL_X86 1
#endif

namespace anydev::cpu {
namespace {

// A multiple of every valid pattern size, so that the block repeats the
// pattern seamlessly; also the alignment of the vector body.
constexpr std::size_t kBlockBytes = 64;

bool all_bytes_equal(const unsigned char* pattern, std::size_t pattern_size) {
  for (std::size_t i = 1; i < pattern_size; ++i) {
    if (pattern[i] != pattern[0]) return false;
  }
  return true;
}

// Writes `bytes` (a multiple of 64) at the 64-byte aligned `out`, one copy of
// `block` per 64 bytes.
using BlockWriter = void (*)(unsigned char* out, std::size_t bytes, const unsigned char* block);

// The writer for bodies that stay in the caches, and the one for bodies past
// the last-level cache (streaming stores).
struct Writers {
  BlockWriter cached;
  BlockWriter streaming;
};

#ifdef ANYDEV_CPU_FILL_X86
// This file is compiled with -falign-loops=64 (CMakeLists.txt) so that each
// writer's store loop lies within one 64-byte instruction fetch window.
// A loop that straddles two windows (a layout change elsewhere can move it)
// makes in-cache fills measurably slower than memset; inside one it matches.
__attribute__((target("avx2"))) void write_avx2(unsigned char* out, std::size_t bytes,
                                                const unsigned char* block) {
  const __m256i lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(block));
  const __m256i hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(block + 32));
  for (std::size_t i = 0; i < bytes; i += kBlockBytes) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + i), lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + i + 32), hi);
  }
}

__attribute__((target("avx2"))) void stream_avx2(unsigned char* out, std::size_t bytes,
                                                 const unsigned char* block) {
  const __m256i lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(block));
  const __m256i hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(block + 32));
  for (std::size_t i = 0; i < bytes; i += kBlockBytes) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(out + i), lo);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(out + i + 32), hi);
  }
  _mm_sfence();  // streaming stores are weakly ordered: publish them before returning
}

// Cached with one 64-byte store per line where the CPU has AVX-512: one
// store per line keeps up with memset where two 32-byte stores fall behind.
__attribute__((target("avx512f"))) void write_avx512(unsigned char* out, std::size_t bytes,
                                                     const unsigned char* block) {
  const __m512i v = _mm512_load_si512(block);
  for (std::size_t i = 0; i < bytes; i += kBlockBytes) {
    _mm512_store_si512(reinterpret_cast<__m512i*>(out + i), v);
  }
}

// Streaming with one 64-byte store per cache line: a whole line per store
// lets the CPU write it out at once, faster than two 32-byte halves.
__attribute__((target("avx512f"))) void stream_avx512(unsigned char* out, std::size_t bytes,
                                                      const unsigned char* block) {
  const __m512i v = _mm512_load_si512(block);
  for (std::size_t i = 0; i < bytes; i += kBlockBytes) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i), v);
  }
  _mm_sfence();
}

void write_sse2(unsigned char* out, std::size_t bytes, const unsigned char* block) {
  __m128i v[4];
  for (int k = 0; k < 4; ++k) v[k] = _mm_load_si128(reinterpret_cast<const __m128i*>(block) + k);
  for (std::size_t i = 0; i < bytes; i += kBlockBytes) {
    for (int k = 0; k < 4; ++k) _mm_store_si128(reinterpret_cast<__m128i*>(out + i) + k, v[k]);
  }
}

void stream_sse2(unsigned char* out, std::size_t bytes, const unsigned char* block) {
  __m128i v[4];
  for (int k = 0; k < 4; ++k) v[k] = _mm_load_si128(reinterpret_cast<const __m128i*>(block) + k);
  for (std::size_t i = 0; i < bytes; i += kBlockBytes) {
    for (int k = 0; k < 4; ++k) _mm_stream_si128(reinterpret_cast<__m128i*>(out + i) + k, v[k]);
  }
  _mm_sfence();
}

// `rep stos` of a 2, 4 or 8-byte word: the same fast-string microcode as
// memset, so a word pattern fills as fast as a byte does. The pattern's
// first byte lands at `out` whatever its alignment.
void stos_words(unsigned char* out, const unsigned char* pat, std::size_t pattern_size,
                std::size_t bytes) {
  std::size_t count = bytes / pattern_size;
  if (pattern_size == 8) {
    std::uint64_t word;
    std::memcpy(&word, pat, 8);
    asm volatile("rep stosq" : "+D"(out), "+c"(count) : "a"(word) : "memory");
  } else if (pattern_size == 4) {
    std::uint32_t word;
    std::memcpy(&word, pat, 4);
    asm volatile("rep stosl" : "+D"(out), "+c"(count) : "a"(word) : "memory");
  } else {
    std::uint16_t word;
    std::memcpy(&word, pat, 2);
    asm volatile("rep stosw" : "+D"(out), "+c"(count) : "a"(word) : "memory");
  }
}

Writers pick_writers() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {write_avx512, stream_avx512};
  if (__builtin_cpu_supports("avx2")) return {write_avx2, stream_avx2};
  return {write_sse2, stream_sse2};
}
#else
// Portable: 64-byte blocks the compiler turns into the target's vector stores.
void write_portable(unsigned char* out, std::size_t bytes, const unsigned char* block) {
  for (std::size_t i = 0; i < bytes; i += kBlockBytes) std::memcpy(out + i, block, kBlockBytes);
}

Writers pick_writers() { return {write_portable, write_portable}; }
#endif

// Chosen on first use without a C++ static guard: a fork() while another
// thread chose would leave a guard locked in the child (docs/reliability.md,
// fork()). Racing threads pick the same writers; one store wins.
std::atomic<BlockWriter> g_cached_writer{nullptr};
std::atomic<BlockWriter> g_streaming_writer{nullptr};

Writers writers() {
  BlockWriter cached = g_cached_writer.load(std::memory_order_acquire);
  BlockWriter streaming = g_streaming_writer.load(std::memory_order_acquire);
  if (cached != nullptr && streaming != nullptr) return {cached, streaming};
  const Writers chosen = pick_writers();
  g_streaming_writer.store(chosen.streaming, std::memory_order_release);
  g_cached_writer.store(chosen.cached, std::memory_order_release);
  return chosen;
}

}  // namespace

FillStores fill_stores(const void* pattern, std::size_t pattern_size, bool streaming) {
  // Past the threshold every width streams: memset and rep stos read each
  // line before writing it (glibc's memset streams only at its own, larger
  // threshold), so a streaming fill of the replicated pattern is faster.
  if (streaming) return FillStores::vector_streaming;
  const auto* pat = static_cast<const unsigned char*>(pattern);
  // Zero fills and other byte-uniform patterns are the common case: memset is
  // the fastest way to write them.
  if (all_bytes_equal(pat, pattern_size)) return FillStores::memset;
#ifdef ANYDEV_CPU_FILL_X86
  // 2, 4 and 8-byte words (and 16-byte patterns made of two equal words).
  if (pattern_size <= 8 || std::memcmp(pat, pat + 8, 8) == 0) return FillStores::rep_stos;
#endif
  return FillStores::vector;
}

void fill_pattern(void* dst, const void* pattern, std::size_t pattern_size, std::size_t bytes,
                  bool streaming) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* pat = static_cast<const unsigned char*>(pattern);
  switch (fill_stores(pattern, pattern_size, streaming)) {
    case FillStores::memset:
      std::memset(out, pat[0], bytes);
      return;
#ifdef ANYDEV_CPU_FILL_X86
    case FillStores::rep_stos:
      stos_words(out, pat, pattern_size == 16 ? 8 : pattern_size, bytes);
      return;
#endif
    default:
      break;
  }
  const std::size_t mask = pattern_size - 1;  // pattern sizes are powers of two
  // Head: bytes up to the first 64-byte boundary, each at its pattern phase.
  std::size_t head =
      (kBlockBytes - reinterpret_cast<std::uintptr_t>(out) % kBlockBytes) % kBlockBytes;
  if (head > bytes) head = bytes;
  for (std::size_t i = 0; i < head; ++i) out[i] = pat[i & mask];
  // The block holds the pattern starting at the phase of byte `head`.
  alignas(kBlockBytes) unsigned char block[kBlockBytes];
  for (std::size_t i = 0; i < kBlockBytes; ++i) block[i] = pat[(head + i) & mask];
  const std::size_t body = (bytes - head) / kBlockBytes * kBlockBytes;
  // Ordinary vector stores while the body fits the last-level cache (they
  // match memset there); streaming stores beyond it, which skip reading each
  // line before writing it. Copying a hot block of the pattern with rep movsb
  // instead is much slower than memset on uncached destinations.
  if (body > 0) {
    const Writers w = writers();
    (streaming ? w.streaming : w.cached)(out + head, body, block);
  }
  // Tail: a prefix of the block (the phase repeats every 64 bytes).
  std::memcpy(out + head + body, block, bytes - head - body);
}

}  // namespace anydev::cpu
