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
// Each writes `bytes` (a multiple of 256) at the 64-byte aligned `out` from
// `in` (any alignment): four lines per iteration, loads before stores.
using BodyCopier = void (*)(unsigned char* out, const unsigned char* in, std::size_t bytes);

__attribute__((target("avx512f"))) void stream_avx512(unsigned char* out, const unsigned char* in,
                                                      std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 4 * kLine) {
    const __m512i a = _mm512_loadu_si512(in + i);
    const __m512i b = _mm512_loadu_si512(in + i + 64);
    const __m512i c = _mm512_loadu_si512(in + i + 128);
    const __m512i d = _mm512_loadu_si512(in + i + 192);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i), a);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i + 64), b);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i + 128), c);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i + 192), d);
  }
  _mm_sfence();  // streaming stores are weakly ordered: publish them before returning
}

__attribute__((target("avx2"))) void stream_avx2(unsigned char* out, const unsigned char* in,
                                                 std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 4 * kLine) {
    for (std::size_t k = 0; k < 4 * kLine; k += 128) {
      const auto* from = reinterpret_cast<const __m256i*>(in + i + k);
      const __m256i a = _mm256_loadu_si256(from);
      const __m256i b = _mm256_loadu_si256(from + 1);
      const __m256i c = _mm256_loadu_si256(from + 2);
      const __m256i d = _mm256_loadu_si256(from + 3);
      auto* to = reinterpret_cast<__m256i*>(out + i + k);
      _mm256_stream_si256(to, a);
      _mm256_stream_si256(to + 1, b);
      _mm256_stream_si256(to + 2, c);
      _mm256_stream_si256(to + 3, d);
    }
  }
  _mm_sfence();
}

void stream_sse2(unsigned char* out, const unsigned char* in, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += kLine) {
    const auto* from = reinterpret_cast<const __m128i*>(in + i);
    const __m128i a = _mm_loadu_si128(from);
    const __m128i b = _mm_loadu_si128(from + 1);
    const __m128i c = _mm_loadu_si128(from + 2);
    const __m128i d = _mm_loadu_si128(from + 3);
    auto* to = reinterpret_cast<__m128i*>(out + i);
    _mm_stream_si128(to, a);
    _mm_stream_si128(to + 1, b);
    _mm_stream_si128(to + 2, c);
    _mm_stream_si128(to + 3, d);
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
  const std::size_t body = (bytes - head) / (4 * kLine) * (4 * kLine);
  if (head > 0) std::memcpy(out, in, head);
  if (body > 0) copier()(out + head, in + head, body);
  const std::size_t done = head + body;
  if (done < bytes) std::memcpy(out + done, in + done, bytes - done);
#else
  std::memcpy(dst, src, bytes);
#endif
}

}  // namespace anydev::cpu
