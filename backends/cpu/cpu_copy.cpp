// SPDX-License-Identifier: Apache-2.0
#include "cpu_copy.h"

#include <atomic>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ANYDEV_CPU_COPY_X86 1
#endif

namespace anydev::cpu {
namespace {

constexpr std::size_t kLine = 64;

#ifdef ANYDEV_CPU_COPY_X86
// The body is copied in pieces of two lines, and the pieces of each 16 KiB
// block are visited four pages at a time: the first piece of each of the four
// pages, then the second of each, and so on (the rest past the last whole
// block in address order). Four source pages read in turn keep four DRAM
// streams and four hardware prefetch streams busy where a plain walk keeps
// one; glibc's own non-temporal memcpy walks four pages the same way. A plain
// walk in address order left large copies well short of memcpy
// (docs/performance.md, "Measurements behind tuning constants").
constexpr std::size_t kPiece = 2 * kLine;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kPagesInTurn = 4;
constexpr std::size_t kBlock = kPagesInTurn * kPage;
constexpr std::size_t kPiecesPerBlock = kBlock / kPiece;
// How far ahead of a piece its page is prefetched (two pieces).
constexpr std::size_t kPrefetchAhead = 2 * kPiece;

// The offset of the n-th piece visited in a body whose first `blocks_bytes`
// (a multiple of kBlock) are walked four pages in turn. Pure.
inline std::size_t piece_offset(std::size_t n, std::size_t blocks_bytes) {
  const std::size_t linear = n * kPiece;
  if (linear >= blocks_bytes) return linear;
  const std::size_t within = n % kPiecesPerBlock;
  return linear / kBlock * kBlock + (within % kPagesInTurn) * kPage +
         (within / kPagesInTurn) * kPiece;
}

inline void prefetch_piece(const unsigned char* in) {
  _mm_prefetch(reinterpret_cast<const char*>(in + kPrefetchAhead), _MM_HINT_T0);
  _mm_prefetch(reinterpret_cast<const char*>(in + kPrefetchAhead + kLine), _MM_HINT_T0);
}

// Each writes `bytes` (a multiple of kPiece) at the 64-byte aligned `out`
// from `in` (any alignment), piece by piece in the order above, loads before
// stores.
using BodyCopier = void (*)(unsigned char* out, const unsigned char* in, std::size_t bytes);

__attribute__((target("avx512f"))) void stream_avx512(unsigned char* out, const unsigned char* in,
                                                      std::size_t bytes) {
  const std::size_t blocks_bytes = bytes / kBlock * kBlock;
  for (std::size_t n = 0, pieces = bytes / kPiece; n < pieces; ++n) {
    const std::size_t i = piece_offset(n, blocks_bytes);
    prefetch_piece(in + i);
    const __m512i a = _mm512_loadu_si512(in + i);
    const __m512i b = _mm512_loadu_si512(in + i + kLine);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i), a);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i + kLine), b);
  }
  _mm_sfence();  // streaming stores are weakly ordered: publish them before returning
}

__attribute__((target("avx2"))) void stream_avx2(unsigned char* out, const unsigned char* in,
                                                 std::size_t bytes) {
  const std::size_t blocks_bytes = bytes / kBlock * kBlock;
  for (std::size_t n = 0, pieces = bytes / kPiece; n < pieces; ++n) {
    const std::size_t i = piece_offset(n, blocks_bytes);
    prefetch_piece(in + i);
    const auto* from = reinterpret_cast<const __m256i*>(in + i);
    const __m256i a = _mm256_loadu_si256(from);
    const __m256i b = _mm256_loadu_si256(from + 1);
    const __m256i c = _mm256_loadu_si256(from + 2);
    const __m256i d = _mm256_loadu_si256(from + 3);
    auto* to = reinterpret_cast<__m256i*>(out + i);
    _mm256_stream_si256(to, a);
    _mm256_stream_si256(to + 1, b);
    _mm256_stream_si256(to + 2, c);
    _mm256_stream_si256(to + 3, d);
  }
  _mm_sfence();
}

void stream_sse2(unsigned char* out, const unsigned char* in, std::size_t bytes) {
  const std::size_t blocks_bytes = bytes / kBlock * kBlock;
  for (std::size_t n = 0, pieces = bytes / kPiece; n < pieces; ++n) {
    const std::size_t i = piece_offset(n, blocks_bytes);
    prefetch_piece(in + i);
    const auto* from = reinterpret_cast<const __m128i*>(in + i);
    __m128i v[kPiece / 16];
    for (std::size_t k = 0; k < kPiece / 16; ++k) v[k] = _mm_loadu_si128(from + k);
    auto* to = reinterpret_cast<__m128i*>(out + i);
    for (std::size_t k = 0; k < kPiece / 16; ++k) _mm_stream_si128(to + k, v[k]);
  }
  _mm_sfence();
}

BodyCopier pick_copier() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return stream_avx512;
  if (__builtin_cpu_supports("avx2")) return stream_avx2;
  return stream_sse2;
}

// Chosen on first use without a C++ static guard (a fork() while another
// thread chose must not leave a guard locked in the child); racing threads
// choose the same one.
std::atomic<BodyCopier> g_copier{nullptr};

BodyCopier copier() {
  BodyCopier chosen = g_copier.load(std::memory_order_acquire);
  if (chosen != nullptr) return chosen;
  chosen = pick_copier();
  g_copier.store(chosen, std::memory_order_release);
  return chosen;
}
#endif

}  // namespace

void copy_streaming(void* dst, const void* src, std::size_t bytes) {
#ifdef ANYDEV_CPU_COPY_X86
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  std::size_t head = (kLine - reinterpret_cast<std::uintptr_t>(out) % kLine) % kLine;
  if (head > bytes) head = bytes;
  const std::size_t body = (bytes - head) / kPiece * kPiece;
  if (head > 0) std::memcpy(out, in, head);
  if (body > 0) copier()(out + head, in + head, body);
  const std::size_t done = head + body;
  if (done < bytes) std::memcpy(out + done, in + done, bytes - done);
#else
  std::memcpy(dst, src, bytes);
#endif
}

}  // namespace anydev::cpu
