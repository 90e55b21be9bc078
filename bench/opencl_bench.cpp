// SPDX-License-Identifier: Apache-2.0
// Copy and fill bandwidth through anydev's OpenCL backend, each measured
// beside the same operation done with raw OpenCL calls on the same device in
// the same run:
//
//   copy_h2d   pinned host buffer -> device buffer  (raw: clEnqueueWriteBuffer
//              from a mapped CL_MEM_ALLOC_HOST_PTR buffer)
//   copy_d2h   device buffer -> pinned host buffer  (raw: clEnqueueReadBuffer)
//   copy_d2d   device buffer -> device buffer       (raw: clEnqueueCopyBuffer)
//   fill_N     N-byte pattern over a device buffer  (raw: clEnqueueFillBuffer)
//
// at 1, 16, 64 and 256 MiB. Every iteration enqueues one operation and waits
// for it (anydev: synchronize(); raw: clFinish). The raw side has its own
// cl_context and in-order queue on the cl_device_id of anydev's device.
// Benchmark names read opencl/<operation>/<size>MiB/<anydev|raw|paired|paired_own>:
// anydev and raw measure one side each; paired alternates the two sides
// operation by operation and reports the median per-pair ratio (see
// run_paired), the raw side issuing its calls on anydev's own buffers
// (make_shared_pair); paired_own does the same with the raw side's own
// context and buffers. bench/run-opencl.sh turns a run into a table of anydev/raw
// ratios.
//
// Round trips (a 4-byte host->device copy and its wait) run as
// roundtrip/raw_opencl, roundtrip/anydev_opencl and roundtrip/anydev_cpu, and
// roundtrip/cpu_vs_raw_opencl/paired gives how many times faster anydev's cpu
// backend round trip is than raw OpenCL's (median of alternated pairs).
//
// ANYDEV_BENCH_OPENCL_DEVICE picks anydev's OpenCL device index (default 0).
// Exits with 77 when the opencl backend is unavailable.
#include <CL/cl.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kSizesMiB[] = {1, 16, 64, 256};

enum class Op { kHostToDevice, kDeviceToHost, kDeviceToDevice, kFill1, kFill4, kFill8, kFill16 };

struct OpInfo {
  Op op;
  const char* name;
};

constexpr OpInfo kOps[] = {
    {Op::kHostToDevice, "copy_h2d"},
    {Op::kDeviceToHost, "copy_d2h"},
    {Op::kDeviceToDevice, "copy_d2d"},
    {Op::kFill1, "fill_1"},
    {Op::kFill4, "fill_4"},
    {Op::kFill8, "fill_8"},
    {Op::kFill16, "fill_16"},
};

std::size_t pattern_size(Op op) {
  switch (op) {
    case Op::kFill1:
      return 1;
    case Op::kFill4:
      return 4;
    case Op::kFill8:
      return 8;
    case Op::kFill16:
      return 16;
    default:
      return 0;
  }
}

// The 16 pattern bytes both sides write (the first pattern_size of them).
constexpr unsigned char kPattern[16] = {0x5A, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                        0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F};

// anydev's context on the OpenCL device; set once in main.
std::optional<anydev::DeviceContext> g_context;

// ---- raw OpenCL ------------------------------------------------------------

void check_cl(cl_int err, const char* call) {
  if (err != CL_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed: " + std::to_string(err));
}

// A context and an in-order queue of the raw baseline. Lives for the process.
struct RawOpenCL {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;

  explicit RawOpenCL(cl_device_id id) : device(id) {
    cl_int err = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    check_cl(err, "clCreateContext");
    queue = clCreateCommandQueue(context, device, 0, &err);
    check_cl(err, "clCreateCommandQueue");
  }
};

std::optional<RawOpenCL> g_raw;

// A raw buffer, released when it goes out of scope.
struct RawBuffer {
  cl_mem mem = nullptr;
  void* mapped = nullptr;  // pinned host buffers only

  RawBuffer(std::size_t bytes, bool pinned_host) {
    cl_int err = CL_SUCCESS;
    const cl_mem_flags flags = CL_MEM_READ_WRITE | (pinned_host ? CL_MEM_ALLOC_HOST_PTR : 0);
    mem = clCreateBuffer(g_raw->context, flags, bytes, nullptr, &err);
    check_cl(err, "clCreateBuffer");
    if (pinned_host) {
      mapped = clEnqueueMapBuffer(g_raw->queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes,
                                  0, nullptr, nullptr, &err);
      check_cl(err, "clEnqueueMapBuffer");
      std::memset(mapped, 0x11, bytes);
    } else {
      const unsigned char zero = 0;
      check_cl(clEnqueueFillBuffer(g_raw->queue, mem, &zero, 1, 0, bytes, 0, nullptr, nullptr),
               "clEnqueueFillBuffer");
    }
    check_cl(clFinish(g_raw->queue), "clFinish");
  }
  ~RawBuffer() {
    if (mapped != nullptr) {
      clEnqueueUnmapMemObject(g_raw->queue, mem, mapped, 0, nullptr, nullptr);
      clFinish(g_raw->queue);
    }
    clReleaseMemObject(mem);
  }
  RawBuffer(const RawBuffer&) = delete;
  RawBuffer& operator=(const RawBuffer&) = delete;
};

// One operation plus its wait, ready to repeat; owns its buffers.
using Case = std::function<void()>;

// The raw side of one operation on `queue`, and its wait: `device` is the
// destination (the source of a device->host copy), `other` the device source
// of a device->device copy, `mapped` the host pointer of a host copy.
void run_raw(cl_command_queue queue, Op op, std::size_t bytes, cl_mem device, cl_mem other,
             void* mapped) {
  cl_int err = CL_SUCCESS;
  switch (op) {
    case Op::kHostToDevice:
      err = clEnqueueWriteBuffer(queue, device, CL_FALSE, 0, bytes, mapped, 0, nullptr, nullptr);
      break;
    case Op::kDeviceToHost:
      err = clEnqueueReadBuffer(queue, device, CL_FALSE, 0, bytes, mapped, 0, nullptr, nullptr);
      break;
    case Op::kDeviceToDevice:
      err = clEnqueueCopyBuffer(queue, other, device, 0, 0, bytes, 0, nullptr, nullptr);
      break;
    default:
      err = clEnqueueFillBuffer(queue, device, kPattern, pattern_size(op), 0, bytes, 0, nullptr,
                                nullptr);
      break;
  }
  check_cl(err, "enqueue");
  check_cl(clFinish(queue), "clFinish");
}

Case make_raw(Op op, std::size_t bytes) {
  const bool needs_host = op == Op::kHostToDevice || op == Op::kDeviceToHost;
  auto device = std::make_shared<RawBuffer>(bytes, false);
  std::shared_ptr<RawBuffer> other;
  if (needs_host) other = std::make_shared<RawBuffer>(bytes, true);
  if (op == Op::kDeviceToDevice) other = std::make_shared<RawBuffer>(bytes, false);
  return [op, bytes, device, other] {
    run_raw(g_raw->queue, op, bytes, device->mem, other ? other->mem : nullptr,
            other ? other->mapped : nullptr);
  };
}

template <class T>
Case make_anydev_fill(const anydev::DeviceContext& ctx, std::size_t bytes) {
  auto buffer = ctx.enqueue_create_buffer<T>(bytes / sizeof(T));
  T value;
  std::memcpy(&value, kPattern, sizeof(T));
  buffer.enqueue_fill(T{});
  ctx.synchronize();
  return [ctx, buffer, value] {
    buffer.enqueue_fill(value);
    ctx.synchronize();
  };
}

Case make_anydev(Op op, std::size_t bytes) {
  const anydev::DeviceContext& ctx = *g_context;
  switch (op) {
    case Op::kFill1:
      return make_anydev_fill<std::uint8_t>(ctx, bytes);
    case Op::kFill4:
      return make_anydev_fill<std::uint32_t>(ctx, bytes);
    case Op::kFill8:
      return make_anydev_fill<std::uint64_t>(ctx, bytes);
    case Op::kFill16:
      return make_anydev_fill<std::complex<double>>(ctx, bytes);
    default:
      break;
  }
  auto device = ctx.enqueue_create_buffer<std::uint8_t>(bytes);
  std::optional<anydev::HostBuffer<std::uint8_t>> host;
  std::optional<anydev::DeviceBuffer<std::uint8_t>> other;
  device.enqueue_fill(0);
  if (op == Op::kDeviceToDevice) {
    other.emplace(ctx.enqueue_create_buffer<std::uint8_t>(bytes));
    other->enqueue_fill(0);
  } else {
    host.emplace(ctx.enqueue_create_host_buffer<std::uint8_t>(bytes));
    host->enqueue_fill(0x11);
  }
  ctx.synchronize();
  return [op, ctx, device, host, other] {
    if (op == Op::kHostToDevice) ctx.enqueue_copy(device, *host);
    if (op == Op::kDeviceToHost) ctx.enqueue_copy(*host, device);
    if (op == Op::kDeviceToDevice) ctx.enqueue_copy(device, *other);
    ctx.synchronize();
  };
}

// A raw queue in anydev's own cl_context on the same device, for the raw side
// of the paired benchmarks; created once in main.
cl_command_queue g_shared_queue = nullptr;

// Raw OpenCL calls on anydev's own buffers: the anydev case `any` and a raw
// case that issues the same OpenCL command on the same cl_mem objects and
// mapped host pointers (through g_shared_queue, then clFinish). The two then
// differ only in the code that issues the command, which is what the ratio
// is meant to measure; with separate allocations, where each side's memory
// happens to lie moved ratios at DRAM-bound sizes by up to +-20% from one run
// to the next (the raw side's own-context figures are reported beside).
struct SharedPair {
  Case raw;
  Case any;
};

// The buffer's own cl_mem: the raw calls address it from byte 0, so a
// buffer the pool carved out of a shared cl_mem (up to 16 KiB) cannot be used.
void* buffer_handle(anydev_buffer_t buffer) {
  void* out = nullptr;
  anydev::detail::check(anydev_buffer_native_handle(buffer, &out));
  anydev_buffer_info_t info{};
  info.struct_size = sizeof info;
  anydev::detail::check(anydev_buffer_get_info(buffer, &info));
  if (info.native_offset_bytes != 0) {
    throw std::runtime_error("a paired case needs a buffer that starts its cl_mem (above 16 KiB)");
  }
  return out;
}

template <class T>
SharedPair make_shared_fill(Op op, std::size_t bytes) {
  const anydev::DeviceContext& ctx = *g_context;
  auto buffer = ctx.enqueue_create_buffer<T>(bytes / sizeof(T));
  buffer.enqueue_fill(T{});
  ctx.synchronize();
  T value;
  std::memcpy(&value, kPattern, sizeof(T));
  auto mem = static_cast<cl_mem>(buffer_handle(buffer.handle()));
  Case raw = [op, buffer, mem, bytes] {
    run_raw(g_shared_queue, op, bytes, mem, nullptr, nullptr);
  };
  Case any = [ctx, buffer, value] {
    buffer.enqueue_fill(value);
    ctx.synchronize();
  };
  return {std::move(raw), std::move(any)};
}

SharedPair make_shared_pair(Op op, std::size_t bytes) {
  switch (op) {
    case Op::kFill1:
      return make_shared_fill<std::uint8_t>(op, bytes);
    case Op::kFill4:
      return make_shared_fill<std::uint32_t>(op, bytes);
    case Op::kFill8:
      return make_shared_fill<std::uint64_t>(op, bytes);
    case Op::kFill16:
      return make_shared_fill<std::complex<double>>(op, bytes);
    default:
      break;
  }
  const anydev::DeviceContext& ctx = *g_context;
  auto device = ctx.enqueue_create_buffer<std::uint8_t>(bytes);
  auto other = ctx.enqueue_create_buffer<std::uint8_t>(bytes);
  auto host = ctx.enqueue_create_host_buffer<std::uint8_t>(bytes);
  device.enqueue_fill(0);
  other.enqueue_fill(0);
  host.enqueue_fill(0x11);
  ctx.synchronize();
  auto mem = static_cast<cl_mem>(buffer_handle(device.handle()));
  auto other_mem = static_cast<cl_mem>(buffer_handle(other.handle()));
  void* mapped = host.unsafe_ptr();
  Case raw = [op, bytes, device, other, host, mem, other_mem, mapped] {
    run_raw(g_shared_queue, op, bytes, mem, other_mem, mapped);
  };
  Case any = [op, ctx, device, other, host] {
    if (op == Op::kHostToDevice) ctx.enqueue_copy(device, host);
    if (op == Op::kDeviceToHost) ctx.enqueue_copy(host, device);
    if (op == Op::kDeviceToDevice) ctx.enqueue_copy(device, other);
    ctx.synchronize();
  };
  return {std::move(raw), std::move(any)};
}

// One side alone: Google Benchmark's real time per operation.
void run_side(benchmark::State& state, Case (*make)(Op, std::size_t), Op op, std::size_t bytes) {
  try {
    Case once = make(op, bytes);
    for (auto _ : state) once();
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Both sides alternately, each iteration one raw and one anydev operation
// (their order swapped every iteration): slow changes in the machine's load
// hit both alike, so the median of the per-pair time ratios is the fairest
// figure on a shared machine. Counters: ratio (anydev bandwidth / raw
// bandwidth), raw_bytes_per_second and anydev_bytes_per_second (from the
// median times). `shared`: the raw side works on anydev's buffers
// (make_shared_pair); else on its own context and buffers.
void run_paired(benchmark::State& state, Op op, std::size_t bytes, bool shared) {
  using Clock = std::chrono::steady_clock;
  try {
    Case raw, any;
    if (shared) {
      SharedPair pair = make_shared_pair(op, bytes);
      raw = std::move(pair.raw);
      any = std::move(pair.any);
    } else {
      raw = make_raw(op, bytes);
      any = make_anydev(op, bytes);
    }
    std::vector<double> raw_s, any_s, ratios;
    bool raw_first = true;
    for (auto _ : state) {
      double t_raw = 0, t_any = 0;
      for (int side = 0; side < 2; ++side) {
        const bool do_raw = (side == 0) == raw_first;
        const auto start = Clock::now();
        (do_raw ? raw : any)();
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        (do_raw ? t_raw : t_any) = seconds;
      }
      raw_first = !raw_first;
      raw_s.push_back(t_raw);
      any_s.push_back(t_any);
      ratios.push_back(t_raw / t_any);
    }
    const double b = static_cast<double>(bytes);
    state.counters["ratio"] = median(ratios);
    state.counters["raw_bytes_per_second"] = b / median(raw_s);
    state.counters["anydev_bytes_per_second"] = b / median(any_s);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// ---- round trip: a 4-byte host->device copy and its wait -------------------

// Raw OpenCL: clEnqueueWriteBuffer of 4 bytes from a mapped pinned buffer, then
// clFinish.
Case make_raw_roundtrip() {
  auto device = std::make_shared<RawBuffer>(4, false);
  auto host = std::make_shared<RawBuffer>(4, true);
  return [device, host] {
    check_cl(clEnqueueWriteBuffer(g_raw->queue, device->mem, CL_FALSE, 0, 4, host->mapped, 0,
                                  nullptr, nullptr),
             "clEnqueueWriteBuffer");
    check_cl(clFinish(g_raw->queue), "clFinish");
  };
}

// anydev: enqueue_copy of a 4-byte host buffer to a device buffer, then
// synchronize(), on `ctx` (the opencl context, or the cpu backend's).
Case make_anydev_roundtrip(const anydev::DeviceContext& ctx) {
  auto host = ctx.enqueue_create_host_buffer<std::uint32_t>(1);
  auto device = ctx.enqueue_create_buffer<std::uint32_t>(1);
  ctx.enqueue_memset(host, 7u);
  ctx.synchronize();
  return [ctx, host, device] {
    ctx.enqueue_copy(device, host);
    ctx.synchronize();
  };
}

std::optional<anydev::DeviceContext> g_cpu_context;

void run_case(benchmark::State& state, const std::function<Case()>& make) {
  try {
    Case once = make();
    for (auto _ : state) once();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Two cases alternately, as run_paired does; counter ratio = median of
// (time of `slow` / time of `fast`), so "how many times faster `fast` is".
void run_paired_cases(benchmark::State& state, const std::function<Case()>& make_fast,
                      const std::function<Case()>& make_slow) {
  using Clock = std::chrono::steady_clock;
  try {
    Case fast = make_fast();
    Case slow = make_slow();
    std::vector<double> fast_s, slow_s, ratios;
    bool fast_first = true;
    for (auto _ : state) {
      double t_fast = 0, t_slow = 0;
      for (int side = 0; side < 2; ++side) {
        const bool do_fast = (side == 0) == fast_first;
        const auto start = Clock::now();
        (do_fast ? fast : slow)();
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        (do_fast ? t_fast : t_slow) = seconds;
      }
      fast_first = !fast_first;
      fast_s.push_back(t_fast);
      slow_s.push_back(t_slow);
      ratios.push_back(t_slow / t_fast);
    }
    state.counters["ratio"] = median(ratios);
    state.counters["fast_seconds"] = median(fast_s);
    state.counters["slow_seconds"] = median(slow_s);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// roundtrip/<raw_opencl|anydev_opencl|anydev_cpu>, and
// roundtrip/cpu_vs_raw_opencl/paired (ratio: how many times faster anydev's
// cpu backend round trip is than raw OpenCL's on this device).
void register_roundtrips() {
  try {
    g_cpu_context.emplace(0, "cpu");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "anydev-opencl-bench: no cpu context (%s); cpu round trip skipped\n",
                 e.what());
  }
  const std::function<Case()> raw = make_raw_roundtrip;
  const std::function<Case()> any_cl = [] { return make_anydev_roundtrip(*g_context); };
  const std::function<Case()> any_cpu = [] {
    if (!g_cpu_context) throw std::runtime_error("no cpu context");
    return make_anydev_roundtrip(*g_cpu_context);
  };
  auto add = [](const char* name, std::function<void(benchmark::State&)> fn) {
    benchmark::RegisterBenchmark(name, std::move(fn))->UseRealTime()->Unit(benchmark::kMicrosecond);
  };
  add("roundtrip/raw_opencl", [raw](benchmark::State& s) { run_case(s, raw); });
  add("roundtrip/anydev_opencl", [any_cl](benchmark::State& s) { run_case(s, any_cl); });
  add("roundtrip/anydev_cpu", [any_cpu](benchmark::State& s) { run_case(s, any_cpu); });
  add("roundtrip/cpu_vs_raw_opencl/paired",
      [any_cpu, raw](benchmark::State& s) { run_paired_cases(s, any_cpu, raw); });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const char* index_text = std::getenv("ANYDEV_BENCH_OPENCL_DEVICE");
  const int index = index_text != nullptr ? std::atoi(index_text) : 0;
  try {
    g_context.emplace(index, "opencl");
    auto device = static_cast<cl_device_id>(g_context->native_handle(ANYDEV_NATIVE_DEVICE));
    g_raw.emplace(device);
    cl_int err = CL_SUCCESS;
    g_shared_queue = clCreateCommandQueue(
        static_cast<cl_context>(g_context->native_handle(ANYDEV_NATIVE_CONTEXT)), device, 0, &err);
    check_cl(err, "clCreateCommandQueue (in anydev's cl_context)");
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "anydev-opencl-bench: opencl device %d unavailable: %s\n", index,
                 e.what());
    return 77;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "anydev-opencl-bench: raw OpenCL set-up failed: %s\n", e.what());
    return 1;
  }
  register_roundtrips();
  benchmark::AddCustomContext(
      "anydev_device", g_context->api() + ":" + std::to_string(index) + " " + g_context->name());
  for (const OpInfo& info : kOps) {
    for (std::size_t mib : kSizesMiB) {
      const std::string base =
          "opencl/" + std::string(info.name) + "/" + std::to_string(mib) + "MiB/";
      const Op op = info.op;
      const std::size_t bytes = mib * kMiB;
      benchmark::RegisterBenchmark(
          (base + "raw").c_str(),
          [op, bytes](benchmark::State& s) { run_side(s, make_raw, op, bytes); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(
          (base + "anydev").c_str(),
          [op, bytes](benchmark::State& s) { run_side(s, make_anydev, op, bytes); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
      for (const bool shared : {true, false}) {
        benchmark::RegisterBenchmark(
            (base + (shared ? "paired" : "paired_own")).c_str(),
            [op, bytes, shared](benchmark::State& s) { run_paired(s, op, bytes, shared); })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
