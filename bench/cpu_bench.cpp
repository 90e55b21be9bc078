// SPDX-License-Identifier: Apache-2.0
// anydev-cpu-bench: anydev's cpu backend beside its baselines, in one binary
// and one run (Google Benchmark).
//
//   baseline/memcpy/{1thread,all}/<bytes>   memcpy on one thread / split over
//                                           every core (persistent threads)
//   baseline/memset/{1thread,all}/<bytes>   the same for memset
//   baseline/{memcpy,memset}_malloc/{1thread,all}/<bytes>
//                                           the same on plain malloc'ed
//                                           memory (touched first) instead
//                                           of page-aligned mappings
//   cpu/copy_{h2h,h2d,d2h,d2d}/<bytes>      one enqueue_copy + synchronize()
//   cpu/fill_{1,2,4,8,16}/<bytes>           one N-byte pattern fill + synchronize()
//   cpu/roundtrip                           a 4-byte host->device copy + synchronize()
//   baseline/roundtrip_memcpy               a 4-byte memcpy (the floor)
//   cpu/enqueue                             4-byte copies back to back, a
//                                           synchronize() every 1024 (items/s)
//   paired/copy_<dir>/<bytes>, paired/fill_<n>/<bytes>  (1 MiB and up)
//                                           anydev and both baselines
//                                           alternated; counter `ratio` is the
//                                           median of (faster baseline time /
//                                           anydev time), the figure the
//                                           targets are judged by on a shared
//                                           machine
//   paired/control_{memcpy,memset}/<bytes>  the same with the one-thread
//                                           baseline in anydev's place: its
//                                           ratio_1thread is what the method
//                                           reads for two equal implementations
//   cpu/alloc_{host,device}_64MiB/{pooled,unpooled}
//                                           create + release of a 64 MiB buffer;
//                                           unpooled releases the pool's cache
//                                           (anydev_context_release_cached_memory)
//                                           after each release, so every create
//                                           maps fresh memory
//
// Sizes run from 4 KiB to ANYDEV_BENCH_MAX_BYTES (default 256 MiB; 1 GiB at
// most; scripts/bench-report asks for 1 GiB). Buffers are created and touched before timing. Every
// figure is real (wall-clock) time. scripts/bench-report turns a run into docs/performance.md.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "anydev/anydev.h"
#include "anydev/anydev.hpp"
#include "host_baseline.h"

namespace {

using anydev_bench::HostThreads;
using anydev_bench::MappedBytes;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = kKiB * kKiB;

std::optional<anydev::DeviceContext> g_ctx;
HostThreads* g_threads = nullptr;

std::size_t max_bytes() {
  std::size_t max = 256 * kMiB;
  if (const char* text = std::getenv("ANYDEV_BENCH_MAX_BYTES")) {
    max = std::strtoull(text, nullptr, 10);
    if (max > 1024 * kMiB) max = 1024 * kMiB;
  }
  return max;
}

std::vector<std::size_t> sizes() {
  std::vector<std::size_t> out;
  for (std::size_t b :
       {4 * kKiB, 64 * kKiB, kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB, 256 * kMiB, 1024 * kMiB}) {
    if (b <= max_bytes()) out.push_back(b);
  }
  return out;
}

std::string size_name(std::size_t bytes) {
  if (bytes >= kMiB) return std::to_string(bytes / kMiB) + "MiB";
  return std::to_string(bytes / kKiB) + "KiB";
}

void finish(benchmark::State& state, std::size_t bytes) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

// ---- baselines ----------------------------------------------------------------

void bm_memcpy(benchmark::State& state, std::size_t bytes, bool all) {
  MappedBytes src(bytes), dst(bytes);
  for (auto _ : state) {
    if (all) {
      anydev_bench::parallel_memcpy(*g_threads, dst.data(), src.data(), bytes);
    } else {
      std::memcpy(dst.data(), src.data(), bytes);
    }
    benchmark::ClobberMemory();
  }
  finish(state, bytes);
}

void bm_memset(benchmark::State& state, std::size_t bytes, bool all) {
  MappedBytes dst(bytes);
  for (auto _ : state) {
    if (all) {
      anydev_bench::parallel_memset(*g_threads, dst.data(), 0x5A, bytes);
    } else {
      std::memset(dst.data(), 0x5A, bytes);
    }
    benchmark::ClobberMemory();
  }
  finish(state, bytes);
}

// The same on malloc'ed memory, as a program of the user's own would have it
// (glibc maps large requests itself; the bytes are touched before timing).
struct MallocBytes {
  explicit MallocBytes(std::size_t bytes) : data(static_cast<unsigned char*>(std::malloc(bytes))) {
    if (data == nullptr) throw std::bad_alloc();
    std::memset(data, 1, bytes);
  }
  ~MallocBytes() { std::free(data); }
  MallocBytes(const MallocBytes&) = delete;
  MallocBytes& operator=(const MallocBytes&) = delete;
  unsigned char* data;
};

void bm_memcpy_malloc(benchmark::State& state, std::size_t bytes, bool all) {
  MallocBytes src(bytes), dst(bytes);
  for (auto _ : state) {
    if (all) {
      anydev_bench::parallel_memcpy(*g_threads, dst.data, src.data, bytes);
    } else {
      std::memcpy(dst.data, src.data, bytes);
    }
    benchmark::ClobberMemory();
  }
  finish(state, bytes);
}

void bm_memset_malloc(benchmark::State& state, std::size_t bytes, bool all) {
  MallocBytes dst(bytes);
  for (auto _ : state) {
    if (all) {
      anydev_bench::parallel_memset(*g_threads, dst.data, 0x5A, bytes);
    } else {
      std::memset(dst.data, 0x5A, bytes);
    }
    benchmark::ClobberMemory();
  }
  finish(state, bytes);
}

void bm_roundtrip_memcpy(benchmark::State& state) {
  std::uint32_t a = 1, b = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(&a);
    std::memcpy(&b, &a, sizeof a);
    benchmark::ClobberMemory();
  }
}

// ---- anydev cpu backend -----------------------------------------------------------

enum class Dir { kH2H, kH2D, kD2H, kD2D };

template <class Run>
void guard(benchmark::State& state, Run&& run) {
  try {
    run();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void bm_copy(benchmark::State& state, std::size_t bytes, Dir dir) {
  guard(state, [&] {
    const anydev::DeviceContext& ctx = *g_ctx;
    auto h1 = ctx.enqueue_create_host_buffer<std::uint8_t>(bytes);
    auto h2 = ctx.enqueue_create_host_buffer<std::uint8_t>(bytes);
    auto d1 = ctx.enqueue_create_buffer<std::uint8_t>(bytes);
    auto d2 = ctx.enqueue_create_buffer<std::uint8_t>(bytes);
    ctx.enqueue_memset(h1, 1);
    ctx.enqueue_memset(h2, 2);
    ctx.enqueue_memset(d1, 3);
    ctx.enqueue_memset(d2, 4);
    ctx.synchronize();
    for (auto _ : state) {
      switch (dir) {
        case Dir::kH2H:
          ctx.enqueue_copy(h2, h1);
          break;
        case Dir::kH2D:
          ctx.enqueue_copy(d1, h1);
          break;
        case Dir::kD2H:
          ctx.enqueue_copy(h1, d1);
          break;
        case Dir::kD2D:
          ctx.enqueue_copy(d2, d1);
          break;
      }
      ctx.synchronize();
    }
    finish(state, bytes);
  });
}

template <class T>
void bm_fill(benchmark::State& state, std::size_t bytes) {
  guard(state, [&] {
    const anydev::DeviceContext& ctx = *g_ctx;
    auto buffer = ctx.enqueue_create_buffer<T>(bytes / sizeof(T));
    ctx.enqueue_memset(buffer, T{});
    ctx.synchronize();
    // Bytes that are not all equal, so no fill can fall back to memset.
    unsigned char bits[sizeof(T)];
    for (std::size_t i = 0; i < sizeof(T); ++i) bits[i] = static_cast<unsigned char>(0x5A + i);
    T value;
    std::memcpy(&value, bits, sizeof(T));
    for (auto _ : state) {
      ctx.enqueue_memset(buffer, value);
      ctx.synchronize();
    }
    finish(state, bytes);
  });
}

void bm_roundtrip(benchmark::State& state) {
  guard(state, [&] {
    const anydev::DeviceContext& ctx = *g_ctx;
    auto host = ctx.enqueue_create_host_buffer<std::uint32_t>(1);
    auto device = ctx.enqueue_create_buffer<std::uint32_t>(1);
    ctx.enqueue_memset(host, 7u);
    ctx.synchronize();
    for (auto _ : state) {
      ctx.enqueue_copy(device, host);
      ctx.synchronize();
    }
  });
}

constexpr int kEnqueueBatch = 1024;

void bm_enqueue(benchmark::State& state) {
  guard(state, [&] {
    const anydev::DeviceContext& ctx = *g_ctx;
    auto host = ctx.enqueue_create_host_buffer<std::uint32_t>(1);
    auto device = ctx.enqueue_create_buffer<std::uint32_t>(1);
    ctx.enqueue_memset(host, 7u);
    ctx.synchronize();
    for (auto _ : state) {
      for (int i = 0; i < kEnqueueBatch; ++i) ctx.enqueue_copy(device, host);
      ctx.synchronize();
    }
    state.SetItemsProcessed(state.iterations() * kEnqueueBatch);
  });
}

// The pool's entry points, looked up at run time so that this file builds
// with or without them.
using ReleaseCached = anydev_status_t (*)(anydev_context_t);
using PoolEnabled = int (*)();

ReleaseCached release_cached() {
  return reinterpret_cast<ReleaseCached>(
      dlsym(RTLD_DEFAULT, "anydev_context_release_cached_memory"));
}

void bm_alloc(benchmark::State& state, bool host, bool pooled) {
  guard(state, [&] {
    const anydev::DeviceContext& ctx = *g_ctx;
    constexpr std::size_t kBytes = 64 * kMiB;
    const ReleaseCached release = release_cached();
    if (!pooled && release == nullptr) {
      state.SkipWithError("this libanydev has no anydev_context_release_cached_memory");
      return;
    }
    auto drop_cache = [&] {
      if (release != nullptr) anydev::detail::check(release(ctx.handle()));
    };
    auto once = [&] {
      if (host) {
        auto b = ctx.enqueue_create_host_buffer<std::uint8_t>(kBytes);
        benchmark::DoNotOptimize(b.handle());
      } else {
        auto b = ctx.enqueue_create_buffer<std::uint8_t>(kBytes);
        benchmark::DoNotOptimize(b.handle());
      }
    };
    drop_cache();
    once();  // the pool has now seen the size
    ctx.synchronize();
    for (auto _ : state) {
      once();
      if (!pooled) {
        // Unpooled: every create maps fresh memory. The wait for the release
        // to complete is part of the cost (untimed would hide the munmap).
        ctx.synchronize();
        drop_cache();
      }
    }
    ctx.synchronize();
    drop_cache();
  });
}

// ---- paired: anydev and both baselines alternated ---------------------------

// Each round runs anydev's operation and memcpy/memset on one thread and on
// every core, once each, so slow changes in the machine's load hit all three
// alike. Counters: ratio_1thread and ratio_all = the median over rounds of
// (that baseline's time / anydev's time); ratio = the smaller of the two,
// i.e. anydev against whichever baseline is faster at this size; anydev_,
// base1_ and baseall_bytes_per_second from the median times.
//
// Nothing but the code may differ between the sides, so:
// - Order: the rounds cycle through all six orders of the three sides, so
//   each side follows each other side equally often. (Rotating the order
//   only, 0-1-2, 1-2-0, 2-0-1, put anydev after the two-thread baseline in
//   two rounds of three, whose data lies half in the other core's cache:
//   memset timed against itself in anydev's place measured 0.97-0.98 at
//   1 MiB.)
// - Memory: kSlots sets of buffers, one per side, reassigned among the sides
//   every kRoundsPerAssignment rounds (side s uses slot (s + offset) %
//   kSlots), so every side writes every buffer equally often. Where a
//   buffer's pages happen to lie (and whether the hypervisor backs them with
//   huge pages) moved a side's figure by several percent for a whole run
//   when each side kept its own memory: memset against itself measured
//   0.95-0.97 at 64 MiB. After each reassignment the three sides run once
//   untimed, in the next round's order, so that a timed operation always
//   finds its buffers last written by its own side, three operations
//   before, never by another side.
// The paired/control_* benchmarks run the one-thread baseline in anydev's
// place: their ratio_1thread shows what this method reads for two equal
// implementations (docs/performance.md prints it beside the ratios).
//
// The faster baseline is chosen once per size, not per round: taking the
// per-round minimum of two noisy baselines would compare anydev with the
// luckier of two samples every round, a bias against anydev (about 10% at
// DRAM-bound sizes here) that no implementation could beat.
constexpr int kSlots = 3;
constexpr int kRoundsPerAssignment = 2;
using SideFn = std::function<void(int slot)>;

void run_paired(benchmark::State& state, std::size_t bytes, const SideFn& any, const SideFn& one,
                const SideFn& all) {
  using Clock = std::chrono::steady_clock;
  static constexpr int kOrders[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1},
                                        {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
  const SideFn* sides[3] = {&any, &one, &all};
  std::vector<double> times[3], ratios1, ratios_all;
  int offset = 0;
  int round = 0;
  for (auto _ : state) {
    const int* order = kOrders[round % 6];
    if (round % kRoundsPerAssignment == 0) {
      offset = (offset + 1) % kSlots;
      for (int k = 0; k < 3; ++k) (*sides[order[k]])((order[k] + offset) % kSlots);
    }
    ++round;
    double t[3] = {0, 0, 0};
    for (int k = 0; k < 3; ++k) {
      const int side = order[k];
      const auto start = Clock::now();
      (*sides[side])((side + offset) % kSlots);
      t[side] = std::chrono::duration<double>(Clock::now() - start).count();
    }
    for (int k = 0; k < 3; ++k) times[k].push_back(t[k]);
    ratios1.push_back(t[1] / t[0]);
    ratios_all.push_back(t[2] / t[0]);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  const double b = static_cast<double>(bytes);
  state.counters["ratio_1thread"] = median(ratios1);
  state.counters["ratio_all"] = median(ratios_all);
  state.counters["ratio"] = std::min(median(ratios1), median(ratios_all));
  state.counters["anydev_bytes_per_second"] = b / median(times[0]);
  state.counters["base1_bytes_per_second"] = b / median(times[1]);
  state.counters["baseall_bytes_per_second"] = b / median(times[2]);
}

// One slot of a paired copy: a source and a destination of the direction's
// kinds. The baselines copy between the same buffers' memory (on the cpu
// backend a device address is a host address).
struct CopySlot {
  anydev::HostBuffer<std::uint8_t> host_src, host_dst;
  anydev::DeviceBuffer<std::uint8_t> dev_src, dev_dst;
  void* src = nullptr;
  void* dst = nullptr;
};

// control: the one-thread memcpy runs in anydev's place (see run_paired).
void bm_paired_copy(benchmark::State& state, std::size_t bytes, Dir dir, bool control = false) {
  guard(state, [&] {
    const anydev::DeviceContext& ctx = *g_ctx;
    const bool host_src = dir == Dir::kH2H || dir == Dir::kH2D;
    const bool host_dst = dir == Dir::kH2H || dir == Dir::kD2H;
    // One side of a slot: a host or a device buffer of `bytes` set to `value`.
    auto make = [&](bool host, int value, anydev::HostBuffer<std::uint8_t>& h,
                    anydev::DeviceBuffer<std::uint8_t>& d) -> void* {
      if (host) {
        h = ctx.enqueue_create_host_buffer<std::uint8_t>(bytes);
        ctx.enqueue_memset(h, static_cast<std::uint8_t>(value));
        return h.unsafe_ptr();
      }
      d = ctx.enqueue_create_buffer<std::uint8_t>(bytes);
      ctx.enqueue_memset(d, static_cast<std::uint8_t>(value));
      return d.unsafe_ptr();
    };
    CopySlot slots[kSlots];
    for (CopySlot& s : slots) {
      s.src = make(host_src, 1, s.host_src, s.dev_src);
      s.dst = make(host_dst, 2, s.host_dst, s.dev_dst);
    }
    ctx.synchronize();
    auto memcpy1 = [&](int k) { std::memcpy(slots[k].dst, slots[k].src, bytes); };
    run_paired(
        state, bytes,
        [&](int k) {
          if (control) return memcpy1(k);
          CopySlot& s = slots[k];
          if (dir == Dir::kH2H) ctx.enqueue_copy(s.host_dst, s.host_src);
          if (dir == Dir::kH2D) ctx.enqueue_copy(s.dev_dst, s.host_src);
          if (dir == Dir::kD2H) ctx.enqueue_copy(s.host_dst, s.dev_src);
          if (dir == Dir::kD2D) ctx.enqueue_copy(s.dev_dst, s.dev_src);
          ctx.synchronize();
        },
        memcpy1,
        [&](int k) {
          anydev_bench::parallel_memcpy(*g_threads, slots[k].dst, slots[k].src, bytes);
        });
  });
}

// control: the one-thread memset runs in anydev's place (see run_paired).
template <class T>
void bm_paired_fill(benchmark::State& state, std::size_t bytes, bool control = false) {
  guard(state, [&] {
    const anydev::DeviceContext& ctx = *g_ctx;
    std::vector<anydev::DeviceBuffer<T>> slots;
    for (int k = 0; k < kSlots; ++k) {
      slots.push_back(ctx.enqueue_create_buffer<T>(bytes / sizeof(T)));
      ctx.enqueue_memset(slots.back(), T{});
    }
    ctx.synchronize();
    unsigned char bits[sizeof(T)];
    for (std::size_t i = 0; i < sizeof(T); ++i) bits[i] = static_cast<unsigned char>(0x5A + i);
    T value;
    std::memcpy(&value, bits, sizeof(T));
    auto memset1 = [&](int k) {
      std::memset(static_cast<void*>(slots[k].unsafe_ptr()), 0x5A, bytes);
    };
    run_paired(
        state, bytes,
        [&](int k) {
          if (control) return memset1(k);
          ctx.enqueue_memset(slots[k], value);
          ctx.synchronize();
        },
        memset1,
        [&](int k) {
          anydev_bench::parallel_memset(*g_threads, slots[k].unsafe_ptr(), 0x5A, bytes);
        });
  });
}

void register_all() {
  const std::vector<std::size_t> all_sizes = sizes();
  auto add = [](const std::string& name, auto fn) {
    return benchmark::RegisterBenchmark(name.c_str(), fn)->UseRealTime();
  };
  // The paired benchmarks judge the targets: at least kPairedMinSeconds per
  // repetition (whatever --benchmark_min_time says), so that even at 256 MiB
  // each median is taken over some tens of rounds.
  constexpr double kPairedMinSeconds = 0.6;
  auto add_paired = [&add](const std::string& name, auto fn) {
    return add(name, fn)->MinTime(kPairedMinSeconds);
  };
  for (std::size_t bytes : all_sizes) {
    const std::string s = size_name(bytes);
    add("baseline/memcpy/1thread/" + s,
        [bytes](benchmark::State& st) { bm_memcpy(st, bytes, false); });
    add("baseline/memcpy/all/" + s, [bytes](benchmark::State& st) { bm_memcpy(st, bytes, true); });
    add("cpu/copy_h2h/" + s, [bytes](benchmark::State& st) { bm_copy(st, bytes, Dir::kH2H); });
    add("cpu/copy_h2d/" + s, [bytes](benchmark::State& st) { bm_copy(st, bytes, Dir::kH2D); });
    add("cpu/copy_d2h/" + s, [bytes](benchmark::State& st) { bm_copy(st, bytes, Dir::kD2H); });
    add("cpu/copy_d2d/" + s, [bytes](benchmark::State& st) { bm_copy(st, bytes, Dir::kD2D); });
    add("baseline/memset/1thread/" + s,
        [bytes](benchmark::State& st) { bm_memset(st, bytes, false); });
    add("baseline/memset/all/" + s, [bytes](benchmark::State& st) { bm_memset(st, bytes, true); });
    add("baseline/memcpy_malloc/1thread/" + s,
        [bytes](benchmark::State& st) { bm_memcpy_malloc(st, bytes, false); });
    add("baseline/memcpy_malloc/all/" + s,
        [bytes](benchmark::State& st) { bm_memcpy_malloc(st, bytes, true); });
    add("baseline/memset_malloc/1thread/" + s,
        [bytes](benchmark::State& st) { bm_memset_malloc(st, bytes, false); });
    add("baseline/memset_malloc/all/" + s,
        [bytes](benchmark::State& st) { bm_memset_malloc(st, bytes, true); });
    add("cpu/fill_1/" + s, [bytes](benchmark::State& st) { bm_fill<std::uint8_t>(st, bytes); });
    add("cpu/fill_2/" + s, [bytes](benchmark::State& st) { bm_fill<std::uint16_t>(st, bytes); });
    add("cpu/fill_4/" + s, [bytes](benchmark::State& st) { bm_fill<std::uint32_t>(st, bytes); });
    add("cpu/fill_8/" + s, [bytes](benchmark::State& st) { bm_fill<std::uint64_t>(st, bytes); });
    add("cpu/fill_16/" + s,
        [bytes](benchmark::State& st) { bm_fill<std::complex<double>>(st, bytes); });
  }
  for (std::size_t bytes : all_sizes) {
    if (bytes < kMiB) continue;  // the targets start at 1 MiB
    const std::string s = size_name(bytes);
    const std::pair<const char*, Dir> dirs[] = {
        {"h2h", Dir::kH2H}, {"h2d", Dir::kH2D}, {"d2h", Dir::kD2H}, {"d2d", Dir::kD2D}};
    for (const auto& [name, dir] : dirs) {
      add_paired(std::string("paired/copy_") + name + "/" + s,
                 [bytes, dir = dir](benchmark::State& st) { bm_paired_copy(st, bytes, dir); });
    }
    add_paired("paired/fill_1/" + s,
               [bytes](benchmark::State& st) { bm_paired_fill<std::uint8_t>(st, bytes); });
    add_paired("paired/fill_2/" + s,
               [bytes](benchmark::State& st) { bm_paired_fill<std::uint16_t>(st, bytes); });
    add_paired("paired/fill_4/" + s,
               [bytes](benchmark::State& st) { bm_paired_fill<std::uint32_t>(st, bytes); });
    add_paired("paired/fill_8/" + s,
               [bytes](benchmark::State& st) { bm_paired_fill<std::uint64_t>(st, bytes); });
    add_paired("paired/fill_16/" + s,
               [bytes](benchmark::State& st) { bm_paired_fill<std::complex<double>>(st, bytes); });
    add_paired("paired/control_memcpy/" + s, [bytes](benchmark::State& st) {
      bm_paired_copy(st, bytes, Dir::kH2H, /*control=*/true);
    });
    add_paired("paired/control_memset/" + s, [bytes](benchmark::State& st) {
      bm_paired_fill<std::uint8_t>(st, bytes, /*control=*/true);
    });
  }
  add("cpu/roundtrip", bm_roundtrip);
  add("baseline/roundtrip_memcpy", bm_roundtrip_memcpy);
  add("cpu/enqueue", bm_enqueue);
  for (bool host : {true, false}) {
    const std::string kind = host ? "host" : "device";
    add("cpu/alloc_" + kind + "_64MiB/pooled",
        [host](benchmark::State& st) { bm_alloc(st, host, true); });
    add("cpu/alloc_" + kind + "_64MiB/unpooled",
        [host](benchmark::State& st) { bm_alloc(st, host, false); });
  }
}

// The first line of `path` ("" when unreadable).
std::string first_line(const std::string& path) {
  std::string line;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    char buffer[512];
    if (std::fgets(buffer, sizeof buffer, f) != nullptr) line = buffer;
    std::fclose(f);
  }
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

// What every figure depends on besides the code: the processor, its caches
// (CPU 0's, from sysfs: "L1d 32K, L2 1024K, L3 32768K") and the transparent
// huge page mode ("always [madvise] never").
void add_machine_context() {
  std::string model;
  if (FILE* f = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (model.empty() && std::fgets(line, sizeof line, f) != nullptr) {
      if (std::strncmp(line, "model name", 10) == 0) {
        const char* colon = std::strchr(line, ':');
        if (colon != nullptr) model = colon + 2;
      }
    }
    std::fclose(f);
  }
  while (!model.empty() && (model.back() == '\n' || model.back() == ' ')) model.pop_back();
  std::string caches;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string level = first_line(dir + "/level");
    if (level.empty()) break;
    const std::string type = first_line(dir + "/type");
    if (type == "Instruction") continue;
    const std::string name = "L" + level + (type == "Data" ? "d" : "");
    caches += (caches.empty() ? "" : ", ") + name + " " + first_line(dir + "/size");
  }
  benchmark::AddCustomContext("cpu_model", model.empty() ? "unknown" : model);
  benchmark::AddCustomContext("cpu_caches", caches.empty() ? "unknown" : caches);
  const std::string thp = first_line("/sys/kernel/mm/transparent_hugepage/enabled");
  benchmark::AddCustomContext("transparent_hugepages", thp.empty() ? "unknown" : thp);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  try {
    g_ctx.emplace(0, "cpu");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "anydev-cpu-bench: no cpu context: %s\n", e.what());
    return 1;
  }
  HostThreads threads;
  g_threads = &threads;
  benchmark::AddCustomContext("anydev_device", "cpu:0 " + g_ctx->name());
  benchmark::AddCustomContext("baseline_threads", std::to_string(threads.threads()));
  add_machine_context();
  const auto enabled = reinterpret_cast<PoolEnabled>(dlsym(RTLD_DEFAULT, "anydev_pool_enabled"));
  benchmark::AddCustomContext("anydev_pool",
                              enabled == nullptr ? "absent" : (enabled() ? "enabled" : "disabled"));
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_ctx.reset();
  return 0;
}
