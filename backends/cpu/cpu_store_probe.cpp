// SPDX-License-Identifier: Apache-2.0
#include "cpu_store_probe.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "cpu_fill.h"
#include "cpu_services.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ANYDEV_CPU_PROBE_X86 1
#endif

namespace anydev::cpu {
namespace {

std::atomic<ColdStores> g_verdict{ColdStores::unmeasured};

std::string microseconds(double ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f us", ns / 1000);
  return text;
}

// Three rounds of one string piece and one streaming piece, each on lines of
// its own: the best of three drops a round the hypervisor interrupted.
constexpr std::size_t kPieceBytes = std::size_t{256} << 10;
constexpr int kRounds = 3;

#ifdef ANYDEV_CPU_PROBE_X86
constexpr std::size_t kLine = 64;

// An 8-byte word that is not byte-uniform: fill_pattern writes it with rep
// stosq cached and with the 64-byte streaming block otherwise
// (cpu_fill.h fill_stores), the same code a user's fill runs.
constexpr unsigned char kPattern[8] = {1, 2, 3, 4, 5, 6, 7, 8};

double time_fill(unsigned char* piece, bool streaming) {
  const auto start = std::chrono::steady_clock::now();
  fill_pattern(piece, kPattern, sizeof kPattern, kPieceBytes, streaming);
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(stop - start).count();
}
#endif

}  // namespace

ColdStores judge_cold_stores(double string_ns, double streaming_ns) {
  if (!(string_ns > 0) || !(streaming_ns > 0)) return ColdStores::string_as_fast;
  return string_ns >= kStreamingMustWin * streaming_ns ? ColdStores::streaming_faster
                                                       : ColdStores::string_as_fast;
}

ColdStores probe_cold_stores(double* string_ns, double* streaming_ns) {
  double best_string = 0;
  double best_streaming = 0;
#ifdef ANYDEV_CPU_PROBE_X86
  const std::size_t bytes = 2 * kRounds * kPieceBytes;
  auto* buffer = static_cast<unsigned char*>(std::aligned_alloc(4096, bytes));
  if (buffer != nullptr) {
    std::memset(buffer, 0, bytes);  // fault every page in before timing anything
    for (std::size_t i = 0; i < bytes; i += kLine) _mm_clflush(buffer + i);
    _mm_mfence();  // every line written back and out of the caches
    best_string = std::numeric_limits<double>::infinity();
    best_streaming = std::numeric_limits<double>::infinity();
    for (int round = 0; round < kRounds; ++round) {
      unsigned char* pair = buffer + 2 * static_cast<std::size_t>(round) * kPieceBytes;
      best_string = std::min(best_string, time_fill(pair, false));
      best_streaming = std::min(best_streaming, time_fill(pair + kPieceBytes, true));
    }
    std::free(buffer);
  }
#endif
  if (string_ns != nullptr) *string_ns = best_string;
  if (streaming_ns != nullptr) *streaming_ns = best_streaming;
  return judge_cold_stores(best_string, best_streaming);
}

ColdStores cold_stores() {
  ColdStores verdict = g_verdict.load(std::memory_order_relaxed);
  if (verdict != ColdStores::unmeasured) return verdict;
  double string_ns = 0;
  double streaming_ns = 0;
  verdict = probe_cold_stores(&string_ns, &streaming_ns);
  g_verdict.store(verdict, std::memory_order_relaxed);
  log(ANYDEV_LOG_DEBUG,
      "store probe: uncached lines written in " + microseconds(string_ns) +
          " with fast-string stores, " + microseconds(streaming_ns) +
          " with streaming stores (best of " + std::to_string(kRounds) + " pieces of " +
          std::to_string(kPieceBytes >> 10) + " KiB each): " +
          (verdict == ColdStores::streaming_faster
               ? "fills of 1, 2, 4 and 8-byte patterns stream past the threshold"
               : "fills of 1, 2, 4 and 8-byte patterns stay cached to 8 times the threshold"));
  return verdict;
}

void set_cold_stores(ColdStores verdict) { g_verdict.store(verdict, std::memory_order_relaxed); }

}  // namespace anydev::cpu
