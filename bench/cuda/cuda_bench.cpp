// SPDX-License-Identifier: Apache-2.0
// anydev-cuda-bench: anydev's cuda backend against the raw CUDA driver on the
// same GPU, in the same process and run (DESIGN.md section 7).
//
//   h2d/d2h_pinned_256MiB  one 256 MiB copy between pinned host memory and
//                          device memory, then synchronize (bandwidth)
//   copy4_roundtrip        one 4-byte pinned-to-device copy, then synchronize
//   copy4_enqueue          4-byte copies enqueued back to back (a synchronize
//                          every 1024): the cost of one enqueue
//   fill{4,8,16}_256MiB    a fill of 256 MiB of device memory with a 4, 8 or
//                          16-byte pattern, then synchronize; raw: one
//                          cuMemsetD32Async (8 and 16-byte patterns are one
//                          launch of anydev's fill kernel, or the fill plan
//                          when the driver refuses the module)
//   fill16_256MiB/raw_plan the fill plan anydev used before its fill kernel,
//                          made with raw calls: one strided cuMemsetD2D32Async
//                          per 4-byte word writes the first 4 KiB, then
//                          cuMemcpyAsync within the buffer doubles it
//   {h2d,d2h}_pinned_256MiB/paired
//                          the raw call and anydev's alternately, on the same
//                          memory (anydev's buffers, whose addresses the raw
//                          call uses in the same primary context); counter
//                          `ratio` = median over rounds of raw time / anydev
//                          time, the figure the copy target is judged by
//   alloc_host_64MiB       create + release of 64 MiB of pinned host memory:
//                          raw cuMemHostAlloc + cuMemFreeHost; anydev pooled
//                          (the pool has seen the size); anydev unpooled
//                          (anydev_context_release_cached_memory after each
//                          release, so every create allocates afresh)
//
// Before timing, 8- and 16-byte fills of the whole 256 MiB are read back and
// checked bit for bit (rows of 16M strided memsets are far past any limit a
// small test would reach); the summary says "exact" or where they differ.
//
// Each pair runs as .../raw (cuMemcpyHtoDAsync / cuMemcpyDtoHAsync on the
// primary context) and .../anydev (the C ABI). After the Google Benchmark
// output, a summary between "== anydev-cuda-bench summary ==" and
// "== end of summary ==" compares the medians with the targets: copy
// bandwidth >= 0.95x raw (separately and paired), 4-byte copies <= 1 us more
// than raw, pooled 64 MiB pinned create + release >= 100x faster than
// cuMemHostAlloc + cuMemFreeHost (fills are figures without a target).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "anydev/anydev.h"
#include "raw_cuda.h"

namespace anydev_bench {
namespace {

constexpr std::size_t kBigBytes = std::size_t{256} << 20;
constexpr std::size_t kAllocBytes = std::size_t{64} << 20;
constexpr int kEnqueueBatch = 1024;

std::string AnydevFailure(const char* call, anydev_status_t s) {
  return std::string(call) + " failed: " + anydev_status_name(s) + ": " +
         anydev_last_error_message();
}

// anydev's side: a cuda context on device 0 with its buffers. Lives until exit.
struct AnydevSide {
  anydev_context_t context = nullptr;
  anydev_buffer_t host_big = nullptr;
  anydev_buffer_t device_big = nullptr;
  anydev_buffer_t host4 = nullptr;
  anydev_buffer_t device4 = nullptr;
  std::string device_name;

  bool Open(std::string* error) {
    anydev_status_t s = anydev_context_create("cuda", 0, &context);
    if (s != ANYDEV_SUCCESS) return *error = AnydevFailure("anydev_context_create", s), false;
    const char* name = nullptr;
    if (anydev_context_device_name(context, &name) == ANYDEV_SUCCESS) device_name = name;
    struct Want {
      anydev_buffer_t* out;
      anydev_memory_kind_t kind;
      std::size_t count;
    };
    for (const Want& w :
         {Want{&host_big, ANYDEV_MEMORY_HOST, kBigBytes},
          Want{&device_big, ANYDEV_MEMORY_DEVICE, kBigBytes}, Want{&host4, ANYDEV_MEMORY_HOST, 4},
          Want{&device4, ANYDEV_MEMORY_DEVICE, 4}}) {
      s = anydev_buffer_create(context, w.kind, ANYDEV_DTYPE_UINT8, w.count, w.out);
      if (s != ANYDEV_SUCCESS) return *error = AnydevFailure("anydev_buffer_create", s), false;
    }
    const unsigned char one = 1;
    for (anydev_buffer_t b : {host_big, device_big, host4, device4}) {
      s = anydev_enqueue_fill(context, b, &one, 1);
      if (s != ANYDEV_SUCCESS) return *error = AnydevFailure("anydev_enqueue_fill", s), false;
    }
    s = anydev_context_synchronize(context);
    if (s != ANYDEV_SUCCESS) return *error = AnydevFailure("anydev_context_synchronize", s), false;
    return true;
  }
};

// The raw driver's buffers, on the same device.
struct RawSide {
  RawCuda* cuda = nullptr;
  void* host_big = nullptr;
  CUdeviceptr device_big = 0;
  void* host4 = nullptr;
  CUdeviceptr device4 = 0;

  bool Open(std::string* error) {
    cuda = RawCuda::Open(error);
    if (cuda == nullptr) return false;
    CUresult r = CUDA_SUCCESS;
    if ((r = cuda->MemHostAlloc(&host_big, kBigBytes, CU_MEMHOSTALLOC_PORTABLE)) != CUDA_SUCCESS ||
        (r = cuda->MemHostAlloc(&host4, 4, CU_MEMHOSTALLOC_PORTABLE)) != CUDA_SUCCESS) {
      return *error = cuda->Failure("cuMemHostAlloc", r), false;
    }
    if ((r = cuda->MemAlloc(&device_big, kBigBytes)) != CUDA_SUCCESS ||
        (r = cuda->MemAlloc(&device4, 4)) != CUDA_SUCCESS) {
      return *error = cuda->Failure("cuMemAlloc", r), false;
    }
    std::memset(host_big, 1, kBigBytes);
    std::memset(host4, 1, 4);
    return true;
  }
};

AnydevSide g_anydev;
RawSide g_raw;
std::vector<std::string> g_fill_checks;  // one line per pattern checked

// Fills the whole 256 MiB device buffer with a `size`-byte pattern through
// anydev, copies it back and compares every byte.
std::string CheckBigFill(std::size_t size) {
  unsigned char pattern[16];
  for (std::size_t i = 0; i < size; ++i) pattern[i] = static_cast<unsigned char>(0x11 * (i + 1));
  anydev_status_t s = anydev_enqueue_fill(g_anydev.context, g_anydev.device_big, pattern, size);
  if (s == ANYDEV_SUCCESS) {
    s = anydev_enqueue_copy(g_anydev.context, g_anydev.host_big, g_anydev.device_big);
  }
  if (s == ANYDEV_SUCCESS) s = anydev_context_synchronize(g_anydev.context);
  if (s != ANYDEV_SUCCESS) return AnydevFailure("fill check", s);
  anydev_buffer_info_t info = {};
  info.struct_size = sizeof(info);
  s = anydev_buffer_get_info(g_anydev.host_big, &info);
  if (s != ANYDEV_SUCCESS) return AnydevFailure("anydev_buffer_get_info", s);
  const auto* bytes = static_cast<const unsigned char*>(info.address);
  for (std::size_t i = 0; i < kBigBytes; ++i) {
    if (bytes[i] != pattern[i % size]) {
      return "WRONG: byte " + std::to_string(i) + " is " + std::to_string(bytes[i]) +
             ", expected " + std::to_string(pattern[i % size]);
    }
  }
  return "exact";
}

#define ANYDEV_BENCH_CHECK(call, expr)                             \
  do {                                                             \
    if (const anydev_status_t s_ = (expr); s_ != ANYDEV_SUCCESS) { \
      state.SkipWithError(AnydevFailure(call, s_).c_str());        \
      return;                                                      \
    }                                                              \
  } while (0)
#define ANYDEV_BENCH_CUDA(call, expr)                             \
  do {                                                            \
    if (const CUresult r_ = (expr); r_ != CUDA_SUCCESS) {         \
      state.SkipWithError(g_raw.cuda->Failure(call, r_).c_str()); \
      return;                                                     \
    }                                                             \
  } while (0)

void H2DRaw(benchmark::State& state) {
  RawCuda& c = *g_raw.cuda;
  for (auto _ : state) {
    ANYDEV_BENCH_CUDA("cuMemcpyHtoDAsync",
                      c.MemcpyHtoDAsync(g_raw.device_big, g_raw.host_big, kBigBytes, c.stream));
    ANYDEV_BENCH_CUDA("cuStreamSynchronize", c.StreamSynchronize(c.stream));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBigBytes));
}

void H2DAnydev(benchmark::State& state) {
  for (auto _ : state) {
    ANYDEV_BENCH_CHECK(
        "anydev_enqueue_copy",
        anydev_enqueue_copy(g_anydev.context, g_anydev.device_big, g_anydev.host_big));
    ANYDEV_BENCH_CHECK("anydev_context_synchronize", anydev_context_synchronize(g_anydev.context));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBigBytes));
}

void D2HRaw(benchmark::State& state) {
  RawCuda& c = *g_raw.cuda;
  for (auto _ : state) {
    ANYDEV_BENCH_CUDA("cuMemcpyDtoHAsync",
                      c.MemcpyDtoHAsync(g_raw.host_big, g_raw.device_big, kBigBytes, c.stream));
    ANYDEV_BENCH_CUDA("cuStreamSynchronize", c.StreamSynchronize(c.stream));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBigBytes));
}

void D2HAnydev(benchmark::State& state) {
  for (auto _ : state) {
    ANYDEV_BENCH_CHECK(
        "anydev_enqueue_copy",
        anydev_enqueue_copy(g_anydev.context, g_anydev.host_big, g_anydev.device_big));
    ANYDEV_BENCH_CHECK("anydev_context_synchronize", anydev_context_synchronize(g_anydev.context));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBigBytes));
}

void Copy4RoundTripRaw(benchmark::State& state) {
  RawCuda& c = *g_raw.cuda;
  for (auto _ : state) {
    ANYDEV_BENCH_CUDA("cuMemcpyHtoDAsync",
                      c.MemcpyHtoDAsync(g_raw.device4, g_raw.host4, 4, c.stream));
    ANYDEV_BENCH_CUDA("cuStreamSynchronize", c.StreamSynchronize(c.stream));
  }
}

void Copy4RoundTripAnydev(benchmark::State& state) {
  for (auto _ : state) {
    ANYDEV_BENCH_CHECK("anydev_enqueue_copy",
                       anydev_enqueue_copy(g_anydev.context, g_anydev.device4, g_anydev.host4));
    ANYDEV_BENCH_CHECK("anydev_context_synchronize", anydev_context_synchronize(g_anydev.context));
  }
}

void Copy4EnqueueRaw(benchmark::State& state) {
  RawCuda& c = *g_raw.cuda;
  int queued = 0;
  for (auto _ : state) {
    ANYDEV_BENCH_CUDA("cuMemcpyHtoDAsync",
                      c.MemcpyHtoDAsync(g_raw.device4, g_raw.host4, 4, c.stream));
    if (++queued == kEnqueueBatch) {
      ANYDEV_BENCH_CUDA("cuStreamSynchronize", c.StreamSynchronize(c.stream));
      queued = 0;
    }
  }
  ANYDEV_BENCH_CUDA("cuStreamSynchronize", c.StreamSynchronize(c.stream));
}

void Copy4EnqueueAnydev(benchmark::State& state) {
  int queued = 0;
  for (auto _ : state) {
    ANYDEV_BENCH_CHECK("anydev_enqueue_copy",
                       anydev_enqueue_copy(g_anydev.context, g_anydev.device4, g_anydev.host4));
    if (++queued == kEnqueueBatch) {
      ANYDEV_BENCH_CHECK("anydev_context_synchronize",
                         anydev_context_synchronize(g_anydev.context));
      queued = 0;
    }
  }
  ANYDEV_BENCH_CHECK("anydev_context_synchronize", anydev_context_synchronize(g_anydev.context));
}

void FillAnydev(benchmark::State& state, std::size_t size) {
  const unsigned char pattern[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  for (auto _ : state) {
    ANYDEV_BENCH_CHECK("anydev_enqueue_fill",
                       anydev_enqueue_fill(g_anydev.context, g_anydev.device_big, pattern, size));
    ANYDEV_BENCH_CHECK("anydev_context_synchronize", anydev_context_synchronize(g_anydev.context));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBigBytes));
}

void FillRaw(benchmark::State& state) {
  RawCuda& c = *g_raw.cuda;
  for (auto _ : state) {
    ANYDEV_BENCH_CUDA("cuMemsetD32Async",
                      c.MemsetD32Async(g_raw.device_big, 0x04030201u, kBigBytes / 4, c.stream));
    ANYDEV_BENCH_CUDA("cuStreamSynchronize", c.StreamSynchronize(c.stream));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBigBytes));
}

// The fill plan for a 16-byte pattern (backends/gpu/gpu_fill_plan.h), raw:
// the baseline anydev's fill kernel replaces.
void FillPlanRaw(benchmark::State& state) {
  RawCuda& c = *g_raw.cuda;
  constexpr std::size_t kHead = 4096;
  const std::uint32_t words[4] = {0x04030201u, 0x08070605u, 0x0c0b0a09u, 0x100f0e0du};
  for (auto _ : state) {
    for (std::size_t w = 0; w < 4; ++w) {
      ANYDEV_BENCH_CUDA(
          "cuMemsetD2D32Async",
          c.MemsetD2D32Async(g_raw.device_big + w * 4, 16, words[w], 1, kHead / 16, c.stream));
    }
    for (std::size_t written = kHead; written < kBigBytes;) {
      const std::size_t n = std::min(written, kBigBytes - written);
      ANYDEV_BENCH_CUDA("cuMemcpyAsync",
                        c.MemcpyAsync(g_raw.device_big + written, g_raw.device_big, n, c.stream));
      written += n;
    }
    ANYDEV_BENCH_CUDA("cuStreamSynchronize", c.StreamSynchronize(c.stream));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBigBytes));
}

void Fill4Anydev(benchmark::State& state) { FillAnydev(state, 4); }
void Fill8Anydev(benchmark::State& state) { FillAnydev(state, 8); }
void Fill16Anydev(benchmark::State& state) { FillAnydev(state, 16); }

// The address anydev_buffer_get_info reports for `buffer` (host pointer or
// device address); null on failure, with `error` set.
void* BufferAddress(anydev_buffer_t buffer, std::string* error) {
  anydev_buffer_info_t info = {};
  info.struct_size = sizeof(info);
  if (const anydev_status_t s = anydev_buffer_get_info(buffer, &info); s != ANYDEV_SUCCESS) {
    *error = AnydevFailure("anydev_buffer_get_info", s);
    return nullptr;
  }
  return info.address;
}

// Raw and anydev copies alternately (the order swapped every round) on the
// same pinned and device memory: anydev's buffers, the raw call given their
// addresses. Both sides run in device 0's primary context, anydev's on its
// stream, the raw call on RawCuda's; each waits for its copy.
void PairedCopy(benchmark::State& state, bool to_device) {
  using Clock = std::chrono::steady_clock;
  RawCuda& c = *g_raw.cuda;
  std::string error;
  void* host = BufferAddress(g_anydev.host_big, &error);
  void* device = host == nullptr ? nullptr : BufferAddress(g_anydev.device_big, &error);
  if (device == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  const auto device_address = reinterpret_cast<CUdeviceptr>(device);
  std::vector<double> raw_s, any_s, ratios;
  bool raw_first = true;
  for (auto _ : state) {
    double t_raw = 0, t_any = 0;
    for (int k = 0; k < 2; ++k) {
      const bool raw = (k == 0) == raw_first;
      const auto start = Clock::now();
      if (raw) {
        ANYDEV_BENCH_CUDA("cuMemcpy*Async",
                          to_device ? c.MemcpyHtoDAsync(device_address, host, kBigBytes, c.stream)
                                    : c.MemcpyDtoHAsync(host, device_address, kBigBytes, c.stream));
        ANYDEV_BENCH_CUDA("cuStreamSynchronize", c.StreamSynchronize(c.stream));
      } else {
        ANYDEV_BENCH_CHECK(
            "anydev_enqueue_copy",
            to_device
                ? anydev_enqueue_copy(g_anydev.context, g_anydev.device_big, g_anydev.host_big)
                : anydev_enqueue_copy(g_anydev.context, g_anydev.host_big, g_anydev.device_big));
        ANYDEV_BENCH_CHECK("anydev_context_synchronize",
                           anydev_context_synchronize(g_anydev.context));
      }
      (raw ? t_raw : t_any) = std::chrono::duration<double>(Clock::now() - start).count();
    }
    raw_first = !raw_first;
    raw_s.push_back(t_raw);
    any_s.push_back(t_any);
    ratios.push_back(t_raw / t_any);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  const double b = static_cast<double>(kBigBytes);
  state.counters["ratio"] = median(ratios);
  state.counters["raw_bytes_per_second"] = b / median(raw_s);
  state.counters["anydev_bytes_per_second"] = b / median(any_s);
}

void H2DPaired(benchmark::State& state) { PairedCopy(state, true); }
void D2HPaired(benchmark::State& state) { PairedCopy(state, false); }

void AllocHostRaw(benchmark::State& state) {
  RawCuda& c = *g_raw.cuda;
  for (auto _ : state) {
    void* p = nullptr;
    ANYDEV_BENCH_CUDA("cuMemHostAlloc", c.MemHostAlloc(&p, kAllocBytes, CU_MEMHOSTALLOC_PORTABLE));
    benchmark::DoNotOptimize(p);
    ANYDEV_BENCH_CUDA("cuMemFreeHost", c.MemFreeHost(p));
  }
}

// pooled: the pool keeps the released block for the next create (it has
// seen the size before timing starts); unpooled: the pool's cache is
// released after every release, so every create allocates pinned memory.
void AllocHostAnydev(benchmark::State& state, bool pooled) {
  // Each step returns false after reporting its failure.
  auto once = [&state] {
    anydev_buffer_t b = nullptr;
    anydev_status_t s = anydev_buffer_create(g_anydev.context, ANYDEV_MEMORY_HOST,
                                             ANYDEV_DTYPE_UINT8, kAllocBytes, &b);
    if (s != ANYDEV_SUCCESS) {
      state.SkipWithError(AnydevFailure("anydev_buffer_create", s).c_str());
      return false;
    }
    benchmark::DoNotOptimize(b);
    if ((s = anydev_buffer_release(b)) != ANYDEV_SUCCESS) {
      state.SkipWithError(AnydevFailure("anydev_buffer_release", s).c_str());
      return false;
    }
    return true;
  };
  auto drop_cache = [&state] {
    const anydev_status_t s = anydev_context_release_cached_memory(g_anydev.context);
    if (s != ANYDEV_SUCCESS) {
      state.SkipWithError(AnydevFailure("anydev_context_release_cached_memory", s).c_str());
      return false;
    }
    return true;
  };
  if (!drop_cache() || !once()) return;  // the pool has now seen the size
  for (auto _ : state) {
    if (!once() || (!pooled && !drop_cache())) return;
  }
  drop_cache();
}

void AllocHostPooled(benchmark::State& state) { AllocHostAnydev(state, true); }
void AllocHostUnpooled(benchmark::State& state) { AllocHostAnydev(state, false); }

// Keeps each benchmark's median (or its only run) as the console shows it.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  struct Figure {
    double time_us = 0;  // real time per iteration
    double bytes_per_second = 0;
    std::map<std::string, double> counters;  // the paired benchmarks' ratio and bandwidths
    std::string error;
  };

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Aggregate && !median) continue;
      Figure& f = figures_[run.run_name.function_name];
      if (run.error_occurred) f.error = run.error_message;
      f.time_us = run.GetAdjustedRealTime() * (run.time_unit == benchmark::kNanosecond    ? 1e-3
                                               : run.time_unit == benchmark::kMillisecond ? 1e3
                                               : run.time_unit == benchmark::kSecond      ? 1e6
                                                                                          : 1.0);
      const auto it = run.counters.find("bytes_per_second");
      if (it != run.counters.end()) f.bytes_per_second = it->second.value;
      for (const auto& [name, counter] : run.counters) f.counters[name] = counter.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }

  const Figure* Find(const std::string& name) const {
    const auto it = figures_.find(name);
    return it == figures_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, Figure> figures_;
};

void PrintSummary(const SummaryReporter& reporter) {
  std::printf("\n== anydev-cuda-bench summary ==\n");
  std::printf("device: %s; driver %d.%d via %s\n", g_anydev.device_name.c_str(),
              g_raw.cuda->driver_version / 1000, (g_raw.cuda->driver_version % 1000) / 10,
              g_raw.cuda->path.c_str());
  if (g_anydev.device_name.find("emulator") != std::string::npos) {
    std::printf("note: the CUDA emulator, not a GPU: these figures say nothing about hardware\n");
  }
  std::printf("| measure | anydev | raw driver | anydev vs raw | target | verdict |\n");
  std::printf("|---|---|---|---|---|---|\n");
  // A row whose figures are missing: what became of each side.
  auto not_measured = [](const char* label, const SummaryReporter::Figure* a,
                         const SummaryReporter::Figure* r) {
    auto state = [](const SummaryReporter::Figure* f) {
      return f == nullptr ? "not run" : f->error.empty() ? "ok" : f->error.c_str();
    };
    std::printf("| %s | %s | %s | - | - | not measured |\n", label, state(a), state(r));
  };
  // Bandwidth rows: `target` is the least anydev/raw ratio (0: a figure without
  // a target). Latency rows: at most 1 us more than raw.
  auto row = [&](const char* label, const std::string& name, const std::string& raw_name,
                 bool bandwidth, double target) {
    const SummaryReporter::Figure* a = reporter.Find(name + "/anydev");
    const SummaryReporter::Figure* r = reporter.Find(raw_name);
    if (a == nullptr || r == nullptr || !a->error.empty() || !r->error.empty()) {
      not_measured(label, a, r);
      return;
    }
    if (bandwidth) {
      const double ratio = a->bytes_per_second / r->bytes_per_second;
      const std::string wanted =
          target > 0 ? ">= " + std::to_string(target).substr(0, 4) + "x" : "-";
      std::printf("| %s | %.2f GB/s | %.2f GB/s | %.3fx | %s | %s |\n", label,
                  a->bytes_per_second / 1e9, r->bytes_per_second / 1e9, ratio, wanted.c_str(),
                  target <= 0       ? "(no target)"
                  : ratio >= target ? "met"
                                    : "MISSED");
    } else {
      const double extra = a->time_us - r->time_us;
      std::printf("| %s | %.3f us | %.3f us | %+.3f us | <= +1 us | %s |\n", label, a->time_us,
                  r->time_us, extra, extra <= 1.0 ? "met" : "MISSED");
    }
  };
  // Alternated on the same memory: the median of per-round ratios.
  auto paired_row = [&](const char* label, const std::string& name, double target) {
    const SummaryReporter::Figure* f = reporter.Find(name);
    if (f == nullptr || !f->error.empty()) {
      std::printf("| %s | %s | - | - | - | not measured |\n", label,
                  f == nullptr ? "not run" : f->error.c_str());
      return;
    }
    const auto counter = [f](const char* key) {
      const auto it = f->counters.find(key);
      return it == f->counters.end() ? 0.0 : it->second;
    };
    const double ratio = counter("ratio");
    std::printf("| %s | %.2f GB/s | %.2f GB/s | %.3fx | >= %.2fx | %s |\n", label,
                counter("anydev_bytes_per_second") / 1e9, counter("raw_bytes_per_second") / 1e9,
                ratio, target, ratio >= target ? "met" : "MISSED");
  };
  // How many times faster anydev is than the raw call (time ratio).
  auto speedup_row = [&](const char* label, const std::string& name, const std::string& raw_name,
                         double target) {
    const SummaryReporter::Figure* a = reporter.Find(name);
    const SummaryReporter::Figure* r = reporter.Find(raw_name);
    if (a == nullptr || r == nullptr || !a->error.empty() || !r->error.empty() || a->time_us <= 0) {
      not_measured(label, a, r);
      return;
    }
    const double speedup = r->time_us / a->time_us;
    if (target > 0) {
      std::printf("| %s | %.3f us | %.3f us | %.1fx faster | >= %.0fx faster | %s |\n", label,
                  a->time_us, r->time_us, speedup, target, speedup >= target ? "met" : "MISSED");
    } else {
      std::printf("| %s | %.3f us | %.3f us | %.2fx faster | - | (no target) |\n", label,
                  a->time_us, r->time_us, speedup);
    }
  };
  row("H2D pinned 256 MiB", "h2d_pinned_256MiB", "h2d_pinned_256MiB/raw", true, 0.95);
  row("D2H pinned 256 MiB", "d2h_pinned_256MiB", "d2h_pinned_256MiB/raw", true, 0.95);
  paired_row("H2D pinned 256 MiB, paired on the same memory", "h2d_pinned_256MiB/paired", 0.95);
  paired_row("D2H pinned 256 MiB, paired on the same memory", "d2h_pinned_256MiB/paired", 0.95);
  speedup_row("64 MiB pinned create + release, pooled (vs cuMemHostAlloc + cuMemFreeHost)",
              "alloc_host_64MiB/anydev", "alloc_host_64MiB/raw", 100);
  speedup_row("64 MiB pinned create + release, unpooled (vs cuMemHostAlloc + cuMemFreeHost)",
              "alloc_host_64MiB/anydev_unpooled", "alloc_host_64MiB/raw", 0);
  row("4-byte H2D copy + synchronize", "copy4_roundtrip", "copy4_roundtrip/raw", false, 0);
  row("4-byte H2D enqueue", "copy4_enqueue", "copy4_enqueue/raw", false, 0);
  row("fill 256 MiB, 4-byte pattern", "fill4_256MiB", "fill4_256MiB/raw", true, 0);
  row("fill 256 MiB, 8-byte pattern (vs raw 4-byte)", "fill8_256MiB", "fill4_256MiB/raw", true, 0);
  row("fill 256 MiB, 16-byte pattern (vs raw 4-byte)", "fill16_256MiB", "fill4_256MiB/raw", true,
      0);
  row("fill 256 MiB, 16-byte pattern (vs the memset + copy plan, raw)", "fill16_256MiB",
      "fill16_256MiB/raw_plan", true, 0);
  for (const std::string& line : g_fill_checks) std::printf("%s\n", line.c_str());
  std::printf("== end of summary ==\n");
}

}  // namespace
}  // namespace anydev_bench

int main(int argc, char** argv) {
  using namespace anydev_bench;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  std::string error;
  if (!g_raw.Open(&error) || !g_anydev.Open(&error)) {
    std::fprintf(stderr, "anydev-cuda-bench: setup failed: %s\n", error.c_str());
    return 1;
  }
  for (std::size_t size : {8, 16}) {
    g_fill_checks.push_back("fill check: 256 MiB with a " + std::to_string(size) +
                            "-byte pattern, read back: " + CheckBigFill(size));
  }
  struct Pair {
    const char* name;
    void (*raw)(benchmark::State&);  // null: compared with another pair's raw run
    void (*anydev)(benchmark::State&);
    double min_time;
  };
  // Every benchmark: wall-clock time, 5 repetitions, their aggregates only.
  auto add = [](const std::string& name, void (*fn)(benchmark::State&), double min_time) {
    benchmark::RegisterBenchmark(name.c_str(), fn)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(min_time)
        ->Repetitions(5)
        ->ReportAggregatesOnly(true);
  };
  for (const Pair& p : {Pair{"h2d_pinned_256MiB", H2DRaw, H2DAnydev, 0.3},
                        Pair{"d2h_pinned_256MiB", D2HRaw, D2HAnydev, 0.3},
                        Pair{"copy4_roundtrip", Copy4RoundTripRaw, Copy4RoundTripAnydev, 0.2},
                        Pair{"copy4_enqueue", Copy4EnqueueRaw, Copy4EnqueueAnydev, 0.2},
                        Pair{"fill4_256MiB", FillRaw, Fill4Anydev, 0.2},
                        Pair{"fill8_256MiB", nullptr, Fill8Anydev, 0.2},
                        Pair{"fill16_256MiB", nullptr, Fill16Anydev, 0.2},
                        Pair{"alloc_host_64MiB", AllocHostRaw, AllocHostPooled, 0.2}}) {
    if (p.raw != nullptr) add(std::string(p.name) + "/raw", p.raw, p.min_time);
    add(std::string(p.name) + "/anydev", p.anydev, p.min_time);
  }
  // Measured on their own, without a .../raw twin.
  add("h2d_pinned_256MiB/paired", H2DPaired, 0.5);
  add("d2h_pinned_256MiB/paired", D2HPaired, 0.5);
  add("alloc_host_64MiB/anydev_unpooled", AllocHostUnpooled, 0.2);
  add("fill16_256MiB/raw_plan", FillPlanRaw, 0.2);
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  PrintSummary(reporter);
  benchmark::Shutdown();
  return 0;
}
