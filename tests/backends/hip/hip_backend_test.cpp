// SPDX-License-Identifier: Apache-2.0
// The hip backend's own rules that the conformance suite does not reach,
// run against the HIP emulator (ANYDEV_HIP_LIBRARY: the 5.2 variant without
// hipMemsetD2D32Async, or the ROCm 7 variant with it; ctest runs both, with
// ANYDEV_HIP_EMULATOR_DEVICES=2):
//   - the GPU core's fill plan writes exact bits at every size, strided and
//     replicated (pure: no runtime);
//   - fills through the backend write exact bits at every size and offset,
//     by whichever path the runtime allows (the calls counted prove which);
//   - the thread's current device is the caller's again after every anydev
//     call (an embedding runtime shares the thread);
//   - zero sizes and null frees are refused before any runtime call, whatever
//     the runtime would do with them (hipMalloc(0) succeeds in HIP);
//   - steady-state copies and 1-, 2- and 4-byte fills are one runtime call;
//   - DLPack exports device memory as kDLROCM and pinned memory as
//     kDLROCMHost.
#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>
#include <hip/hip_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "anydev/anydev.h"
#include "anydev/anydev_dlpack.h"
#include "anydev/backend.h"
#include "gpu_fill_plan.h"

namespace {

std::string last_error() { return anydev_last_error_message(); }

#define ASSERT_OK(expr) ASSERT_EQ((expr), ANYDEV_SUCCESS) << last_error()

// ---- the fill plan, executed on host memory ---------------------------------

// Runs `plan` over `out` as a device would: memsets of elements, strided
// rows, then the replicating copies in order.
void run_plan(const anydev::gpu::FillPlan& plan, std::vector<unsigned char>& out,
              std::size_t* copies) {
  using anydev::gpu::FillPass;
  unsigned char* base = out.data();
  for (int i = 0; i < plan.size; ++i) {
    const FillPass& p = plan.passes[static_cast<std::size_t>(i)];
    const std::size_t element = p.kind == FillPass::Kind::kD8    ? 1
                                : p.kind == FillPass::Kind::kD16 ? 2
                                                                 : 4;
    const std::size_t rows = p.kind == FillPass::Kind::kD2D32 ? p.count : 1;
    const std::size_t per_row = p.kind == FillPass::Kind::kD2D32 ? 1 : p.count;
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t e = 0; e < per_row; ++e) {
        std::memcpy(base + p.offset + r * p.pitch + e * element, &p.value, element);
      }
    }
  }
  *copies = 0;
  for (std::size_t written = plan.replicate_from; written != 0 && written < out.size();) {
    const anydev::gpu::FillCopy c = anydev::gpu::next_replica(written, out.size());
    ASSERT_LE(c.offset + c.bytes, out.size());
    ASSERT_LE(c.bytes, c.offset) << "a copy may read only what is written";
    std::memcpy(base + c.offset, base, c.bytes);
    written += c.bytes;
    ++*copies;
  }
}

TEST(GpuFillPlan, StridedAndReplicatedPlansWriteExactBitsAtEverySize) {
  const std::array<unsigned char, 16> distinct = {1, 2,  3,  4,  5,  6,  7,  8,
                                                  9, 10, 11, 12, 13, 14, 15, 16};
  const std::array<unsigned char, 16> halves = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8};
  for (const auto* pattern : {&distinct, &halves}) {
    for (std::size_t size : {8u, 16u}) {
      std::vector<std::size_t> repeats;
      for (std::size_t r = 0; r <= 70; ++r) repeats.push_back(r);
      for (std::size_t r : {127u, 128u, 129u, 1000u, 4097u}) repeats.push_back(r);
      for (bool strided : {true, false}) {
        for (std::size_t r : repeats) {
          SCOPED_TRACE(std::to_string(size) + "-byte pattern, " + std::to_string(r) +
                       " repetitions, " + (strided ? "strided" : "replicated"));
          const std::size_t bytes = r * size;
          const anydev::gpu::FillPlan plan =
              anydev::gpu::plan_fill(pattern->data(), size, bytes, strided);
          std::vector<unsigned char> out(bytes, 0xee);
          std::size_t copies = 0;
          run_plan(plan, out, &copies);
          for (std::size_t i = 0; i < bytes; ++i) {
            ASSERT_EQ(out[i], (*pattern)[i % size]) << "byte " << i;
          }
          // The head: one period, or strided up to kStridedFillHeadBytes;
          // then log2(bytes / head) copies, rounded up, and no more.
          const std::size_t period = pattern == &halves ? 8 : size;
          const std::size_t head =
              strided ? std::min(bytes, anydev::gpu::kStridedFillHeadBytes) : period;
          std::size_t expected = 0;
          for (std::size_t have = head; have < bytes; have *= 2) ++expected;
          EXPECT_EQ(copies, expected);
          if (bytes > head) {
            EXPECT_EQ(plan.replicate_from, head);
          }
        }
      }
    }
  }
}

// A strided memset writes one 4-byte row per element, hundreds of times
// slower than a 32-bit memset (docs/hardware-results.md): however long the
// fill, strided memsets write only its head, and copies of whole blocks the
// rest (for 256 MiB: 2 or 4 memsets of 4 KiB and 16 copies).
TEST(GpuFillPlan, StridedMemsetsWriteOnlyTheHeadOfALongFill) {
  const std::array<unsigned char, 16> pattern = {1, 2,  3,  4,  5,  6,  7,  8,
                                                 9, 10, 11, 12, 13, 14, 15, 16};
  constexpr std::size_t kBytes = std::size_t{256} << 20;
  for (std::size_t size : {8u, 16u}) {
    SCOPED_TRACE(std::to_string(size) + "-byte pattern over 256 MiB");
    const anydev::gpu::FillPlan plan = anydev::gpu::plan_fill(pattern.data(), size, kBytes, true);
    ASSERT_EQ(plan.size, static_cast<int>(size / 4));
    for (int i = 0; i < plan.size; ++i) {
      const anydev::gpu::FillPass& p = plan.passes[static_cast<std::size_t>(i)];
      EXPECT_EQ(p.kind, anydev::gpu::FillPass::Kind::kD2D32);
      EXPECT_EQ(p.count * p.pitch, anydev::gpu::kStridedFillHeadBytes) << "pass " << i;
    }
    ASSERT_EQ(plan.replicate_from, anydev::gpu::kStridedFillHeadBytes);
    std::size_t copies = 0;
    for (std::size_t written = plan.replicate_from; written < kBytes; ++copies) {
      written += anydev::gpu::next_replica(written, kBytes).bytes;
    }
    EXPECT_EQ(copies, 16u);
  }
}

// ---- the backend on the emulator ---------------------------------------------

// Contexts and buffers of the C ABI, released at the end of their scope;
// null when creation failed (last_error() says why).
struct Release {
  void operator()(anydev_context_t c) const { anydev_context_release(c); }
  void operator()(anydev_buffer_t b) const { anydev_buffer_release(b); }
};
using Context = std::unique_ptr<std::remove_pointer_t<anydev_context_t>, Release>;
using Buffer = std::unique_ptr<std::remove_pointer_t<anydev_buffer_t>, Release>;

Context hip_context(int device) {
  anydev_context_t c = nullptr;
  return Context(anydev_context_create("hip", device, &c) == ANYDEV_SUCCESS ? c : nullptr);
}

Buffer buffer(const Context& ctx, anydev_memory_kind_t kind, anydev_dtype_t dtype,
              std::size_t count) {
  anydev_buffer_t b = nullptr;
  return Buffer(
      anydev_buffer_create(ctx.get(), kind, dtype, count, &b) == ANYDEV_SUCCESS ? b : nullptr);
}

// The emulator the backend opened (dlopen of the same path finds it): the
// thread's current device as an application sees it, and the emulator's call
// counts. Read-only after construction; thread-safe.
struct Emulator {
  Emulator() {
    const char* path = std::getenv("ANYDEV_HIP_LIBRARY");
    library = path == nullptr ? nullptr : dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (library == nullptr) library = path == nullptr ? nullptr : dlopen(path, RTLD_NOW);
    if (library == nullptr) return;
    get_device = reinterpret_cast<hipError_t (*)(int*)>(dlsym(library, "hipGetDevice"));
    set_device = reinterpret_cast<hipError_t (*)(int)>(dlsym(library, "hipSetDevice"));
    reset = reinterpret_cast<void (*)()>(dlsym(library, "anydev_hip_emulator_reset_call_counts"));
    count = reinterpret_cast<unsigned long long (*)(const char*)>(
        dlsym(library, "anydev_hip_emulator_call_count"));
    counts = reinterpret_cast<unsigned long long (*)(char*, std::size_t)>(
        dlsym(library, "anydev_hip_emulator_call_counts"));
    strided_fill = dlsym(library, "hipMemsetD2D32Async") != nullptr;
  }
  bool complete() const {
    return get_device != nullptr && set_device != nullptr && reset != nullptr && count != nullptr &&
           counts != nullptr;
  }
  int current() const {
    int device = -1;
    return get_device(&device) == hipSuccess ? device : -1;
  }
  // "hipMemcpyAsync=1 ...": every non-zero count since the last reset.
  std::string text() const {
    char buffer[2048] = {};
    counts(buffer, sizeof buffer);
    return buffer;
  }

  void* library = nullptr;
  hipError_t (*get_device)(int*) = nullptr;
  hipError_t (*set_device)(int) = nullptr;
  void (*reset)() = nullptr;
  unsigned long long (*count)(const char*) = nullptr;
  unsigned long long (*counts)(char*, std::size_t) = nullptr;
  bool strided_fill = false;
};

const Emulator& emulator() {
  static const Emulator* e = new Emulator;
  return *e;
}

class HipBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(emulator().complete())
        << "run with ANYDEV_HIP_LIBRARY set to the HIP emulator (ctest does)";
    ASSERT_EQ(anydev_device_count("hip"), 2) << "run with ANYDEV_HIP_EMULATOR_DEVICES=2";
  }
};

// The buffer's first `bytes` bytes once the context's work is done (0xee
// where the copy failed, which the test reports).
std::vector<unsigned char> read_back(const Context& ctx, const Buffer& buf, std::size_t bytes) {
  std::vector<unsigned char> out(bytes, 0xee);
  const anydev_status_t copied =
      anydev_enqueue_copy_to_host(ctx.get(), out.data(), bytes, buf.get());
  const anydev_status_t synchronized = anydev_context_synchronize(ctx.get());
  EXPECT_TRUE(copied == ANYDEV_SUCCESS && synchronized == ANYDEV_SUCCESS) << last_error();
  return out;
}

// A plugin's table, opened directly: the same library (and state) the core
// loaded, so the core's services stay in place and errors reach
// anydev_last_error_message(). Read-only after construction.
struct Plugin {
  explicit Plugin(const char* path) {
    void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    auto entry = library == nullptr
                     ? nullptr
                     : reinterpret_cast<anydev_status_t (*)(uint32_t, const anydev_core_services_t*,
                                                            const anydev_backend_table_t**)>(
                           dlsym(library, "anydev_backend_entry"));
    if (entry == nullptr || entry(ANYDEV_BACKEND_ABI_VERSION, nullptr, &table) != ANYDEV_SUCCESS) {
      table = nullptr;
    }
  }
  const anydev_backend_table_t* table = nullptr;
};

// The vendor library's call counters, by the emulator's export prefix.
struct Counters {
  explicit Counters(const char* library_variable, const std::string& prefix) {
    const char* path = std::getenv(library_variable);
    void* library = path == nullptr ? nullptr : dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (library == nullptr) return;
    reset = reinterpret_cast<void (*)()>(dlsym(library, (prefix + "_reset_call_counts").c_str()));
    count = reinterpret_cast<unsigned long long (*)(const char*)>(
        dlsym(library, (prefix + "_call_count").c_str()));
  }
  void (*reset)() = nullptr;
  unsigned long long (*count)(const char*) = nullptr;
};

// The GPU core's one rule for zero sizes and null frees, on the plugin at
// `plugin_path` (its backend initialized by the core): INVALID_ARGUMENT
// naming the operation, nothing written, and none of `allocator_calls`
// made.
void expect_zero_sizes_and_null_frees_refused(const char* plugin_path, const Counters& counters,
                                              std::initializer_list<const char*> allocator_calls) {
  const Plugin plugin(plugin_path);
  ASSERT_NE(plugin.table, nullptr) << plugin_path;
  ASSERT_TRUE(counters.reset != nullptr && counters.count != nullptr) << "no call counters";
  const anydev_backend_table_t& t = *plugin.table;
  anydev_bk_stream_t stream = nullptr;
  ASSERT_EQ(t.stream_create(t.instance, 0, &stream), ANYDEV_SUCCESS) << last_error();
  counters.reset();
  void* handle = reinterpret_cast<void*>(0x1);
  void* address = reinterpret_cast<void*>(0x1);
  struct Case {
    const char* what;
    std::function<anydev_status_t()> call;
  };
  const Case cases[] = {
      {"device_alloc", [&] { return t.device_alloc(t.instance, 0, 0, stream, &handle, &address); }},
      {"host_alloc", [&] { return t.host_alloc(t.instance, 0, 0, &handle, &address); }},
      {"memory_free",
       [&] { return t.memory_free(t.instance, 0, ANYDEV_BK_MEMORY_DEVICE, nullptr); }},
      {"memory_free", [&] { return t.memory_free(t.instance, 0, ANYDEV_BK_MEMORY_HOST, nullptr); }},
      {"memory_free_async", [&] { return t.memory_free_async(t.instance, 0, nullptr, stream); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(c.call(), ANYDEV_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find(c.what), std::string::npos) << last_error();
  }
  EXPECT_EQ(handle, reinterpret_cast<void*>(0x1)) << "a refused allocation writes nothing";
  EXPECT_EQ(address, reinterpret_cast<void*>(0x1));
  // No allocation or free reached the runtime (other calls may: the core's
  // reclaimer runs on its own thread; these tests run first, so there is
  // nothing of earlier tests to free).
  for (const char* call : allocator_calls) {
    EXPECT_EQ(counters.count(call), 0u) << call << " called for a refused request";
  }
  EXPECT_EQ(t.stream_destroy(t.instance, stream), ANYDEV_SUCCESS) << last_error();
}

// hipMalloc(0) and hipMallocAsync(0) succeed with a null pointer and
// hipFreeAsync(nullptr) succeeds in HIP, unlike CUDA: the GPU core refuses
// zero sizes and null frees itself, naming the operation, before any
// runtime call, so every GPU backend has the one rule.
TEST_F(HipBackend, ZeroSizesAndNullFreesAreRefusedBeforeTheRuntime) {
  const Context c0 = hip_context(0);  // the core initializes the plugin
  ASSERT_NE(c0, nullptr) << last_error();
  expect_zero_sizes_and_null_frees_refused(
      ANYDEV_TEST_HIP_PLUGIN, Counters("ANYDEV_HIP_LIBRARY", "anydev_hip_emulator"),
      {"hipMalloc", "hipMallocAsync", "hipMallocFromPoolAsync", "hipHostMalloc", "hipHostAlloc",
       "hipFree", "hipFreeAsync", "hipHostFree"});
}

#ifdef ANYDEV_TEST_CUDA_PLUGIN
// The same rule holds for cuda: it is the GPU core's, not hip's (ctest sets
// ANYDEV_CUDA_LIBRARY to the CUDA emulator beside the HIP one).
TEST_F(HipBackend, CudaOnTheSameCoreRefusesZeroSizesAndNullFreesToo) {
  anydev_context_t raw = nullptr;
  ASSERT_EQ(anydev_context_create("cuda", 0, &raw), ANYDEV_SUCCESS)
      << last_error() << " (ctest sets ANYDEV_CUDA_LIBRARY to the CUDA emulator)";
  const Context c0(raw);
  expect_zero_sizes_and_null_frees_refused(
      ANYDEV_TEST_CUDA_PLUGIN, Counters("ANYDEV_CUDA_LIBRARY", "anydev_cuda_emulator"),
      {"cuMemAlloc", "cuMemAllocAsync", "cuMemAllocFromPoolAsync", "cuMemHostAlloc", "cuMemFree",
       "cuMemFreeAsync", "cuMemFreeHost"});
}
#endif  // ANYDEV_TEST_CUDA_PLUGIN

// 8- and 16-byte fills of every length from 1 to 40 periods (and one long
// one) at byte offsets 0, 4, 8 and 12 of a zeroed buffer: exactly the
// pattern inside, zeros around. With anydev's fill kernel (the default):
// one hipModuleLaunchKernel. With ANYDEV_HIP_FILL_KERNEL=0, the fill plan: on
// 5.2 (no hipMemsetD2D32Async) one hipMemsetD32Async per word writes a
// period and copies double it; with it, one strided memset per word writes
// the first 4 KiB (or all of a shorter fill) and copies double that. The
// counts prove which path ran.
TEST_F(HipBackend, FillsWriteExactBitsAtEverySizeAndOffset) {
  const Context c0 = hip_context(0);
  ASSERT_NE(c0, nullptr) << last_error();
  const std::array<unsigned char, 16> pattern = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                                 0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87};
  constexpr std::size_t kBytes = 16 * 1024 + 64;
  const Buffer b = buffer(c0, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kBytes);
  ASSERT_NE(b, nullptr) << last_error();
  std::vector<std::size_t> lengths;
  for (std::size_t n = 1; n <= 40; ++n) lengths.push_back(n);
  lengths.push_back(1000);
  for (std::size_t size : {8u, 16u}) {
    for (std::size_t offset : {0u, 4u, 8u, 12u}) {
      for (std::size_t periods : lengths) {
        SCOPED_TRACE(std::to_string(size) + "-byte pattern, " + std::to_string(periods) +
                     " periods at byte offset " + std::to_string(offset));
        const std::size_t bytes = periods * size;
        ASSERT_OK(anydev_enqueue_fill(c0.get(), b.get(), "\x00", 1));
        ASSERT_OK(anydev_context_synchronize(c0.get()));
        // A view of complex64 (8 bytes, 4-aligned) elements at `offset`.
        anydev_buffer_t words = nullptr;
        ASSERT_OK(anydev_buffer_create_sub_buffer(b.get(), ANYDEV_DTYPE_UINT32, offset / 4,
                                                  bytes / 4, &words));
        anydev_buffer_t view = nullptr;
        const anydev_status_t s =
            anydev_buffer_create_sub_buffer(words, ANYDEV_DTYPE_COMPLEX64, 0, bytes / 8, &view);
        anydev_buffer_release(words);
        ASSERT_OK(s);
        emulator().reset();
        ASSERT_OK(anydev_enqueue_fill(c0.get(), view, pattern.data(), size));
        const unsigned long long d32 = emulator().count("hipMemsetD32Async");
        const unsigned long long d2d32 = emulator().count("hipMemsetD2D32Async");
        const unsigned long long copies = emulator().count("hipMemcpyAsync");
        const unsigned long long launches = emulator().count("hipModuleLaunchKernel");
        anydev_buffer_release(view);
        const std::vector<unsigned char> out = read_back(c0, b, kBytes);
        for (std::size_t i = 0; i < kBytes; ++i) {
          const bool inside = i >= offset && i < offset + bytes;
          ASSERT_EQ(out[i], inside ? pattern[(i - offset) % size] : 0) << "byte " << i;
        }
        const char* kernel = std::getenv("ANYDEV_HIP_FILL_KERNEL");
        if (kernel == nullptr || std::strcmp(kernel, "0") != 0) {
          EXPECT_EQ(launches, 1u);
          EXPECT_EQ(d2d32 + d32 + copies, 0u);
        } else if (emulator().strided_fill) {
          EXPECT_EQ(launches, 0u);
          const std::size_t head = std::min(bytes, anydev::gpu::kStridedFillHeadBytes);
          std::size_t doublings = 0;
          for (std::size_t have = head; have < bytes; have *= 2) ++doublings;
          EXPECT_EQ(d2d32, size / 4);
          EXPECT_EQ(d32, 0u);
          EXPECT_EQ(copies, doublings);
        } else {
          EXPECT_EQ(launches, 0u);
          std::size_t doublings = 0;
          for (std::size_t have = size; have < bytes; have *= 2) ++doublings;
          EXPECT_EQ(d2d32, 0u);
          EXPECT_EQ(d32, size / 4);
          EXPECT_EQ(copies, doublings);
        }
      }
    }
  }
}

// Every anydev call that needs a device current (context and stream
// creation, allocations, fills, copies, events, memory info, releases) leaves
// the caller's current device as it found it, on either device.
TEST_F(HipBackend, CallersCurrentDeviceIsRestoredAfterEveryCall) {
  for (int caller : {0, 1}) {
    const int used = 1 - caller;
    SCOPED_TRACE("caller on device " + std::to_string(caller) + ", anydev on " +
                 std::to_string(used));
    ASSERT_EQ(emulator().set_device(caller), hipSuccess);
    auto expect_callers = [caller](const char* after) {
      EXPECT_EQ(emulator().current(), caller) << "after " << after;
    };
    anydev_context_t ctx = nullptr;
    ASSERT_OK(anydev_context_create("hip", used, &ctx));
    expect_callers("anydev_context_create");
    anydev_buffer_t device = nullptr;
    anydev_buffer_t host = nullptr;
    ASSERT_OK(anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 4096, &device));
    expect_callers("anydev_buffer_create (device)");
    ASSERT_OK(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 4096, &host));
    expect_callers("anydev_buffer_create (host)");
    ASSERT_OK(anydev_enqueue_fill(ctx, device, "\x5a", 1));
    expect_callers("anydev_enqueue_fill");
    ASSERT_OK(anydev_enqueue_copy(ctx, host, device));
    expect_callers("anydev_enqueue_copy");
    anydev_event_t event = nullptr;
    ASSERT_OK(anydev_context_create_event(ctx, &event));
    expect_callers("anydev_context_create_event");
    anydev_stream_t stream = nullptr;
    ASSERT_OK(anydev_context_create_stream(ctx, &stream));
    expect_callers("anydev_context_create_stream");
    ASSERT_OK(anydev_stream_record_event(stream, event));
    expect_callers("anydev_stream_record_event");
    anydev_memory_info_t info{};
    info.struct_size = sizeof info;
    ASSERT_OK(anydev_context_memory_info(ctx, &info));
    expect_callers("anydev_context_memory_info");
    ASSERT_OK(anydev_context_synchronize(ctx));
    expect_callers("anydev_context_synchronize");
    ASSERT_OK(anydev_event_synchronize(event));
    anydev_event_release(event);
    anydev_stream_release(stream);
    anydev_buffer_release(host);
    anydev_buffer_release(device);
    anydev_context_release(ctx);
    expect_callers("the releases");
  }
  ASSERT_EQ(emulator().set_device(0), hipSuccess);
}

// The runtime calls of each operation in steady state (a first run warms up
// pools and events), counted by the emulator: a copy or a 1-, 2- or 4-byte
// fill is one call, with no current-device switch.
TEST_F(HipBackend, SteadyStateOperationsAreOneRuntimeCall) {
  const Context c0 = hip_context(0);
  const Context c1 = hip_context(1);
  ASSERT_NE(c0, nullptr) << last_error();
  ASSERT_NE(c1, nullptr) << last_error();
  constexpr std::size_t kBytes = 1 << 16;
  const Buffer host = buffer(c0, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, kBytes);
  const Buffer dev = buffer(c0, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kBytes);
  const Buffer dev2 = buffer(c0, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kBytes);
  const Buffer dev_1 = buffer(c1, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kBytes);
  for (const Buffer* b : {&host, &dev, &dev2, &dev_1}) ASSERT_NE(*b, nullptr) << last_error();
  std::vector<unsigned char> user(kBytes, 7);
  const unsigned char pattern[4] = {1, 2, 3, 4};
  struct Row {
    const char* operation;
    std::function<anydev_status_t()> run;
    const char* calls;
  };
  const Row rows[] = {
      {"copy from ordinary host memory",
       [&] { return anydev_enqueue_copy_from_host(c0.get(), dev.get(), user.data(), kBytes); },
       "hipMemcpyAsync=1"},
      {"copy to ordinary host memory",
       [&] { return anydev_enqueue_copy_to_host(c0.get(), user.data(), kBytes, dev.get()); },
       "hipMemcpyAsync=1"},
      {"copy from pinned to device",
       [&] { return anydev_enqueue_copy(c0.get(), dev.get(), host.get()); }, "hipMemcpyAsync=1"},
      {"copy within a device", [&] { return anydev_enqueue_copy(c0.get(), dev2.get(), dev.get()); },
       "hipMemcpyAsync=1"},
      {"copy from another device",
       [&] { return anydev_enqueue_copy(c0.get(), dev.get(), dev_1.get()); },
       "hipMemcpyPeerAsync=1"},
      {"fill, 1 byte", [&] { return anydev_enqueue_fill(c0.get(), dev.get(), pattern, 1); },
       "hipMemsetD8Async=1"},
      {"fill, 2 bytes", [&] { return anydev_enqueue_fill(c0.get(), dev.get(), pattern, 2); },
       "hipMemsetD16Async=1"},
      {"fill, 4 bytes", [&] { return anydev_enqueue_fill(c0.get(), dev.get(), pattern, 4); },
       "hipMemsetD32Async=1"},
      {"synchronize", [&] { return anydev_context_synchronize(c0.get()); },
       "hipStreamSynchronize=1"},
  };
  // The emulator counts every caller's calls, and the core's reclaimer may
  // free earlier tests' memory on its own thread meanwhile: a row is measured
  // up to 5 times and the first exact count passes. A call the operation
  // itself makes shows in every measurement.
  for (const Row& row : rows) {
    SCOPED_TRACE(row.operation);
    std::string calls;
    for (int attempt = 0; attempt < 5 && calls != row.calls; ++attempt) {
      ASSERT_OK(row.run());
      ASSERT_OK(anydev_context_synchronize(c0.get()));
      ASSERT_OK(anydev_context_synchronize(c1.get()));
      emulator().reset();
      ASSERT_OK(row.run());
      calls = emulator().text();
      ASSERT_OK(anydev_context_synchronize(c0.get()));
      ASSERT_OK(anydev_context_synchronize(c1.get()));
    }
    EXPECT_EQ(calls, row.calls);
  }
}

// Device memory exports as kDLROCM with the device's ordinal, pinned host
// memory as kDLROCMHost (the device properties, not the backend's name).
TEST_F(HipBackend, DlpackDeviceTypesAreRocm) {
  const Context c1 = hip_context(1);
  ASSERT_NE(c1, nullptr) << last_error();
  const Buffer dev = buffer(c1, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_FLOAT32, 16);
  const Buffer host = buffer(c1, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_FLOAT32, 16);
  ASSERT_NE(dev, nullptr) << last_error();
  ASSERT_NE(host, nullptr) << last_error();
  int type = -1;
  int id = -1;
  ASSERT_OK(anydev_buffer_dlpack_device(dev.get(), &type, &id));
  EXPECT_EQ(type, kDLROCM);
  EXPECT_EQ(id, 1);
  ASSERT_OK(anydev_buffer_dlpack_device(host.get(), &type, &id));
  EXPECT_EQ(type, kDLROCMHost);
  DLManagedTensor* tensor = nullptr;
  ASSERT_OK(anydev_buffer_to_dlpack(dev.get(), 0, nullptr, &tensor));
  EXPECT_EQ(tensor->dl_tensor.device.device_type, kDLROCM);
  EXPECT_EQ(tensor->dl_tensor.device.device_id, 1);
  tensor->deleter(tensor);
}

}  // namespace
