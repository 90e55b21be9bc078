// SPDX-License-Identifier: Apache-2.0
// The level_zero backend through anydev's C API, on the emulated driver
// behind the real loader (ctest sets ZE_ENABLE_ALT_DRIVERS and the validation
// layer): exact fill bits at every pattern width (natively, by the GPU core's
// fill plan past the queue group's maxMemoryFillPatternSize, or by staged
// copies where the group fills less than 4 bytes), kDLOneAPI export and import,
// copies between two devices, and the driver calls each operation costs.
#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "anydev/anydev.h"
#include "anydev/anydev_dlpack.h"
#include "emulator_calls.h"

namespace {

constexpr int kOneApi = 14;  // kDLOneAPI (DLPack 0.7; Debian ships 0.6)

using anydev_test::calls;
using anydev_test::native_fill_limit;

// Whether the backend's streams are in-order command lists here: the
// emulated driver reports API 1.7 or later (ANYDEV_LEVEL_ZERO_EMULATOR_API_MINOR)
// and no validation layer of Debian's 1.8 loader (which knows API 1.4 only)
// refuses the flag on the way.
bool in_order_lists() {
  const char* minor = std::getenv("ANYDEV_LEVEL_ZERO_EMULATOR_API_MINOR");
  const char* layer = std::getenv("ZE_ENABLE_VALIDATION_LAYER");
  return minor != nullptr && std::strtol(minor, nullptr, 10) >= 7 &&
         (layer == nullptr || std::strcmp(layer, "1") != 0);
}

// Whether a period wider than the group fills is anydev's fill kernel (the
// default) rather than the fill plan (ANYDEV_LEVEL_ZERO_FILL_KERNEL=0).
bool fill_kernel() {
  const char* value = std::getenv("ANYDEV_LEVEL_ZERO_FILL_KERNEL");
  return value == nullptr || std::strcmp(value, "0") != 0;
}

class LevelZero : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(anydev_context_create("level_zero", 0, &ctx_), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    ASSERT_NE(calls("zeInit"), 0u) << "the emulated driver's counters were not found";
  }
  void TearDown() override {
    if (ctx_ != nullptr) {
      EXPECT_EQ(anydev_context_release(ctx_), ANYDEV_SUCCESS);
    }
  }
  anydev_buffer_t device_bytes(anydev_context_t ctx, std::size_t n) {
    anydev_buffer_t b = nullptr;
    EXPECT_EQ(anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, n, &b),
              ANYDEV_SUCCESS)
        << anydev_last_error_message();
    return b;
  }
  // A new stream, a context on it and a 4 KiB device buffer, with 100
  // one-byte fills of it queued: under ANYDEV_LEVEL_ZERO_EMULATOR_DELAY_US
  // the stream is far behind what is enqueued next.
  void busy_stream(anydev_stream_t* stream, anydev_context_t* ctx, anydev_buffer_t* b) {
    ASSERT_EQ(anydev_context_create_stream(ctx_, stream), ANYDEV_SUCCESS);
    ASSERT_EQ(anydev_context_with_stream(ctx_, *stream, ctx), ANYDEV_SUCCESS);
    *b = device_bytes(*ctx, 4096);
    const unsigned char one = 1;
    for (int i = 0; i < 100; ++i) ASSERT_EQ(anydev_enqueue_fill(*ctx, *b, &one, 1), ANYDEV_SUCCESS);
  }
  std::vector<unsigned char> read(anydev_context_t ctx, anydev_buffer_t b, std::size_t n) {
    std::vector<unsigned char> out(n);
    EXPECT_EQ(anydev_enqueue_copy_to_host(ctx, out.data(), n, b), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    EXPECT_EQ(anydev_context_synchronize(ctx), ANYDEV_SUCCESS) << anydev_last_error_message();
    return out;
  }
  anydev_context_t ctx_ = nullptr;
};

TEST_F(LevelZero, FillsWriteExactBitsAtEveryPatternWidth) {
  constexpr std::size_t kBytes = 64 * 1024 + 48;  // not a power of two: a partial last copy
  for (std::size_t width : {1u, 2u, 4u, 8u, 16u}) {
    SCOPED_TRACE(width);
    unsigned char pattern[16];
    for (std::size_t i = 0; i < 16; ++i) pattern[i] = static_cast<unsigned char>(0xA1 + 7 * i);
    anydev_buffer_t b = device_bytes(ctx_, kBytes);
    const auto fills = calls("zeCommandListAppendMemoryFill");
    const auto staged = calls("zeMemAllocHost");
    const auto launches = calls("zeCommandListAppendLaunchKernel");
    ASSERT_EQ(anydev_enqueue_fill(ctx_, b, pattern, width), ANYDEV_SUCCESS)
        << anydev_last_error_message();
    const std::vector<unsigned char> out = read(ctx_, b, kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) ASSERT_EQ(out[i], pattern[i % width]) << i;
    if (width <= native_fill_limit()) {
      EXPECT_EQ(calls("zeCommandListAppendMemoryFill"), fills + 1) << "one native fill";
    } else if (fill_kernel()) {
      EXPECT_EQ(calls("zeCommandListAppendLaunchKernel"), launches + 1) << "one kernel launch";
      EXPECT_EQ(calls("zeCommandListAppendMemoryFill"), fills) << "no fill";
      EXPECT_EQ(calls("zeMemAllocHost"), staged) << "nothing staged";
    } else if (native_fill_limit() >= 4) {
      // The GPU core's replicated plan: one 4-byte fill per word, then copies.
      EXPECT_EQ(calls("zeCommandListAppendMemoryFill"), fills + width / 4);
      EXPECT_EQ(calls("zeMemAllocHost"), staged) << "nothing staged";
    } else {
      EXPECT_EQ(calls("zeCommandListAppendMemoryFill"), fills) << "no fill of 4 bytes";
      EXPECT_EQ(calls("zeMemAllocHost"), staged + 1) << "one staging block";
    }
    EXPECT_EQ(anydev_buffer_release(b), ANYDEV_SUCCESS);
  }
}

// A 16-byte pattern of four equal words is a 4-byte pattern: one native fill
// even where the group fills at most 4 bytes.
TEST_F(LevelZero, AWidePatternWithAShortPeriodIsOneNativeFill) {
  const std::uint32_t words[4] = {0xDEADBEEFu, 0xDEADBEEFu, 0xDEADBEEFu, 0xDEADBEEFu};
  anydev_buffer_t b = device_bytes(ctx_, 4096);
  const auto fills = calls("zeCommandListAppendMemoryFill");
  ASSERT_EQ(anydev_enqueue_fill(ctx_, b, words, 16), ANYDEV_SUCCESS) << anydev_last_error_message();
  const std::vector<unsigned char> out = read(ctx_, b, 4096);
  // (A group that fills less than 4 bytes stages it instead.)
  EXPECT_EQ(calls("zeCommandListAppendMemoryFill"), fills + (native_fill_limit() >= 4 ? 1 : 0));
  for (std::size_t i = 0; i < 4096; i += 4) {
    std::uint32_t w = 0;
    std::memcpy(&w, out.data() + i, 4);
    ASSERT_EQ(w, 0xDEADBEEFu) << i;
  }
  EXPECT_EQ(anydev_buffer_release(b), ANYDEV_SUCCESS);
}

// Driver calls per operation: a copy or a fill is one
// append on an in-order list (API 1.7+), else one append and one ordering
// barrier on the stream's immediate list.
TEST_F(LevelZero, ACopyOrAFillIsOneAppendPlusABarrierWhereTheListIsNotInOrder) {
  const unsigned long long barrier = in_order_lists() ? 0 : 1;
  anydev_buffer_t b = device_bytes(ctx_, 4096);
  std::vector<unsigned char> host(4096, 1);
  const std::uint32_t word = 5;
  // The counts are the whole process's: the core's reclaimer thread may
  // record an event (one more barrier) on another stream meanwhile. That only
  // adds, so a round is repeated until one sees nothing but this thread's
  // calls (at most 20 rounds).
  std::string seen;
  bool exact = false;
  for (int round = 0; round < 20 && !exact; ++round) {
    ASSERT_EQ(anydev_context_synchronize(ctx_), ANYDEV_SUCCESS);
    const auto copies = calls("zeCommandListAppendMemoryCopy");
    const auto barriers = calls("zeCommandListAppendBarrier");
    ASSERT_EQ(anydev_enqueue_copy_from_host(ctx_, b, host.data(), host.size()), ANYDEV_SUCCESS);
    const auto copy_copies = calls("zeCommandListAppendMemoryCopy") - copies;
    const auto copy_barriers = calls("zeCommandListAppendBarrier") - barriers;
    ASSERT_EQ(anydev_enqueue_fill(ctx_, b, &word, 4), ANYDEV_SUCCESS);
    const auto fill_barriers = calls("zeCommandListAppendBarrier") - barriers - copy_barriers;
    exact = copy_copies == 1 && copy_barriers == barrier && fill_barriers == barrier;
    seen = "a copy: " + std::to_string(copy_copies) + " copies, " + std::to_string(copy_barriers) +
           " barriers; a fill: " + std::to_string(fill_barriers) + " barriers";
  }
  EXPECT_TRUE(exact) << seen << " (expected 1 copy and " << barrier << " barrier(s) each)";
  ASSERT_EQ(anydev_context_synchronize(ctx_), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_buffer_release(b), ANYDEV_SUCCESS);
}

// The core's caching pool in front of zeMemAllocHost: creating and releasing
// a 64 MiB pinned host buffer of a size the pool has seen makes no driver call.
TEST_F(LevelZero, APooledPinnedBufferMakesNoDriverCall) {
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  for (int round = 0; round < 2; ++round) {
    const auto allocs = calls("zeMemAllocHost");
    const auto frees = calls("zeMemFree");
    anydev_buffer_t b = nullptr;
    ASSERT_EQ(anydev_buffer_create(ctx_, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, kBytes, &b),
              ANYDEV_SUCCESS)
        << anydev_last_error_message();
    ASSERT_EQ(anydev_buffer_release(b), ANYDEV_SUCCESS);
    if (round == 1) {
      EXPECT_EQ(calls("zeMemAllocHost") - allocs, 0u);
      EXPECT_EQ(calls("zeMemFree") - frees, 0u);
    }
  }
}

// Registered host memory (docs/registered-memory.md): one
// zexDriverImportExternalPointer, copies with the pinned buffer's driver
// calls, one zexDriverReleaseImportedPointer after the release. Without the
// driver's functions (ANYDEV_LEVEL_ZERO_EMULATOR_HOST_IMPORT=0) registering
// is unsupported, naming the missing function, and calls nothing else.
TEST_F(LevelZero, RegisteredHostMemoryCopiesWithThePinnedBuffersCalls) {
  constexpr std::size_t kBytes = 1 << 16;
  std::vector<unsigned char> memory(kBytes + 4096, 3);
  void* start = memory.data() + (4096 - reinterpret_cast<std::uintptr_t>(memory.data()) % 4096);
  const char* import = std::getenv("ANYDEV_LEVEL_ZERO_EMULATOR_HOST_IMPORT");
  anydev_buffer_t registered = nullptr;
  const auto imports = calls("zexDriverImportExternalPointer");
  const anydev_status_t s = anydev_context_register_host_memory(
      ctx_, start, kBytes, ANYDEV_DTYPE_UINT8, nullptr, nullptr, &registered);
  if (import != nullptr && std::strcmp(import, "0") == 0) {
    EXPECT_EQ(s, ANYDEV_ERROR_UNSUPPORTED);
    EXPECT_NE(std::string(anydev_last_error_message()).find("zexDriverImportExternalPointer"),
              std::string::npos)
        << anydev_last_error_message();
    EXPECT_EQ(calls("zexDriverImportExternalPointer"), imports);
    return;
  }
  ASSERT_EQ(s, ANYDEV_SUCCESS) << anydev_last_error_message();
  EXPECT_EQ(calls("zexDriverImportExternalPointer") - imports, 1u);
  anydev_buffer_t pinned = nullptr;
  ASSERT_EQ(anydev_buffer_create(ctx_, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, kBytes, &pinned),
            ANYDEV_SUCCESS);
  anydev_buffer_t device = device_bytes(ctx_, kBytes);
  const auto copies_of = [&](anydev_buffer_t host) {
    ASSERT_EQ(anydev_context_synchronize(ctx_), ANYDEV_SUCCESS);
    const auto before = calls("zeCommandListAppendMemoryCopy");
    ASSERT_EQ(anydev_enqueue_copy(ctx_, device, host), ANYDEV_SUCCESS);
    ASSERT_EQ(anydev_enqueue_copy(ctx_, host, device), ANYDEV_SUCCESS);
    EXPECT_EQ(calls("zeCommandListAppendMemoryCopy") - before, 2u);
  };
  copies_of(pinned);
  copies_of(registered);
  EXPECT_EQ(read(ctx_, device, kBytes)[0], 3);
  const auto releases = calls("zexDriverReleaseImportedPointer");
  ASSERT_EQ(anydev_buffer_release(registered), ANYDEV_SUCCESS);
  // Registering it again waits for the undoing, then imports once more.
  ASSERT_EQ(anydev_context_register_host_memory(ctx_, start, kBytes, ANYDEV_DTYPE_UINT8, nullptr,
                                                nullptr, &registered),
            ANYDEV_SUCCESS)
      << anydev_last_error_message();
  EXPECT_EQ(calls("zexDriverReleaseImportedPointer") - releases, 1u);
  EXPECT_EQ(anydev_buffer_release(registered), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_buffer_release(pinned), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_buffer_release(device), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_context_synchronize(ctx_), ANYDEV_SUCCESS);
  // The memory goes back with `memory` at the end of the test: wait for the
  // last undoing by registering once more (nothing else uses the memory).
  ASSERT_EQ(anydev_context_register_host_memory(ctx_, start, kBytes, ANYDEV_DTYPE_UINT8, nullptr,
                                                nullptr, &registered),
            ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_buffer_release(registered), ANYDEV_SUCCESS);
}

TEST_F(LevelZero, DeviceBuffersExportAsOneApiAndImportBack) {
  anydev_buffer_t b = device_bytes(ctx_, 256);
  const unsigned char seven = 7;
  ASSERT_EQ(anydev_enqueue_fill(ctx_, b, &seven, 1), ANYDEV_SUCCESS);
  int type = 0;
  int id = -1;
  ASSERT_EQ(anydev_buffer_dlpack_device(b, &type, &id), ANYDEV_SUCCESS);
  EXPECT_EQ(type, kOneApi);
  EXPECT_EQ(id, 0);
  ASSERT_EQ(anydev_buffer_make_ready(b, nullptr), ANYDEV_SUCCESS);
  DLManagedTensor* tensor = nullptr;
  ASSERT_EQ(anydev_buffer_to_dlpack(b, 0, nullptr, &tensor), ANYDEV_SUCCESS)
      << anydev_last_error_message();
  EXPECT_EQ(static_cast<int>(tensor->dl_tensor.device.device_type), kOneApi);
  anydev_buffer_t imported = nullptr;
  ASSERT_EQ(anydev_buffer_from_dlpack(nullptr, tensor, &imported), ANYDEV_SUCCESS)
      << anydev_last_error_message();
  anydev_context_t owner = nullptr;
  ASSERT_EQ(anydev_buffer_context(imported, &owner), ANYDEV_SUCCESS);
  const char* api = nullptr;
  ASSERT_EQ(anydev_context_api(owner, &api), ANYDEV_SUCCESS);
  EXPECT_STREQ(api, "level_zero");
  const std::vector<unsigned char> out = read(owner, imported, 256);
  EXPECT_EQ(out, std::vector<unsigned char>(256, 7));
  EXPECT_EQ(anydev_context_release(owner), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_buffer_release(imported), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_buffer_release(b), ANYDEV_SUCCESS);
}

// The emulated driver reports no IPC (zeDriverGetIpcProperties flags 0):
// device memory and events are UNSUPPORTED with the reason, never a
// half-made handle.
TEST_F(LevelZero, SharingWithoutDriverIpcIsUnsupportedNamingTheReason) {
  anydev_buffer_t b = nullptr;
  EXPECT_EQ(anydev_buffer_create_shareable(ctx_, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 64, &b),
            ANYDEV_ERROR_UNSUPPORTED);
  EXPECT_EQ(b, nullptr);
  std::string message = anydev_last_error_message();
  EXPECT_NE(message.find("level_zero"), std::string::npos) << message;
  EXPECT_NE(message.find("reports no memory IPC (zeDriverGetIpcProperties"), std::string::npos)
      << message;
  // Host memory needs the driver's host-pointer import, not IPC: it is
  // shareable where the driver has the import and refused, naming it, where
  // it has not (level_zero-backend-no-host-import).
  const char* import_setting = std::getenv("ANYDEV_LEVEL_ZERO_EMULATOR_HOST_IMPORT");
  if (import_setting != nullptr && std::string(import_setting) == "0") {
    EXPECT_EQ(anydev_buffer_create_shareable(ctx_, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 64, &b),
              ANYDEV_ERROR_UNSUPPORTED);
    message = anydev_last_error_message();
    EXPECT_NE(message.find("zexDriverImportExternalPointer"), std::string::npos) << message;
    EXPECT_NE(message.find("does not offer it"), std::string::npos) << message;
  } else {
    ASSERT_EQ(anydev_buffer_create_shareable(ctx_, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 64, &b),
              ANYDEV_SUCCESS)
        << anydev_last_error_message();
    EXPECT_EQ(anydev_buffer_release(b), ANYDEV_SUCCESS);
    b = nullptr;
  }
  anydev_event_t e = nullptr;
  EXPECT_EQ(anydev_context_create_shareable_event(ctx_, &e), ANYDEV_ERROR_UNSUPPORTED);
  EXPECT_EQ(e, nullptr);
  message = anydev_last_error_message();
  EXPECT_NE(message.find("reports no event pool IPC (zeDriverGetIpcProperties flags 0"),
            std::string::npos)
      << message;
}

// A stream that waits on an event keeps the event's slot until it is past the
// wait: the slot (recycled once signaled) must not be reset while the wait is
// still queued behind slow work, however soon the core re-records or destroys
// the anydev event. The emulator reports such a reset as misuse (ctest fails
// on its prefix); with ANYDEV_LEVEL_ZERO_EMULATOR_DELAY_US the waiting stream
// is far behind while the other stream's records recycle every slot.
TEST_F(LevelZero, AWaitKeepsItsEventSlotUntilTheStreamIsPastIt) {
  anydev_stream_t stream = nullptr;
  anydev_context_t behind = nullptr;
  anydev_buffer_t b = nullptr;
  ASSERT_NO_FATAL_FAILURE(busy_stream(&stream, &behind, &b));
  ASSERT_EQ(anydev_context_wait_for(behind, ctx_), ANYDEV_SUCCESS) << anydev_last_error_message();
  // More records than a pool of events holds: the core re-records its pooled
  // event each time (dropping the slot `behind` waits on), on another stream.
  anydev_stream_t third_stream = nullptr;
  ASSERT_EQ(anydev_context_create_stream(ctx_, &third_stream), ANYDEV_SUCCESS);
  anydev_context_t third = nullptr;
  ASSERT_EQ(anydev_context_with_stream(ctx_, third_stream, &third), ANYDEV_SUCCESS);
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(anydev_context_wait_for(third, ctx_), ANYDEV_SUCCESS) << anydev_last_error_message();
  }
  EXPECT_EQ(anydev_context_synchronize(third), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_context_release(third), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_stream_release(third_stream), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_context_synchronize(behind), ANYDEV_SUCCESS) << anydev_last_error_message();
  EXPECT_EQ(anydev_buffer_release(b), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_context_release(behind), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_stream_release(stream), ANYDEV_SUCCESS);
}

// An event record takes a slot; when none is free it asks the driver about
// a few of the oldest retired slots, never about every one: with many
// released buffers (an event each in the core's pool) a record must cost the
// same whatever their number. Under ANYDEV_LEVEL_ZERO_EMULATOR_DELAY_US the
// retired slots are still far from signaled, where a scan of all of them
// would query each; without it they may signal first (the bound holds either
// way).
TEST_F(LevelZero, ARecordQueriesAFewRetiredSlotsHoweverManyAreRetired) {
  anydev_stream_t stream = nullptr;
  anydev_context_t slow = nullptr;
  anydev_buffer_t b = nullptr;
  ASSERT_NO_FATAL_FAILURE(busy_stream(&stream, &slow, &b));
  // Records behind the fills, their events released at once: retired slots.
  auto record_and_release = [&](int n) {
    for (int i = 0; i < n; ++i) {
      anydev_event_t e = nullptr;
      ASSERT_EQ(anydev_context_create_event(slow, &e), ANYDEV_SUCCESS);
      ASSERT_EQ(anydev_stream_record_event(stream, e), ANYDEV_SUCCESS)
          << anydev_last_error_message();
      ASSERT_EQ(anydev_event_release(e), ANYDEV_SUCCESS);
    }
  };
  record_and_release(256);
  constexpr int kRecords = 128;  // past the free slots left by the last pool
  const unsigned long long before = calls("zeEventQueryStatus");
  record_and_release(kRecords);
  const unsigned long long queries = calls("zeEventQueryStatus") - before;
  EXPECT_LE(queries, 4u * kRecords) << "zeEventQueryStatus calls for " << kRecords << " records";
  EXPECT_EQ(anydev_context_synchronize(slow), ANYDEV_SUCCESS) << anydev_last_error_message();
  EXPECT_EQ(anydev_buffer_release(b), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_context_release(slow), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_stream_release(stream), ANYDEV_SUCCESS);
}

TEST_F(LevelZero, CopiesBetweenTwoDevicesOfOneDriver) {
  if (anydev_device_count("level_zero") < 2) {
    GTEST_SKIP() << "needs ANYDEV_LEVEL_ZERO_EMULATOR_DEVICES=2";
  }
  anydev_context_t other = nullptr;
  ASSERT_EQ(anydev_context_create("level_zero", 1, &other), ANYDEV_SUCCESS);
  int can = 0;
  ASSERT_EQ(anydev_context_can_access(ctx_, other, &can), ANYDEV_SUCCESS);
  EXPECT_EQ(can, 1);
  anydev_buffer_t a = device_bytes(ctx_, 1 << 16);
  anydev_buffer_t b = device_bytes(other, 1 << 16);
  const std::uint64_t pattern = 0x0123456789ABCDEFull;
  ASSERT_EQ(anydev_enqueue_fill(ctx_, a, &pattern, 8), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_enqueue_copy(other, b, a), ANYDEV_SUCCESS) << anydev_last_error_message();
  const std::vector<unsigned char> out = read(other, b, 1 << 16);
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(out[i], reinterpret_cast<const unsigned char*>(&pattern)[i % 8]) << i;
  }
  EXPECT_EQ(anydev_buffer_release(a), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_buffer_release(b), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_context_release(other), ANYDEV_SUCCESS);
}

}  // namespace
