// SPDX-License-Identifier: Apache-2.0
// The driver calls each anydev operation makes on the cuda backend in steady
// state, counted by the CUDA emulator (emu_call_counts.h) and pinned exactly:
// one table row per operation, each with the calls it must make, so that a
// change that adds a driver call (a context switch, an event created per
// ordering, a pool that stops pooling) fails here. docs/performance.md
// ("Driver calls per operation") shows the same table beside the raw
// driver's minimum.
//
// Each row runs once to warm up (first use: contexts, pools, events), then
// again with the counts reset; the counts are read before anything waits for
// the work, then everything is synchronized. Counts are exact, not timings.
//
// The emulator may be stricter than the default about the current context
// (ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT, emu_config.h): ctest runs this test
// with each rule, and the rows that depend on the rule say so.
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "anydev/anydev.h"
#include "emu_call_counts.h"

namespace {

constexpr std::size_t kBytes = std::size_t{1} << 16;

std::string last_error() { return anydev_last_error_message(); }

#define ASSERT_OK(expr) ASSERT_EQ((expr), ANYDEV_SUCCESS) << last_error()

// ANYDEV_CUDA_EMULATOR_NO_MODULES=1: the driver refuses anydev's fill
// kernel, so 8- and 16-byte fills run the fill plan.
bool modules_refused() {
  const char* text = std::getenv("ANYDEV_CUDA_EMULATOR_NO_MODULES");
  return text != nullptr && std::strcmp(text, "1") == 0;
}

// ANYDEV_POOL_CARVE=0: every device buffer is a driver allocation of its own.
bool carving_off() {
  const char* text = std::getenv("ANYDEV_POOL_CARVE");
  return text != nullptr && std::strcmp(text, "0") == 0;
}

// ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT: 0, 1 or 2 (emu_config.h).
int stream_context_rule() {
  const char* text = std::getenv("ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT");
  return text == nullptr ? 0 : std::atoi(text);
}

// The emulator's counters and the context calls an application (or an
// embedding runtime) makes itself, from the libcuda.so.1 the backend opened.
// The context calls are the exported symbols, not cuGetProcAddress's
// pointers, so they are not counted. Read-only after construction.
struct Emulator {
  Emulator() {
    library = dlopen(std::getenv("ANYDEV_CUDA_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
    if (library == nullptr) return;
    reset =
        reinterpret_cast<decltype(reset)>(dlsym(library, "anydev_cuda_emulator_reset_call_counts"));
    counts = reinterpret_cast<decltype(counts)>(dlsym(library, "anydev_cuda_emulator_call_counts"));
    set_current = reinterpret_cast<decltype(set_current)>(dlsym(library, "cuCtxSetCurrent"));
    get_current = reinterpret_cast<decltype(get_current)>(dlsym(library, "cuCtxGetCurrent"));
  }
  bool complete() const {
    return reset != nullptr && counts != nullptr && set_current != nullptr &&
           get_current != nullptr;
  }
  // "cuMemcpyAsync=1 ...": every non-zero count since the last reset.
  std::string text() const {
    char buffer[2048];
    counts(buffer, sizeof buffer);
    return buffer;
  }

  void* library = nullptr;
  decltype(&anydev_cuda_emulator_reset_call_counts) reset = nullptr;
  decltype(&anydev_cuda_emulator_call_counts) counts = nullptr;
  decltype(&cuCtxSetCurrent) set_current = nullptr;
  decltype(&cuCtxGetCurrent) get_current = nullptr;
};

// What the rows work on: contexts on device 0 (two streams) and device 1,
// host and device buffers of kBytes, and ordinary host memory. Created once
// for the whole suite; released at its end.
struct World {
  anydev_context_t c0 = nullptr;        // device 0, its own stream
  anydev_context_t c0_other = nullptr;  // device 0, a second stream
  anydev_context_t c1 = nullptr;        // device 1
  anydev_buffer_t host = nullptr;       // pinned, device 0's context
  anydev_buffer_t dev = nullptr;        // device 0
  anydev_buffer_t dev2 = nullptr;       // device 0
  anydev_buffer_t dev_1 = nullptr;      // device 1
  std::vector<unsigned char> user = std::vector<unsigned char>(kBytes, 7);
  void* context0 = nullptr;              // device 0's CUcontext
  void* context1 = nullptr;              // device 1's CUcontext
  anydev_stream_t s0 = nullptr;          // c0's stream
  anydev_event_t timed_start = nullptr;  // timing events of device 0
  anydev_event_t timed_end = nullptr;
};

World* world = nullptr;
Emulator* emulator = nullptr;

class DriverCalls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    world = new World;
    World& w = *world;
    ASSERT_OK(anydev_context_create("cuda", 0, &w.c0));
    ASSERT_OK(anydev_context_create("cuda", 1, &w.c1));
    anydev_stream_t stream = nullptr;
    ASSERT_OK(anydev_context_create_stream(w.c0, &stream));
    ASSERT_OK(anydev_context_with_stream(w.c0, stream, &w.c0_other));
    anydev_stream_release(stream);
    ASSERT_OK(anydev_buffer_create(w.c0, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, kBytes, &w.host));
    ASSERT_OK(anydev_buffer_create(w.c0, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kBytes, &w.dev));
    ASSERT_OK(
        anydev_buffer_create(w.c0, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kBytes, &w.dev2));
    ASSERT_OK(
        anydev_buffer_create(w.c1, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kBytes, &w.dev_1));
    ASSERT_OK(anydev_context_native_handle(w.c0, ANYDEV_NATIVE_CONTEXT, &w.context0));
    ASSERT_OK(anydev_context_native_handle(w.c1, ANYDEV_NATIVE_CONTEXT, &w.context1));
    ASSERT_OK(anydev_context_stream(w.c0, &w.s0));
    ASSERT_OK(anydev_context_create_event_with_flags(w.c0, ANYDEV_EVENT_TIMING, &w.timed_start));
    ASSERT_OK(anydev_context_create_event_with_flags(w.c0, ANYDEV_EVENT_TIMING, &w.timed_end));
    ASSERT_OK(anydev_context_synchronize(w.c0));
    ASSERT_OK(anydev_context_synchronize(w.c1));
    emulator = new Emulator;
  }

  static void TearDownTestSuite() {
    if (world != nullptr) {
      for (anydev_event_t e : {world->timed_start, world->timed_end}) {
        if (e != nullptr) anydev_event_release(e);
      }
      if (world->s0 != nullptr) anydev_stream_release(world->s0);
      for (anydev_buffer_t b : {world->host, world->dev, world->dev2, world->dev_1}) {
        if (b != nullptr) anydev_buffer_release(b);
      }
      for (anydev_context_t c : {world->c0_other, world->c0, world->c1}) {
        if (c != nullptr) anydev_context_release(c);
      }
    }
    delete world;
    delete emulator;
    world = nullptr;
    emulator = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(world->c0_other, nullptr) << "the suite's contexts and buffers were not created";
    ASSERT_TRUE(emulator->complete())
        << "the emulator's call counters were not found in " << std::getenv("ANYDEV_CUDA_LIBRARY");
  }

  static void synchronize_all() {
    ASSERT_OK(anydev_context_synchronize(world->c0));
    ASSERT_OK(anydev_context_synchronize(world->c0_other));
    ASSERT_OK(anydev_context_synchronize(world->c1));
  }

  // The driver calls `operation` makes on its second run.
  static std::string steady_state_calls(const std::function<void()>& operation) {
    operation();
    synchronize_all();
    emulator->reset();
    operation();
    const std::string calls = emulator->text();
    synchronize_all();
    return calls;
  }
};

// One operation and the calls it must make, as the emulator prints them
// (entry points in the emulator's table order).
struct Row {
  const char* operation;
  std::function<void()> run;
  const char* calls;
};

// A fill with the first pattern_size bytes of `pattern` (default: no two
// bytes equal, so that no shorter period hides in it).
void fill(anydev_context_t ctx, anydev_buffer_t buf, std::size_t pattern_size,
          const std::vector<unsigned char>& pattern = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                       14, 15, 16}) {
  ASSERT_OK(anydev_enqueue_fill(ctx, buf, pattern.data(), pattern_size));
}

std::vector<Row> steady_state_rows() {
  World& w = *world;
  return {
      {"copy from ordinary host memory to the device",
       [&w] { ASSERT_OK(anydev_enqueue_copy_from_host(w.c0, w.dev, w.user.data(), kBytes)); },
       "cuMemcpyAsync=1"},
      {"copy from the device to ordinary host memory",
       [&w] { ASSERT_OK(anydev_enqueue_copy_to_host(w.c0, w.user.data(), kBytes, w.dev)); },
       "cuMemcpyAsync=1"},
      {"copy from a pinned host buffer to a device buffer",
       [&w] { ASSERT_OK(anydev_enqueue_copy(w.c0, w.dev, w.host)); }, "cuMemcpyAsync=1"},
      {"copy from a device buffer to a pinned host buffer",
       [&w] { ASSERT_OK(anydev_enqueue_copy(w.c0, w.host, w.dev)); }, "cuMemcpyAsync=1"},
      {"copy between two buffers of one device",
       [&w] { ASSERT_OK(anydev_enqueue_copy(w.c0, w.dev2, w.dev)); }, "cuMemcpyAsync=1"},
      {"copy from another device's buffer",
       // The warm-up's copy waited for device 1's stream, where dev_1 was
       // made; since then its last use is on c0's stream: no wait.
       [&w] { ASSERT_OK(anydev_enqueue_copy(w.c0, w.dev, w.dev_1)); }, "cuMemcpyPeerAsync=1"},
      {"fill with a 1-byte pattern", [&w] { fill(w.c0, w.dev, 1); }, "cuMemsetD8Async=1"},
      {"fill with a 2-byte pattern", [&w] { fill(w.c0, w.dev, 2); }, "cuMemsetD16Async=1"},
      {"fill with a 4-byte pattern", [&w] { fill(w.c0, w.dev, 4); }, "cuMemsetD32Async=1"},
      // 8- and 16-byte fills of device memory: one launch of anydev's fill
      // kernel (cuda_fill_kernel.cpp), loaded at the warm-up's fill. When
      // the driver refuses the module, the fill plan: one strided memset per
      // 4-byte word writes the first 4 KiB, then copies double it (64 KiB: 4
      // copies), because a strided memset is hundreds of times slower than a
      // block copy (gpu_fill_plan.h).
      {"fill with an 8-byte pattern", [&w] { fill(w.c0, w.dev, 8); },
       modules_refused() ? "cuMemcpyAsync=4 cuMemsetD2D32Async=2" : "cuLaunchKernel=1"},
      {"fill with a 16-byte pattern", [&w] { fill(w.c0, w.dev, 16); },
       modules_refused() ? "cuMemcpyAsync=4 cuMemsetD2D32Async=4" : "cuLaunchKernel=1"},
      // Pinned host memory keeps the plan: the kernel writes only the
      // stream's own device memory.
      {"fill a pinned host buffer with a 16-byte pattern", [&w] { fill(w.c0, w.host, 16); },
       "cuMemcpyAsync=4 cuMemsetD2D32Async=4"},
      {"copy whose source was last written on another stream of the device",
       [&w] {
         fill(w.c0_other, w.dev2, 1);
         ASSERT_OK(anydev_enqueue_copy(w.c0, w.dev, w.dev2));
       },
       // Each of the two waits for the other stream once: the fill on c0's
       // second stream for the previous copy reading dev2 on c0's stream, the
       // copy for the fill. Each adds cuEventRecord + cuStreamWaitEvent, with
       // an event from the device's pool.
       "cuMemcpyAsync=1 cuMemsetD8Async=1 cuStreamWaitEvent=2 cuEventRecord=2"},
      {"fill with an 8-byte pattern of one repeated byte",
       [&w] { fill(w.c0, w.dev, 8, std::vector<unsigned char>(8, 9)); }, "cuMemsetD8Async=1"},
      {"fill with a 16-byte pattern of one repeated 4-byte word",
       [&w] {
         fill(w.c0, w.dev, 16, {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4});
       },
       "cuMemsetD32Async=1"},
      {"synchronize a context", [&w] { ASSERT_OK(anydev_context_synchronize(w.c0)); },
       "cuStreamSynchronize=1"},
      {"create and release a 64 MiB pinned host buffer (pooled)",
       [&w] {
         anydev_buffer_t b = nullptr;
         ASSERT_OK(anydev_buffer_create(w.c0, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8,
                                        std::size_t{64} << 20, &b));
         ASSERT_OK(anydev_buffer_release(b));
       },
       ""},
      {"create and release a 1 MiB device buffer (pooled)",
       [&w] {
         anydev_buffer_t b = nullptr;
         ASSERT_OK(anydev_buffer_create(w.c0, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8,
                                        std::size_t{1} << 20, &b));
         ASSERT_OK(anydev_buffer_release(b));
       },
       // The release marks the end of the block's last use on its stream
       // (an event from the device's pool), so that another stream may take
       // the block from the cache.
       "cuEventRecord=1"},
      {"time between two timing events (record, record, synchronize, elapsed_time)",
       [&w] {
         ASSERT_OK(anydev_stream_record_event(w.s0, w.timed_start));
         ASSERT_OK(anydev_stream_record_event(w.s0, w.timed_end));
         ASSERT_OK(anydev_event_synchronize(w.timed_end));
         float ms = -1.0F;
         ASSERT_OK(anydev_event_elapsed_time(w.timed_start, w.timed_end, &ms));
         EXPECT_GE(ms, 0.0F);
       },
       "cuEventRecord=2 cuEventSynchronize=1 cuEventElapsedTime=1"},
  };
}

// Every operation is its own driver call and nothing else: with no context
// current at all where the driver allows it (rule 0), with the device's
// context current on the thread where the driver wants one (rules 1, 2).
TEST_F(DriverCalls, EachOperationInSteadyStateMakesTheMinimumOfCalls) {
  ASSERT_EQ(emulator->set_current(
                stream_context_rule() == 0 ? nullptr : static_cast<CUcontext>(world->context0)),
            CUDA_SUCCESS);
  for (const Row& row : steady_state_rows()) {
    EXPECT_EQ(steady_state_calls(row.run), row.calls) << row.operation;
  }
}

// Device buffers released in a row on their stream share one release event
// (src/memory/release_event.h): one cuEventRecord, not one per buffer, so the
// driver keeps no event per cached block.
TEST_F(DriverCalls, BuffersReleasedInARowRecordOneEvent) {
  World& w = *world;
  constexpr int kBuffers = 16;
  const std::string calls = steady_state_calls([&w] {
    std::vector<anydev_buffer_t> buffers(kBuffers, nullptr);
    for (anydev_buffer_t& b : buffers) {
      ASSERT_OK(anydev_buffer_create(w.c0, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 4096, &b));
    }
    fill(w.c0, buffers.front(), 1);
    for (anydev_buffer_t b : buffers) ASSERT_OK(anydev_buffer_release(b));
  });
  EXPECT_EQ(calls, "cuMemsetD8Async=1 cuEventRecord=1");
}

// Work enqueued on the stream after a release event was recorded is not
// covered by it: a buffer used there afterwards gets an event of its own.
TEST_F(DriverCalls, ABufferUsedAfterAReleaseGetsItsOwnReleaseEvent) {
  World& w = *world;
  const std::string calls = steady_state_calls([&w] {
    anydev_buffer_t a = nullptr;
    anydev_buffer_t b = nullptr;
    ASSERT_OK(anydev_buffer_create(w.c0, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 4096, &a));
    ASSERT_OK(anydev_buffer_create(w.c0, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 4096, &b));
    ASSERT_OK(anydev_buffer_release(a));
    fill(w.c0, b, 1);
    ASSERT_OK(anydev_buffer_release(b));
  });
  EXPECT_EQ(calls, "cuMemsetD8Async=1 cuEventRecord=2");
}

// How many times the calls text ("cuMemFree=3 ...") says `name` was called.
int count_of(const std::string& calls, const std::string& name) {
  const std::string key = name + "=";
  for (std::size_t at = calls.find(key); at != std::string::npos; at = calls.find(key, at + 1)) {
    if (at == 0 || calls[at - 1] == ' ') return std::atoi(calls.c_str() + at + key.size());
  }
  return 0;
}

// Small device buffers are carved out of 2 MiB driver allocations
// (src/memory/pool/block_carver.h): 300 buffers of 16 KiB, 128 to a segment,
// are three cuMemAllocFromPoolAsync (each with the event that marks it
// allocated), not 300; each holds exactly its own bytes; and once the pool's
// cache is released, the three segments go back to the driver. With
// ANYDEV_POOL_CARVE=0, one allocation and one free per buffer.
TEST_F(DriverCalls, SmallDeviceBuffersAreCarvedOutOfFewDriverAllocations) {
  // Device 1: no other test releases blocks into its pool, so the cache
  // released below holds only these.
  World& w = *world;
  constexpr int kBuffers = 300;
  constexpr std::size_t kSmall = std::size_t{16} << 10;  // a size no other test here uses
  const int driver_allocations = carving_off() ? kBuffers : 3;
  emulator->reset();
  std::vector<anydev_buffer_t> buffers(kBuffers, nullptr);
  for (anydev_buffer_t& b : buffers) {
    ASSERT_OK(anydev_buffer_create(w.c1, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kSmall, &b));
  }
  const std::string made = emulator->text();
  EXPECT_EQ(count_of(made, "cuMemAllocFromPoolAsync"), driver_allocations) << made;
  // Under rule 2 a record is refused while device 1's context is not
  // current, and made once more in it (gpu_objects.h, call_on_stream).
  const int records_per_segment = stream_context_rule() == 2 ? 2 : 1;
  EXPECT_EQ(count_of(made, "cuEventRecord"), carving_off() ? 0 : 3 * records_per_segment) << made;
  for (int i = 0; i < kBuffers; ++i) fill(w.c1, buffers[i], 1, {static_cast<unsigned char>(i)});
  std::vector<unsigned char> bytes(kSmall);
  for (int i = 0; i < kBuffers; ++i) {
    ASSERT_OK(anydev_enqueue_copy_to_host(w.c1, bytes.data(), kSmall, buffers[i]));
    ASSERT_OK(anydev_context_synchronize(w.c1));
    ASSERT_EQ(std::count(bytes.begin(), bytes.end(), static_cast<unsigned char>(i)),
              static_cast<std::ptrdiff_t>(kSmall))
        << "buffer " << i << " does not hold exactly its own fill";
  }
  emulator->reset();
  for (anydev_buffer_t b : buffers) ASSERT_OK(anydev_buffer_release(b));
  ASSERT_OK(anydev_context_synchronize(w.c1));
  ASSERT_OK(anydev_context_release_cached_memory(w.c1));
  // The core's reclaimer frees them; bounded by the test's timeout.
  std::string freed = emulator->text();
  while (count_of(freed, "cuMemFree") < driver_allocations) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    freed = emulator->text();
  }
  EXPECT_EQ(count_of(freed, "cuMemFree"), driver_allocations) << freed;
}

// Plain events are created with CU_EVENT_DISABLE_TIMING (timing costs the
// driver), timing events without it: the driver's own cuEventElapsedTime on
// their native events says which is which.
TEST_F(DriverCalls, OnlyTimingEventsAreCreatedWithTiming) {
  using ElapsedTime = CUresult (*)(float*, CUevent, CUevent);
  const auto elapsed =
      reinterpret_cast<ElapsedTime>(dlsym(emulator->library, "cuEventElapsedTime_v2"));
  ASSERT_NE(elapsed, nullptr) << dlerror();
  anydev_event_t plain = nullptr;
  ASSERT_OK(anydev_context_create_event(world->c0, &plain));
  ASSERT_OK(anydev_stream_record_event(world->s0, plain));
  ASSERT_OK(anydev_stream_record_event(world->s0, world->timed_start));
  ASSERT_OK(anydev_stream_record_event(world->s0, world->timed_end));
  ASSERT_OK(anydev_context_synchronize(world->c0));
  void* native_plain = nullptr;
  void* native_start = nullptr;
  void* native_end = nullptr;
  ASSERT_OK(anydev_event_native_handle(plain, &native_plain));
  ASSERT_OK(anydev_event_native_handle(world->timed_start, &native_start));
  ASSERT_OK(anydev_event_native_handle(world->timed_end, &native_end));
  float ms = 0.0F;
  EXPECT_EQ(elapsed(&ms, static_cast<CUevent>(native_start), static_cast<CUevent>(native_end)),
            CUDA_SUCCESS);
  EXPECT_EQ(elapsed(&ms, static_cast<CUevent>(native_start), static_cast<CUevent>(native_plain)),
            CUDA_ERROR_INVALID_HANDLE);
  ASSERT_OK(anydev_event_release(plain));
}

// Registered host memory is copied exactly as a pinned host buffer is (the
// same one cuMemcpyAsync each way); registering is one cuMemHostRegister (in
// the device's context) and the release one cuMemHostUnregister once the
// work is done.
TEST_F(DriverCalls, RegisteredHostMemoryCopiesWithThePinnedBuffersCalls) {
  World& w = *world;
  void* memory = std::aligned_alloc(4096, kBytes);
  ASSERT_NE(memory, nullptr);
  emulator->reset();
  anydev_buffer_t registered = nullptr;
  ASSERT_OK(anydev_context_register_host_memory(w.c0, memory, kBytes, ANYDEV_DTYPE_UINT8, nullptr,
                                                nullptr, &registered));
  // Plus the device's context made current where no context is (the rule).
  const std::string registering = emulator->text();
  EXPECT_NE(registering.find("cuMemHostRegister=1"), std::string::npos) << registering;
  const std::string pinned_in =
      steady_state_calls([&w] { ASSERT_OK(anydev_enqueue_copy(w.c0, w.dev, w.host)); });
  const std::string registered_in =
      steady_state_calls([&] { ASSERT_OK(anydev_enqueue_copy(w.c0, w.dev, registered)); });
  const std::string pinned_out =
      steady_state_calls([&w] { ASSERT_OK(anydev_enqueue_copy(w.c0, w.host, w.dev)); });
  const std::string registered_out =
      steady_state_calls([&] { ASSERT_OK(anydev_enqueue_copy(w.c0, registered, w.dev)); });
  EXPECT_EQ(registered_in, pinned_in);
  EXPECT_EQ(registered_out, pinned_out);
  EXPECT_EQ(registered_in, "cuMemcpyAsync=1");
  synchronize_all();
  emulator->reset();
  ASSERT_OK(anydev_buffer_release(registered));
  // The work is done, so the release unregisters before it returns or on
  // the core's thread; registering the same memory again waits for it.
  ASSERT_OK(anydev_context_register_host_memory(w.c0, memory, kBytes, ANYDEV_DTYPE_UINT8, nullptr,
                                                nullptr, &registered));
  const std::string calls = emulator->text();
  EXPECT_NE(calls.find("cuMemHostUnregister=1"), std::string::npos) << calls;
  EXPECT_NE(calls.find("cuMemHostRegister=1"), std::string::npos) << calls;
  ASSERT_OK(anydev_buffer_release(registered));
  // The memory goes back only once the registration is undone.
  struct Done {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
  } done;
  ASSERT_OK(anydev_context_register_host_memory(
      w.c0, memory, kBytes, ANYDEV_DTYPE_UINT8,
      [](void* user_data) {
        auto* d = static_cast<Done*>(user_data);
        std::lock_guard lock(d->mutex);
        d->done = true;
        d->cv.notify_all();
      },
      &done, &registered));
  ASSERT_OK(anydev_buffer_release(registered));
  std::unique_lock lock(done.mutex);
  done.cv.wait(lock, [&] { return done.done; });
  std::free(memory);
}

// The bytes of `buf` (kBytes), read back through ordinary host memory.
std::vector<unsigned char> read_back(anydev_context_t ctx, anydev_buffer_t buf) {
  std::vector<unsigned char> bytes(kBytes, 0);
  EXPECT_EQ(anydev_enqueue_copy_to_host(ctx, bytes.data(), kBytes, buf), ANYDEV_SUCCESS)
      << last_error();
  EXPECT_EQ(anydev_context_synchronize(ctx), ANYDEV_SUCCESS) << last_error();
  return bytes;
}

// An embedding runtime (or the application) makes another context current
// between two anydev calls: the fill still lands, in order, on device 0's
// stream, and the runtime's context is current again afterwards. A driver
// that wants the stream's own context current (rule 2) answers the first try
// with CUDA_ERROR_INVALID_CONTEXT; the backend then switches for that call.
TEST_F(DriverCalls, AnotherContextMadeCurrentBetweenCallsIsRespected) {
  World& w = *world;
  auto fill_under_device_1 = [&w] {
    ASSERT_EQ(emulator->set_current(static_cast<CUcontext>(w.context1)), CUDA_SUCCESS);
    const unsigned char pattern = 0x5a;
    ASSERT_OK(anydev_enqueue_fill(w.c0, w.dev, &pattern, 1));
  };
  const char* expected = stream_context_rule() == 2
                             ? "cuCtxGetCurrent=1 cuCtxPushCurrent=1 cuCtxPopCurrent=1 "
                               "cuMemsetD8Async=2"
                             : "cuMemsetD8Async=1";
  EXPECT_EQ(steady_state_calls(fill_under_device_1), expected);
  CUcontext current = nullptr;
  ASSERT_EQ(emulator->get_current(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, static_cast<CUcontext>(w.context1)) << "the runtime's context was replaced";
  EXPECT_EQ(read_back(w.c0, w.dev), std::vector<unsigned char>(kBytes, 0x5a));
  ASSERT_EQ(emulator->set_current(nullptr), CUDA_SUCCESS);
}

// An embedding runtime leaves no context current between two anydev calls.
// A driver that wants one (rules 1 and 2) answers the first try with
// CUDA_ERROR_INVALID_CONTEXT; the backend then makes device 0's primary
// context current for that call and no context current again afterwards.
TEST_F(DriverCalls, NoContextCurrentBetweenCallsIsRespected) {
  World& w = *world;
  auto fill_with_none_current = [&w] {
    ASSERT_EQ(emulator->set_current(nullptr), CUDA_SUCCESS);
    const unsigned char pattern = 0xa5;
    ASSERT_OK(anydev_enqueue_fill(w.c0, w.dev, &pattern, 1));
  };
  const bool wants_context = stream_context_rule() != 0;
  EXPECT_EQ(steady_state_calls(fill_with_none_current),
            wants_context
                ? "cuCtxGetCurrent=1 cuCtxPushCurrent=1 cuCtxPopCurrent=1 cuMemsetD8Async=2"
                : "cuMemsetD8Async=1");
  CUcontext current = nullptr;
  ASSERT_EQ(emulator->get_current(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, nullptr) << "anydev left a context current on the runtime's thread";
  EXPECT_EQ(read_back(w.c0, w.dev), std::vector<unsigned char>(kBytes, 0xa5));
}

// A wrapped CU_STREAM_LEGACY means the default stream of whichever context is
// current: with another context current, the backend must switch to device
// 0's primary context for the call (and switch back), under every rule.
TEST_F(DriverCalls, LegacyDefaultStreamSwitchesToItsDeviceContext) {
  World& w = *world;
  anydev_context_t legacy = nullptr;
  ASSERT_OK(anydev_context_wrap_native_stream("cuda", 0, reinterpret_cast<void*>(1), &legacy));
  anydev_buffer_t buf = nullptr;
  ASSERT_OK(anydev_buffer_create(legacy, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, kBytes, &buf));
  auto fill_under_device_1 = [&w, legacy, buf] {
    ASSERT_EQ(emulator->set_current(static_cast<CUcontext>(w.context1)), CUDA_SUCCESS);
    const unsigned char pattern = 0x3c;
    ASSERT_OK(anydev_enqueue_fill(legacy, buf, &pattern, 1));
  };
  EXPECT_EQ(steady_state_calls(fill_under_device_1),
            "cuCtxGetCurrent=1 cuCtxPushCurrent=1 cuCtxPopCurrent=1 cuMemsetD8Async=1");
  CUcontext current = nullptr;
  ASSERT_EQ(emulator->get_current(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, static_cast<CUcontext>(w.context1));
  EXPECT_EQ(read_back(legacy, buf), std::vector<unsigned char>(kBytes, 0x3c));
  ASSERT_OK(anydev_buffer_release(buf));
  ASSERT_OK(anydev_context_synchronize(legacy));
  ASSERT_OK(anydev_context_release(legacy));
  ASSERT_EQ(emulator->set_current(nullptr), CUDA_SUCCESS);
}

}  // namespace

int main(int argc, char** argv) {
  setenv("ANYDEV_CUDA_LIBRARY", ANYDEV_TEST_CUDA_EMULATOR, 0);
  setenv("ANYDEV_CUDA_EMULATOR_DEVICES", "2", 0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
