// SPDX-License-Identifier: Apache-2.0
// Whether this machine's fast-string stores (memset, rep stos) write cache
// lines that are in no cache as fast as non-temporal stores: measured once
// per process, on first use, instead of assumed per vendor.
//
// A fill past the last-level cache writes lines that are in no cache. Some
// CPUs' fast-string microcode writes such lines without reading them first
// and runs as fast as non-temporal stores (string fills then stay as fast up
// to four times the cache, cpu_streaming.h); others read every line before
// writing it and run at half the speed or less (docs/performance.md has the
// figures of both kinds). The probe writes
// pieces of a private buffer whose lines were just flushed from every cache,
// alternately with fill_pattern's fast-string stores and its streaming
// stores, and compares the best time of each kind.
//
// The probe costs a few milliseconds (a 1.5 MiB buffer, its page faults and
// flushes); cpu_task.cpp asks for the verdict only for a fill that needs it (a
// fast-string pattern past the streaming threshold), so a process that never
// fills that much never probes.
//
// Thread-safe: the verdict is one atomic, read without a lock; threads that
// race on the first use may each probe, and store the same kind of answer
// (no C++ static guard, so a fork() during a probe leaves the child nothing
// locked). Off x86-64 there is nothing to compare: the verdict is
// string_as_fast without a probe.
#ifndef ANYDEV_BACKENDS_CPU_CPU_STORE_PROBE_H_
#define ANYDEV_BACKENDS_CPU_CPU_STORE_PROBE_H_

#include <cstdint>

namespace anydev::cpu {

enum class ColdStores : std::uint8_t {
  unmeasured,        // no probe yet
  string_as_fast,    // fast-string stores are within kStreamingMustWin of streaming ones
  streaming_faster,  // streaming stores write cold lines kStreamingMustWin times faster or more
};

// How much faster streaming stores must be before string-form fills give up
// their cached stores below four times the cache: a wrong "faster" costs a
// few percent, a right one more than doubles the fill's speed.
inline constexpr double kStreamingMustWin = 1.5;

// The verdict from the best time of each kind over the same number of bytes
// (nanoseconds; a time of 0 or less, or a missing one, reads string_as_fast:
// the behaviour before the probe existed). Pure.
ColdStores judge_cold_stores(double string_ns, double streaming_ns);

// This process's verdict: the one set, else the probe's, run on the first
// call. Never unmeasured.
ColdStores cold_stores();

// Sets the verdict (tests); unmeasured makes the next cold_stores() probe.
void set_cold_stores(ColdStores verdict);

// Runs the probe now and returns its verdict without storing it; `string_ns`
// and `streaming_ns` receive the best times (0 where nothing was measured:
// no memory for the buffer, or not x86-64).
ColdStores probe_cold_stores(double* string_ns = nullptr, double* streaming_ns = nullptr);

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_STORE_PROBE_H_
