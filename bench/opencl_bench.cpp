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
// Benchmark names read opencl/<operation>/<size>MiB/<anydev|raw>;
// bench/run-opencl.sh turns a run into a table of anydev/raw ratios.
//
// ANYDEV_BENCH_OPENCL_DEVICE picks anydev's OpenCL device index (default 0).
// Exits with 77 when the opencl backend is unavailable.
#include <CL/cl.h>
#include <benchmark/benchmark.h>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

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

void run_raw(benchmark::State& state, Op op, std::size_t bytes) {
  try {
    const bool needs_host = op == Op::kHostToDevice || op == Op::kDeviceToHost;
    RawBuffer device(bytes, false);
    std::optional<RawBuffer> other;
    if (needs_host) other.emplace(bytes, true);
    if (op == Op::kDeviceToDevice) other.emplace(bytes, false);
    cl_command_queue queue = g_raw->queue;
    for (auto _ : state) {
      cl_int err = CL_SUCCESS;
      switch (op) {
        case Op::kHostToDevice:
          err = clEnqueueWriteBuffer(queue, device.mem, CL_FALSE, 0, bytes, other->mapped, 0,
                                     nullptr, nullptr);
          break;
        case Op::kDeviceToHost:
          err = clEnqueueReadBuffer(queue, device.mem, CL_FALSE, 0, bytes, other->mapped, 0,
                                    nullptr, nullptr);
          break;
        case Op::kDeviceToDevice:
          err =
              clEnqueueCopyBuffer(queue, other->mem, device.mem, 0, 0, bytes, 0, nullptr, nullptr);
          break;
        default:
          err = clEnqueueFillBuffer(queue, device.mem, kPattern, pattern_size(op), 0, bytes, 0,
                                    nullptr, nullptr);
          break;
      }
      check_cl(err, "enqueue");
      check_cl(clFinish(queue), "clFinish");
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// ---- anydev ------------------------------------------------------------------

template <class T>
void fill_loop(benchmark::State& state, const anydev::DeviceContext& ctx, std::size_t bytes) {
  auto buffer = ctx.enqueue_create_buffer<T>(bytes / sizeof(T));
  T value;
  std::memcpy(&value, kPattern, sizeof(T));
  buffer.enqueue_fill(T{});
  ctx.synchronize();
  for (auto _ : state) {
    buffer.enqueue_fill(value);
    ctx.synchronize();
  }
}

void run_anydev(benchmark::State& state, Op op, std::size_t bytes) {
  try {
    const anydev::DeviceContext& ctx = *g_context;
    switch (op) {
      case Op::kFill1:
        fill_loop<std::uint8_t>(state, ctx, bytes);
        break;
      case Op::kFill4:
        fill_loop<std::uint32_t>(state, ctx, bytes);
        break;
      case Op::kFill8:
        fill_loop<std::uint64_t>(state, ctx, bytes);
        break;
      case Op::kFill16:
        fill_loop<std::complex<double>>(state, ctx, bytes);
        break;
      default: {
        auto device = ctx.enqueue_create_buffer<std::uint8_t>(bytes);
        auto host = ctx.enqueue_create_host_buffer<std::uint8_t>(bytes);
        auto other = ctx.enqueue_create_buffer<std::uint8_t>(bytes);
        host.enqueue_fill(0x11);
        device.enqueue_fill(0);
        other.enqueue_fill(0);
        ctx.synchronize();
        for (auto _ : state) {
          if (op == Op::kHostToDevice) ctx.enqueue_copy(device, host);
          if (op == Op::kDeviceToHost) ctx.enqueue_copy(host, device);
          if (op == Op::kDeviceToDevice) ctx.enqueue_copy(device, other);
          ctx.synchronize();
        }
      }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
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
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "anydev-opencl-bench: opencl device %d unavailable: %s\n", index,
                 e.what());
    return 77;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "anydev-opencl-bench: raw OpenCL set-up failed: %s\n", e.what());
    return 1;
  }
  benchmark::AddCustomContext(
      "anydev_device", g_context->api() + ":" + std::to_string(index) + " " + g_context->name());
  for (const OpInfo& info : kOps) {
    for (std::size_t mib : kSizesMiB) {
      const std::string base =
          "opencl/" + std::string(info.name) + "/" + std::to_string(mib) + "MiB/";
      const Op op = info.op;
      const std::size_t bytes = mib * kMiB;
      benchmark::RegisterBenchmark((base + "raw").c_str(),
                                   [op, bytes](benchmark::State& s) { run_raw(s, op, bytes); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark((base + "anydev").c_str(),
                                   [op, bytes](benchmark::State& s) { run_anydev(s, op, bytes); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
