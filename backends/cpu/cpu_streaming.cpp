// SPDX-License-Identifier: Apache-2.0
#include "cpu_streaming.h"

#include <atomic>

#include "cpu_device_info.h"

namespace anydev::cpu {
namespace {

std::atomic<std::size_t> g_set{0};      // ANYDEV_CPU_STREAMING_BYTES; 0: not set
std::atomic<std::size_t> g_derived{0};  // from the cache; 0: not read yet

}  // namespace

std::size_t streaming_footprint_for_cache(std::size_t llc_bytes) {
  const std::size_t llc = llc_bytes > 0 ? llc_bytes : std::size_t{32} << 20;
  const std::size_t floor = std::size_t{1} << 20;  // a cache under 2 MiB: stream from 1 MiB
  return llc / 2 > floor ? llc / 2 : floor;
}

void set_streaming_footprint(std::size_t bytes) { g_set.store(bytes, std::memory_order_relaxed); }

std::size_t streaming_footprint() {
  if (const std::size_t set = g_set.load(std::memory_order_relaxed); set != 0) return set;
  std::size_t derived = g_derived.load(std::memory_order_relaxed);
  if (derived != 0) return derived;
  derived = streaming_footprint_for_cache(read_last_level_cache_bytes());
  g_derived.store(derived, std::memory_order_relaxed);
  return derived;
}

}  // namespace anydev::cpu
