// SPDX-License-Identifier: Apache-2.0
// When a copy or fill writes with streaming (non-temporal) stores.
//
// Cached stores read every destination line before writing it and leave it
// dirty in the caches; that pays while the operation's footprint (bytes
// written, plus bytes read for a copy) stays in the last-level cache, so that
// the next operation on the same memory finds it there. Past that the lines
// are evicted before anyone reads them again, and streaming stores, which
// skip the read and the write-back of evicted lines, move more bytes per
// second. The decision is taken once per operation, on the whole operation's
// footprint, never per chunk of a split (a 256 MiB copy handed out in
// 512 KiB chunks streams all of them).
//
// The threshold: half the last-level cache as the machine reports it
// (sysfs, else sysconf; 32 MiB when unknown), so the footprint leaves room for
// the rest of the working set (fills with a fast-string form on a CPU whose
// fast-string stores keep up: eight times that, fill_streams below). Copies
// with a footprint past half the cache ran faster streaming
// (docs/performance.md).
// ANYDEV_CPU_STREAMING_BYTES (cpu_config.h) overrides it for the process.
//
// Thread-safe: the threshold is read on first use without a lock (racing
// threads compute the same value; no C++ static guard, so a fork() at that
// moment cannot leave the child blocked) and may be set once at initialize.
#ifndef ANYDEV_BACKENDS_CPU_CPU_STREAMING_H_
#define ANYDEV_BACKENDS_CPU_CPU_STREAMING_H_

#include <cstddef>

namespace anydev::cpu {

// The footprint above which streaming stores pay, for a last-level cache of
// `llc_bytes` (0: unknown, taken as 32 MiB): half of it, at least 1 MiB.
// Pure.
std::size_t streaming_footprint_for_cache(std::size_t llc_bytes);

// Sets the process's threshold (ANYDEV_CPU_STREAMING_BYTES at initialize);
// 0 goes back to the one derived from the cache.
void set_streaming_footprint(std::size_t bytes);

// The process's threshold: the one set, else streaming_footprint_for_cache
// of read_last_level_cache_bytes(), read on first use.
std::size_t streaming_footprint();

// Fills that fast-string stores can write (memset, rep stos: byte-uniform
// patterns and 2, 4 and 8-byte words, cpu_fill.h has_string_form) stream only
// past kStringFillStreamFactor times the threshold (four times the last-level
// cache) on a CPU whose fast-string stores write lines that are in no cache
// as fast as non-temporal stores: up to there they keep what they wrote
// cached at no cost, where streaming them is the slower. On a CPU where they
// are slower (cpu_store_probe.h measures it once per process), those fills
// stream past the threshold like every other: cached, they would run at less
// than half the speed (docs/performance.md has both machines' figures).
inline constexpr std::size_t kStringFillStreamFactor = 8;

// Whether a copy of `bytes` (footprint 2 * bytes) or a fill of `bytes`
// (footprint bytes) streams, against `threshold`; `string_form`: the fill's
// pattern has a fast-string form; `string_slow_cold`: this CPU's fast-string
// stores are slower than streaming ones on lines in no cache (see above).
// Pure.
inline bool copy_streams(std::size_t bytes, std::size_t threshold) { return bytes > threshold / 2; }
inline bool fill_streams(std::size_t bytes, std::size_t threshold, bool string_form = false,
                         bool string_slow_cold = false) {
  return string_form && !string_slow_cold ? bytes / kStringFillStreamFactor > threshold
                                          : bytes > threshold;
}

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_STREAMING_H_
