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
//                          cuMemsetD32Async (8 and 16-byte patterns take one
//                          strided cuMemsetD2D32Async per word in anydev)
//
// Before timing, 8- and 16-byte fills of the whole 256 MiB are read back and
// checked bit for bit (rows of 16M strided memsets are far past any limit a
// small test would reach); the summary says "exact" or where they differ.
//
// Each pair runs as .../raw (cuMemcpyHtoDAsync / cuMemcpyDtoHAsync on the
// primary context) and .../anydev (the C ABI). After the Google Benchmark
// output, a summary between "== anydev-cuda-bench summary ==" and
// "== end of summary ==" compares the medians with the targets: copy
// bandwidth >= 0.95x raw, 4-byte copies <= 1 us more than raw (fills are
// figures without a target).
#include <benchmark/benchmark.h>

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

void Fill4Anydev(benchmark::State& state) { FillAnydev(state, 4); }
void Fill8Anydev(benchmark::State& state) { FillAnydev(state, 8); }
void Fill16Anydev(benchmark::State& state) { FillAnydev(state, 16); }

// Keeps each benchmark's median (or its only run) as the console shows it.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  struct Figure {
    double time_us = 0;  // real time per iteration
    double bytes_per_second = 0;
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
  // Bandwidth rows: `target` is the least anydev/raw ratio (0: a figure without
  // a target). Latency rows: at most 1 us more than raw.
  auto row = [&](const char* label, const std::string& name, const std::string& raw_name,
                 bool bandwidth, double target) {
    const SummaryReporter::Figure* a = reporter.Find(name + "/anydev");
    const SummaryReporter::Figure* r = reporter.Find(raw_name);
    if (a == nullptr || r == nullptr || !a->error.empty() || !r->error.empty()) {
      std::printf("| %s | %s | %s | - | - | not measured |\n", label,
                  a == nullptr       ? "not run"
                  : a->error.empty() ? "ok"
                                     : a->error.c_str(),
                  r == nullptr       ? "not run"
                  : r->error.empty() ? "ok"
                                     : r->error.c_str());
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
  row("H2D pinned 256 MiB", "h2d_pinned_256MiB", "h2d_pinned_256MiB/raw", true, 0.95);
  row("D2H pinned 256 MiB", "d2h_pinned_256MiB", "d2h_pinned_256MiB/raw", true, 0.95);
  row("4-byte H2D copy + synchronize", "copy4_roundtrip", "copy4_roundtrip/raw", false, 0);
  row("4-byte H2D enqueue", "copy4_enqueue", "copy4_enqueue/raw", false, 0);
  row("fill 256 MiB, 4-byte pattern", "fill4_256MiB", "fill4_256MiB/raw", true, 0);
  row("fill 256 MiB, 8-byte pattern (vs raw 4-byte)", "fill8_256MiB", "fill4_256MiB/raw", true, 0);
  row("fill 256 MiB, 16-byte pattern (vs raw 4-byte)", "fill16_256MiB", "fill4_256MiB/raw", true,
      0);
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
  for (const Pair& p : {Pair{"h2d_pinned_256MiB", H2DRaw, H2DAnydev, 0.3},
                        Pair{"d2h_pinned_256MiB", D2HRaw, D2HAnydev, 0.3},
                        Pair{"copy4_roundtrip", Copy4RoundTripRaw, Copy4RoundTripAnydev, 0.2},
                        Pair{"copy4_enqueue", Copy4EnqueueRaw, Copy4EnqueueAnydev, 0.2},
                        Pair{"fill4_256MiB", FillRaw, Fill4Anydev, 0.2},
                        Pair{"fill8_256MiB", nullptr, Fill8Anydev, 0.2},
                        Pair{"fill16_256MiB", nullptr, Fill16Anydev, 0.2}}) {
    for (const auto& [side, fn] : {std::pair{"raw", p.raw}, std::pair{"anydev", p.anydev}}) {
      if (fn == nullptr) continue;
      benchmark::RegisterBenchmark((std::string(p.name) + "/" + side).c_str(), fn)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(p.min_time)
          ->Repetitions(5)
          ->ReportAggregatesOnly(true);
    }
  }
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  PrintSummary(reporter);
  benchmark::Shutdown();
  return 0;
}
