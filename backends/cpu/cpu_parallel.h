// SPDX-License-Identifier: Apache-2.0
// Splitting one large copy or fill across the host's cores.
//
// A process-wide set of helper threads (one fewer than the threads a split
// may use) waits for jobs. split_work() cuts a byte range into chunks, offers
// them to the helpers and works through them itself too, so it never waits
// for a helper that is busy elsewhere: every chunk is done by whichever
// thread takes it first, and split_work returns when all are done. The
// helpers start on first use and are never joined (they sleep when idle); a
// forked child starts its own.
//
// Thread-safe: several streams may split work at the same time; jobs queue in
// FIFO order for the helpers.
#ifndef ANYDEV_BACKENDS_CPU_CPU_PARALLEL_H_
#define ANYDEV_BACKENDS_CPU_CPU_PARALLEL_H_

#include <cstddef>

namespace anydev::cpu {

// Below this many online CPUs the default is not to split. Two are enough:
// memcpy split over two cores moves more bytes than one thread from 4 MiB up,
// and memset from 16 MiB up (bench/cpu_bench.cpp, docs/performance.md).
inline constexpr unsigned kMinCpusToSplit = 2;

// The number of threads a split uses (caller included): ANYDEV_CPU_THREADS
// when set at initialize, else the online CPUs (1 below kMinCpusToSplit,
// that is on a single CPU).
// At least 1.
void set_split_threads(unsigned threads);
unsigned split_threads();

// The smallest copy or fill worth splitting: below it a helper's wake-up
// costs more than it saves (docs/performance.md). Fills start later than
// copies: one core writes a destination that stays in the last-level cache
// faster than two do once the hand-off is paid.
inline constexpr std::size_t kSplitCopyBytes = std::size_t{4} << 20;
inline constexpr std::size_t kSplitFillBytes = std::size_t{16} << 20;

// The largest chunk a split hands out. Small chunks taken in address order
// by whichever thread is free balance the load (a helper woken late, or
// descheduled by the hypervisor, leaves its chunks to the caller) and keep
// both threads in neighbouring memory; one chunk per thread leaves the whole
// split waiting for the slower core (docs/performance.md).
inline constexpr std::size_t kSplitChunkBytes = std::size_t{512} << 10;

// Calls work(offset, length, context) over [0, bytes) in chunks of at most
// kSplitChunkBytes (and at most ceil(bytes / threads), rounded up to 4096),
// each starting at a multiple of 4096 bytes (so a fill's pattern phase is
// kept), on this thread and the helpers; each chunk is done exactly once, by
// whichever thread takes it first. Returns when every chunk is done. One call
// over the whole range when split_threads() is 1 or no helper could start.
using ChunkFn = void (*)(std::size_t offset, std::size_t length, void* context);
void split_work(std::size_t bytes, ChunkFn work, void* context);

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_PARALLEL_H_
