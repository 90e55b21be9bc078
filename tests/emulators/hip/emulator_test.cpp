// SPDX-License-Identifier: Apache-2.0
// Tests of the HIP emulator itself, calling its hip* exports directly: it
// must fail where the real runtime fails and expose what real hardware would
// (asynchrony, faulting device addresses), or the hip backend's runs against
// it prove nothing. ctest runs it with ANYDEV_HIP_EMULATOR_DEVICES=2.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hip_calls.h"
#include "hip_fill_code_objects.h"

namespace {

// A call that must succeed.
#define HIP_ASSERT_OK(call) ASSERT_EQ((call), hipSuccess)
#define HIP_EXPECT_OK(call) EXPECT_EQ((call), hipSuccess)

// Runs `check` in a fresh process (the settings are read once, at first use)
// with `variable` set to `value` (none when null); it must return true.
void expect_in_fresh_process(const char* variable, const char* value, bool (*check)()) {
  EXPECT_EXIT(
      {
        if (variable != nullptr) setenv(variable, value, 1);
        std::exit(check() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

class HipEmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HIP_ASSERT_OK(hipInit(0));
    int count = 0;
    HIP_ASSERT_OK(hipGetDeviceCount(&count));
    ASSERT_EQ(count, 2) << "run with ANYDEV_HIP_EMULATOR_DEVICES=2 (ctest does)";
    HIP_ASSERT_OK(hipSetDevice(0));
    HIP_ASSERT_OK(hipStreamCreateWithFlags(&stream_, hipStreamNonBlocking));
  }
  void TearDown() override {
    HIP_EXPECT_OK(hipStreamSynchronize(stream_));
    HIP_EXPECT_OK(hipStreamDestroy(stream_));
    HIP_EXPECT_OK(hipSetDevice(0));
  }
  static int device_of(const void* p) {
    hipPointerAttribute_t attributes{};
    HIP_EXPECT_OK(hipPointerGetAttributes(&attributes, p));
    return attributes.memoryType == hipMemoryTypeDevice ? attributes.device : -1;
  }
  hipStream_t stream_ = nullptr;
};

TEST(HipEmulatorInit, InitVersionsAndErrorNames) {
  HIP_EXPECT_OK(hipInit(0));
  EXPECT_EQ(hipInit(1), hipErrorInvalidValue);
  int version = 0;
  HIP_EXPECT_OK(hipRuntimeGetVersion(&version));
  EXPECT_EQ(version, HIP_VERSION);
  HIP_EXPECT_OK(hipDriverGetVersion(&version));
  EXPECT_EQ(hipDriverGetVersion(nullptr), hipErrorInvalidValue);
  EXPECT_STREQ(hipGetErrorName(hipErrorInvalidDevice), "hipErrorInvalidDevice");
  EXPECT_STREQ(hipGetErrorName(hipErrorNoDevice), "hipErrorNoDevice");
  EXPECT_STREQ(hipGetErrorName(static_cast<hipError_t>(12345)), "hipErrorUnknown");
  EXPECT_STREQ(hipGetErrorString(hipErrorInvalidValue), "invalid argument");
}

// As the real 5.2 runtime on a machine without a GPU.
TEST(HipEmulatorInit, NoDeviceIsInvalidDeviceThenNoDeviceWithCountZero) {
  expect_in_fresh_process("ANYDEV_HIP_EMULATOR_DEVICES", "0", [] {
    int count = -1;
    void* p = nullptr;
    const bool ok = hipInit(0) == hipErrorInvalidDevice &&
                    hipGetDeviceCount(&count) == hipErrorNoDevice && count == 0 &&
                    hipMalloc(&p, 64) == hipErrorNoDevice;
    return ok;
  });
}

TEST_F(HipEmulatorTest, CurrentDeviceIsPerThreadAndChecked) {
  HIP_ASSERT_OK(hipSetDevice(1));
  int device = -1;
  HIP_EXPECT_OK(hipGetDevice(&device));
  EXPECT_EQ(device, 1);
  int other = -1;
  std::thread([&other] { (void)hipGetDevice(&other); }).join();
  EXPECT_EQ(other, 0) << "a new thread starts on device 0";
  EXPECT_EQ(hipSetDevice(2), hipErrorInvalidDevice);
  EXPECT_EQ(hipSetDevice(-1), hipErrorInvalidDevice);
  HIP_EXPECT_OK(hipGetDevice(&device));
  EXPECT_EQ(device, 1) << "a refused hipSetDevice changes nothing";
  int value = 0;
  EXPECT_EQ(hipDeviceGetAttribute(&value, hipDeviceAttributePciBusId, 2), hipErrorInvalidDevice);
  char name[64] = {};
  HIP_EXPECT_OK(hipDeviceGetName(name, sizeof name, 1));
  EXPECT_STREQ(name, "anydev HIP emulator");
}

TEST_F(HipEmulatorTest, AttributesTheBackendReads) {
  int value = -1;
  HIP_EXPECT_OK(hipDeviceGetAttribute(&value, hipDeviceAttributePciBusId, 1));
  EXPECT_EQ(value, 2);
  HIP_EXPECT_OK(hipDeviceGetAttribute(&value, hipDeviceAttributeMemoryPoolsSupported, 0));
  EXPECT_EQ(value, 1);
  HIP_EXPECT_OK(hipDeviceGetAttribute(&value, hipDeviceAttributeComputeCapabilityMajor, 0));
  EXPECT_EQ(hipDeviceGetAttribute(&value, hipDeviceAttributeMaxTexture1DWidth, 0),
            hipErrorInvalidValue)
      << "not emulated";
  std::size_t total = 0, free_bytes = 0;
  HIP_EXPECT_OK(hipDeviceTotalMem(&total, 0));
  HIP_EXPECT_OK(hipMemGetInfo(&free_bytes, &total));
  EXPECT_LE(free_bytes, total);
}

TEST_F(HipEmulatorTest, StreamsBelongToTheDeviceCurrentAtCreation) {
  HIP_ASSERT_OK(hipSetDevice(1));
  hipStream_t on_one = nullptr;
  HIP_ASSERT_OK(hipStreamCreateWithFlags(&on_one, 0));
  HIP_ASSERT_OK(hipSetDevice(0));
  void* p = nullptr;
  HIP_ASSERT_OK(hipMallocAsync(&p, 64, on_one));
  EXPECT_EQ(device_of(p), 1) << "the stream's device, not the current one";
  HIP_EXPECT_OK(hipFreeAsync(p, on_one));
  HIP_ASSERT_OK(hipSetDevice(1));
  void* q = nullptr;
  HIP_ASSERT_OK(hipMallocAsync(&q, 64, nullptr));
  EXPECT_EQ(device_of(q), 1) << "the null stream is the current device's";
  HIP_EXPECT_OK(hipFreeAsync(q, hipStreamPerThread));
  HIP_EXPECT_OK(hipStreamSynchronize(nullptr));
  HIP_EXPECT_OK(hipStreamDestroy(on_one));
  EXPECT_EQ(hipStreamDestroy(on_one), hipErrorInvalidHandle) << "destroyed";
  EXPECT_EQ(hipStreamCreateWithFlags(&on_one, 8), hipErrorInvalidValue);
}

TEST_F(HipEmulatorTest, EveryCopyKindRoundTrips) {
  constexpr std::size_t kBytes = 4096;
  std::vector<unsigned char> source(kBytes), back(kBytes), host_copy(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) source[i] = static_cast<unsigned char>(i * 7);
  void* pinned = nullptr;
  void* a = nullptr;
  void* b = nullptr;
  HIP_ASSERT_OK(hipHostMalloc(&pinned, kBytes, 0));
  HIP_ASSERT_OK(hipMalloc(&a, kBytes));
  HIP_ASSERT_OK(hipMalloc(&b, kBytes));
  HIP_ASSERT_OK(
      hipMemcpyAsync(host_copy.data(), source.data(), kBytes, hipMemcpyHostToHost, stream_));
  HIP_ASSERT_OK(hipMemcpyAsync(a, host_copy.data(), kBytes, hipMemcpyHostToDevice, stream_));
  HIP_ASSERT_OK(hipMemcpyAsync(b, a, kBytes, hipMemcpyDeviceToDevice, stream_));
  HIP_ASSERT_OK(hipMemcpyAsync(pinned, b, kBytes, hipMemcpyDeviceToHost, stream_));
  HIP_ASSERT_OK(hipMemcpyAsync(back.data(), pinned, kBytes, hipMemcpyDefault, stream_));
  HIP_ASSERT_OK(hipStreamSynchronize(stream_));
  EXPECT_EQ(back, source);
  // The kind must describe the pointers.
  EXPECT_EQ(hipMemcpyAsync(back.data(), a, kBytes, hipMemcpyHostToDevice, stream_),
            hipErrorInvalidValue);
  EXPECT_EQ(hipMemcpyAsync(a, back.data(), kBytes, hipMemcpyDeviceToDevice, stream_),
            hipErrorInvalidValue);
  EXPECT_EQ(hipMemcpyAsync(a, b, kBytes, static_cast<hipMemcpyKind>(7), stream_),
            hipErrorInvalidMemcpyDirection);
  HIP_EXPECT_OK(hipFree(a));
  HIP_EXPECT_OK(hipFree(b));
  HIP_EXPECT_OK(hipHostFree(pinned));
}

TEST_F(HipEmulatorTest, WorkIsAsynchronousUntilSynchronize) {
  void* host = nullptr;
  HIP_ASSERT_OK(hipHostMalloc(&host, 16, 0));
  std::memset(host, 0, 16);
  hipEvent_t done = nullptr;
  HIP_ASSERT_OK(hipEventCreateWithFlags(&done, hipEventDisableTiming));
  HIP_ASSERT_OK(hipMemsetD8Async(host, 0xab, 16, stream_));
  HIP_ASSERT_OK(hipEventRecord(done, stream_));
  // The delay (set in main) keeps the memset queued: stale data until synchronized.
  EXPECT_EQ(hipEventQuery(done), hipErrorNotReady);
  EXPECT_EQ(hipStreamQuery(stream_), hipErrorNotReady);
#if !defined(__SANITIZE_THREAD__)  // a stale read races with the worker by design
  EXPECT_EQ(static_cast<unsigned char*>(host)[0], 0);
#endif
  HIP_ASSERT_OK(hipEventSynchronize(done));
  HIP_EXPECT_OK(hipEventQuery(done));
  EXPECT_EQ(static_cast<unsigned char*>(host)[15], 0xab);
  HIP_EXPECT_OK(hipStreamSynchronize(stream_));
  HIP_EXPECT_OK(hipStreamQuery(stream_));
  HIP_EXPECT_OK(hipEventDestroy(done));
  EXPECT_EQ(hipEventDestroy(done), hipErrorInvalidHandle);
  EXPECT_EQ(hipEventCreateWithFlags(&done, hipEventInterprocess), hipErrorInvalidValue)
      << "interprocess events must disable timing";
  HIP_EXPECT_OK(hipHostFree(host));
}

TEST_F(HipEmulatorTest, StreamWaitsForAnEventOfAnotherStream) {
  hipStream_t other = nullptr;
  HIP_ASSERT_OK(hipStreamCreateWithFlags(&other, hipStreamNonBlocking));
  hipEvent_t event = nullptr;
  HIP_ASSERT_OK(hipEventCreateWithFlags(&event, hipEventDisableTiming));
  HIP_EXPECT_OK(hipEventQuery(event)) << "never recorded";
  std::uint8_t host[8] = {};
  void* device = nullptr;
  HIP_ASSERT_OK(hipMalloc(&device, 8));
  HIP_ASSERT_OK(hipMemsetD8Async(device, 0x5a, 8, other));
  HIP_ASSERT_OK(hipEventRecord(event, other));
  HIP_ASSERT_OK(hipStreamWaitEvent(stream_, event, 0));
  HIP_ASSERT_OK(hipMemcpyAsync(host, device, 8, hipMemcpyDeviceToHost, stream_));
  HIP_ASSERT_OK(hipStreamSynchronize(stream_));
  EXPECT_EQ(host[7], 0x5a);
  EXPECT_EQ(hipStreamWaitEvent(stream_, event, 1), hipErrorInvalidValue);
  HIP_ASSERT_OK(hipSetDevice(1));
  hipStream_t on_one = nullptr;
  HIP_ASSERT_OK(hipStreamCreateWithFlags(&on_one, 0));
  EXPECT_EQ(hipEventRecord(event, on_one), hipErrorInvalidHandle) << "an event of device 0";
  HIP_EXPECT_OK(hipStreamDestroy(on_one));
  HIP_EXPECT_OK(hipEventDestroy(event));
  HIP_EXPECT_OK(hipStreamDestroy(other));
  HIP_EXPECT_OK(hipFree(device));
}

TEST_F(HipEmulatorTest, PeerCopyTakesDeviceOrdinals) {
  void* zero = nullptr;
  void* one = nullptr;
  HIP_ASSERT_OK(hipMalloc(&zero, 32));
  HIP_ASSERT_OK(hipSetDevice(1));
  HIP_ASSERT_OK(hipMalloc(&one, 32));
  HIP_EXPECT_OK(hipDeviceEnablePeerAccess(0, 0));
  EXPECT_EQ(hipDeviceEnablePeerAccess(0, 0), hipErrorPeerAccessAlreadyEnabled);
  EXPECT_EQ(hipDeviceEnablePeerAccess(1, 0), hipErrorInvalidDevice) << "itself";
  EXPECT_EQ(hipDeviceEnablePeerAccess(5, 0), hipErrorInvalidDevice);
  int can = -1;
  HIP_EXPECT_OK(hipDeviceCanAccessPeer(&can, 1, 0));
  EXPECT_EQ(can, 1);
  HIP_ASSERT_OK(hipSetDevice(0));
  HIP_ASSERT_OK(hipMemsetD32Async(zero, 0x01020304, 8, stream_));
  HIP_ASSERT_OK(hipMemcpyPeerAsync(one, 1, zero, 0, 32, stream_));
  std::uint32_t back[8] = {};
  HIP_ASSERT_OK(hipMemcpyAsync(back, one, 32, hipMemcpyDeviceToHost, stream_));
  HIP_ASSERT_OK(hipStreamSynchronize(stream_));
  EXPECT_EQ(back[7], 0x01020304u);
  EXPECT_EQ(hipMemcpyPeerAsync(one, 0, zero, 0, 32, stream_), hipErrorInvalidValue)
      << "the pointer is not memory of the device named for it";
  EXPECT_EQ(hipMemcpyPeerAsync(one, 2, zero, 0, 32, stream_), hipErrorInvalidDevice);
  HIP_EXPECT_OK(hipFree(zero));
  HIP_EXPECT_OK(hipFree(one));
}

TEST_F(HipEmulatorTest, FillsWriteExactElementsAndCheckAlignment) {
  void* p = nullptr;
  HIP_ASSERT_OK(hipMalloc(&p, 64));
  auto* bytes = static_cast<std::uint8_t*>(p);
  HIP_ASSERT_OK(hipMemsetD8Async(p, 0, 64, stream_));
  HIP_ASSERT_OK(hipMemsetD16Async(bytes + 2, 0xbeef, 3, stream_));
  HIP_ASSERT_OK(hipMemsetD32Async(bytes + 16, static_cast<int>(0xdeadbeef), 2, stream_));
  std::uint8_t back[64] = {};
  HIP_ASSERT_OK(hipMemcpyAsync(back, p, 64, hipMemcpyDeviceToHost, stream_));
  HIP_ASSERT_OK(hipStreamSynchronize(stream_));
  const std::uint8_t expect[] = {0, 0, 0xef, 0xbe, 0xef, 0xbe, 0xef, 0xbe, 0};
  EXPECT_EQ(std::memcmp(back, expect, sizeof expect), 0);
  std::uint32_t word = 0;
  std::memcpy(&word, back + 20, 4);
  EXPECT_EQ(word, 0xdeadbeefu);
  EXPECT_EQ(back[24], 0);
  EXPECT_EQ(hipMemsetD32Async(bytes + 2, 1, 1, stream_), hipErrorInvalidValue) << "misaligned";
  EXPECT_EQ(hipMemsetD8Async(bytes, 1, 65, stream_), hipErrorInvalidValue) << "out of bounds";
  HIP_EXPECT_OK(hipFree(p));
}

TEST_F(HipEmulatorTest, StalePointersAreAlwaysRecognized) {
  void* p = nullptr;
  HIP_ASSERT_OK(hipMalloc(&p, 64));
  EXPECT_DEATH({ *static_cast<volatile char*>(p) = 1; }, "") << "device memory faults on the host";
  HIP_ASSERT_OK(hipFree(p));
  EXPECT_EQ(hipMemsetD8Async(p, 1, 64, stream_), hipErrorInvalidValue);
  EXPECT_EQ(hipFree(p), hipErrorInvalidDevicePointer) << "double free";
  hipPointerAttribute_t attributes{};
  EXPECT_EQ(hipPointerGetAttributes(&attributes, p), hipErrorInvalidValue);
  void* q = nullptr;
  HIP_ASSERT_OK(hipMalloc(&q, 64));
  EXPECT_NE(q, p) << "addresses are never reused";
  HIP_EXPECT_OK(hipFree(q));
}

// HIP documents: zero-byte hipMalloc/hipHostMalloc give null, and freeing null
// succeeds. HIP 5.2 (alpaka#2197): hipMallocAsync(0) and hipFreeAsync(null)
// are errors, so the backend must not make them.
TEST_F(HipEmulatorTest, ZeroSizesAndNullFreesAsHip52) {
  void* p = reinterpret_cast<void*>(1);
  HIP_EXPECT_OK(hipMalloc(&p, 0));
  EXPECT_EQ(p, nullptr);
  p = reinterpret_cast<void*>(1);
  HIP_EXPECT_OK(hipHostMalloc(&p, 0, 0));
  EXPECT_EQ(p, nullptr);
  HIP_EXPECT_OK(hipFree(nullptr));
  HIP_EXPECT_OK(hipHostFree(nullptr));
  EXPECT_EQ(hipMallocAsync(&p, 0, stream_), hipErrorInvalidValue);
  EXPECT_EQ(hipFreeAsync(nullptr, stream_), hipErrorInvalidValue);
  EXPECT_EQ(hipMalloc(nullptr, 64), hipErrorInvalidValue);
  EXPECT_EQ(hipHostMalloc(&p, 64, 0x10), hipErrorInvalidValue) << "unknown flag";
  // The 5.2 headers mark hipHostAlloc deprecated: call the export, as the backend would.
  using HostAlloc = hipError_t (*)(void**, size_t, unsigned int);
  auto host_alloc = reinterpret_cast<HostAlloc>(dlsym(RTLD_DEFAULT, "hipHostAlloc"));
  ASSERT_NE(host_alloc, nullptr);
  HIP_EXPECT_OK(host_alloc(&p, 64, hipHostMallocPortable));
  HIP_EXPECT_OK(hipHostFree(p));
  EXPECT_EQ(hipHostFree(p), hipErrorInvalidValue) << "double free";
}

// hipFree synchronizes the device first, as HIP documents: queued work on
// the memory runs before it goes.
TEST_F(HipEmulatorTest, FreeWaitsForQueuedWork) {
  void* p = nullptr;
  HIP_ASSERT_OK(hipMalloc(&p, 64));
  HIP_ASSERT_OK(hipMemsetD8Async(p, 1, 64, stream_));
  HIP_ASSERT_OK(hipFree(p));
  HIP_EXPECT_OK(hipStreamSynchronize(stream_));
}

TEST(HipEmulatorFault, MemoryFreedBeforeQueuedWorkRunsIsStickyIllegalAddress) {
  expect_in_fresh_process(nullptr, nullptr, [] {
    hipStream_t a = nullptr;
    hipStream_t b = nullptr;
    hipEvent_t freed = nullptr;
    void* p = nullptr;
    void* q = nullptr;
    bool ok = hipStreamCreateWithFlags(&a, 0) == hipSuccess &&
              hipStreamCreateWithFlags(&b, 0) == hipSuccess &&
              hipEventCreateWithFlags(&freed, hipEventDisableTiming) == hipSuccess &&
              hipMallocAsync(&p, 64, b) == hipSuccess && hipFreeAsync(p, b) == hipSuccess &&
              hipEventRecord(freed, b) == hipSuccess &&
              hipStreamWaitEvent(a, freed, 0) == hipSuccess &&
              hipMemsetD8Async(p, 1, 64, a) == hipSuccess;  // queued: runs after the free
    ok = ok && hipStreamSynchronize(a) == hipErrorIllegalAddress &&
         hipStreamSynchronize(a) == hipErrorIllegalAddress &&  // sticky
         hipMalloc(&q, 64) == hipErrorIllegalAddress;
    return ok;
  });
}

// A child of fork() cannot use the runtime its parent initialized (stricter
// than HIP, which leaves it undefined). No lock is taken on the way to the
// refusal, so the parent's stream workers cannot hang the child.
TEST_F(HipEmulatorTest, ForkedChildIsRefused) {
  GTEST_FLAG_SET(death_test_style, "fast");  // a plain fork, no exec
  hipStream_t stream = stream_;
  EXPECT_EXIT(
      {
        int count = 0;
        void* p = nullptr;
        std::exit(hipGetDeviceCount(&count) == hipErrorNotInitialized &&
                          hipMalloc(&p, 64) == hipErrorNotInitialized &&
                          hipStreamSynchronize(stream) == hipErrorNotInitialized
                      ? 0
                      : 1);
      },
      ::testing::ExitedWithCode(0), "");
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  int count = 0;
  HIP_EXPECT_OK(hipGetDeviceCount(&count)) << "the parent still works";
}

TEST_F(HipEmulatorTest, CreatedPoolIsItsOwnWithItsAttributesAndAccess) {
  hipMemPoolProps props{};
  props.allocType = hipMemAllocationTypePinned;
  props.handleTypes = hipMemHandleTypeNone;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = 1;
  hipMemPool_t pool = nullptr;
  HIP_ASSERT_OK(hipMemPoolCreate(&pool, &props));
  std::uint64_t threshold = UINT64_MAX;
  HIP_EXPECT_OK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &threshold));
  EXPECT_EQ(hipMemPoolSetAttribute(pool, hipMemPoolAttrReservedMemCurrent, &threshold),
            hipErrorInvalidValue)
      << "not emulated";
  hipMemAccessDesc access{};
  access.location.type = hipMemLocationTypeDevice;
  access.location.id = 0;
  access.flags = hipMemAccessFlagsProtReadWrite;
  HIP_EXPECT_OK(hipMemPoolSetAccess(pool, &access, 1));
  access.location.id = 1;
  access.flags = hipMemAccessFlagsProtNone;
  EXPECT_EQ(hipMemPoolSetAccess(pool, &access, 1), hipErrorInvalidValue) << "its own device";
  void* p = nullptr;
  HIP_ASSERT_OK(hipMallocFromPoolAsync(&p, 128, pool, stream_));
  EXPECT_EQ(device_of(p), 1) << "the pool's device";
  HIP_EXPECT_OK(hipMemPoolDestroy(pool));
  EXPECT_EQ(hipMemPoolDestroy(pool), hipErrorInvalidValue) << "destroyed";
  EXPECT_EQ(hipMallocFromPoolAsync(&p, 128, pool, stream_), hipErrorInvalidValue);
  HIP_EXPECT_OK(hipFreeAsync(p, stream_)) << "its memory may still be freed";
  props.location.id = 2;
  EXPECT_EQ(hipMemPoolCreate(&pool, &props), hipErrorInvalidValue) << "not a device";
}

TEST_F(HipEmulatorTest, ImpossibleSizeIsOutOfMemory) {
  constexpr std::size_t kImpossible = std::size_t{1} << 62;
  void* p = nullptr;
  EXPECT_EQ(hipMalloc(&p, kImpossible), hipErrorOutOfMemory);
  EXPECT_EQ(hipMallocAsync(&p, kImpossible, stream_), hipErrorOutOfMemory);
  EXPECT_EQ(hipHostMalloc(&p, kImpossible, 0), hipErrorOutOfMemory);
}

TEST(HipEmulatorNoPools, StreamOrderedCallsAreNotSupported) {
  expect_in_fresh_process("ANYDEV_HIP_EMULATOR_MEMORY_POOLS", "0", [] {
    int pools = -1;
    void* p = nullptr;
    hipMemPool_t pool = nullptr;
    hipMemPoolProps props{};
    const bool ok =
        hipDeviceGetAttribute(&pools, hipDeviceAttributeMemoryPoolsSupported, 0) == hipSuccess &&
        pools == 0 && hipMallocAsync(&p, 64, nullptr) == hipErrorNotSupported &&
        hipMemPoolCreate(&pool, &props) == hipErrorNotSupported &&
        hipMalloc(&p, 64) == hipSuccess && hipFreeAsync(p, nullptr) == hipErrorNotSupported;
    return ok;
  });
}

TEST(HipEmulatorCallCounts, EveryExportedCallCounts) {
  anydev_hip_emulator_reset_call_counts();
  int device = -1;
  HIP_EXPECT_OK(hipGetDevice(&device));
  EXPECT_EQ(hipGetDevice(nullptr), hipErrorInvalidValue);  // failed calls count too
  EXPECT_EQ(anydev_hip_emulator_call_count("hipGetDevice"), 2u);
  EXPECT_EQ(anydev_hip_emulator_call_count("hipNoSuchCall"), 0u);
  char text[64] = {};
  EXPECT_EQ(anydev_hip_emulator_call_counts(text, sizeof text), 2u);
  EXPECT_STREQ(text, "hipGetDevice=2");
  anydev_hip_emulator_reset_call_counts();
  EXPECT_EQ(anydev_hip_emulator_call_counts(text, sizeof text), 0u);
}

// libamdhip64.so.5 lacks hipMemsetD2D32Async, as HIP 5.2 does; the ROCm 7
// variant has it, and fills exactly `width` words in each row.
TEST(HipEmulatorVariants, OnlyTheRocm7VariantHasTheStridedFill) {
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "hipMemsetD2D32Async"), nullptr);
  void* rocm7 = dlopen(ANYDEV_TEST_HIP_EMULATOR_ROCM7, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(rocm7, nullptr) << dlerror();
  using Fill = hipError_t (*)(void*, size_t, unsigned, size_t, size_t, hipStream_t);
  auto fill = reinterpret_cast<Fill>(dlsym(rocm7, "hipMemsetD2D32Async"));
  auto malloc_fn = reinterpret_cast<hipError_t (*)(void**, size_t)>(dlsym(rocm7, "hipMalloc"));
  auto memset_fn = reinterpret_cast<decltype(&hipMemsetD8Async)>(dlsym(rocm7, "hipMemsetD8Async"));
  auto copy = reinterpret_cast<decltype(&hipMemcpyAsync)>(dlsym(rocm7, "hipMemcpyAsync"));
  auto sync =
      reinterpret_cast<decltype(&hipStreamSynchronize)>(dlsym(rocm7, "hipStreamSynchronize"));
  auto version =
      reinterpret_cast<decltype(&hipRuntimeGetVersion)>(dlsym(rocm7, "hipRuntimeGetVersion"));
  ASSERT_TRUE(fill && malloc_fn && memset_fn && copy && sync && version);
  int v = 0;
  HIP_EXPECT_OK(version(&v));
  EXPECT_EQ(v / 10000000, 7);
  void* p = nullptr;
  HIP_ASSERT_OK(malloc_fn(&p, 48));
  HIP_ASSERT_OK(memset_fn(p, 0, 48, nullptr));
  HIP_ASSERT_OK(fill(p, 16, 0x11223344u, 2, 3, nullptr));  // 2 words, 3 rows of 16 bytes
  std::uint32_t back[12] = {};
  HIP_ASSERT_OK(copy(back, p, 48, hipMemcpyDeviceToHost, nullptr));
  HIP_ASSERT_OK(sync(nullptr));
  for (int row = 0; row < 3; ++row) {
    EXPECT_EQ(back[row * 4], 0x11223344u);
    EXPECT_EQ(back[row * 4 + 1], 0x11223344u);
    EXPECT_EQ(back[row * 4 + 2], 0u);
    EXPECT_EQ(back[row * 4 + 3], 0u);
  }
  EXPECT_EQ(fill(p, 6, 1, 2, 2, nullptr), hipErrorInvalidValue) << "pitch below the row";
}

// Sharing (core_share.h) on the 5.2 variant: an allocation in 5.2's
// property layout exported as an fd and mapped again is the same memory;
// ROCm 6's layout is refused here; interprocess events need no timing.
TEST_F(HipEmulatorTest, VmmInThisRuntimesLayoutAndInterprocessEvents) {
  hipMemAllocationProp prop{};
  prop.type = hipMemAllocationTypePinned;
  prop.requestedHandleType = hipMemHandleTypePosixFileDescriptor;
  prop.location.type = hipMemLocationTypeDevice;
  prop.location.id = 0;
  size_t granularity = 0;
  HIP_ASSERT_OK(
      hipMemGetAllocationGranularity(&granularity, &prop, hipMemAllocationGranularityMinimum));
  // ROCm 6's order (type first) read as 5.2's: not pinned device memory.
  const struct {
    hipMemAllocationType type;
    hipMemAllocationHandleType handles;
    hipMemLocation location;
    void* metadata;
    unsigned char flags[4];
  } v6{hipMemAllocationTypePinned,
       hipMemHandleTypePosixFileDescriptor,
       {hipMemLocationTypeDevice, 0},
       nullptr,
       {}};
  size_t ignored = 0;
  EXPECT_EQ(
      hipMemGetAllocationGranularity(&ignored, reinterpret_cast<const hipMemAllocationProp*>(&v6),
                                     hipMemAllocationGranularityMinimum),
      hipErrorInvalidValue);
  hipMemGenericAllocationHandle_t first = nullptr;
  hipMemGenericAllocationHandle_t second = nullptr;
  HIP_ASSERT_OK(hipMemCreate(&first, granularity, &prop, 0));
  int fd = -1;
  HIP_ASSERT_OK(hipMemExportToShareableHandle(&fd, first, hipMemHandleTypePosixFileDescriptor, 0));
  HIP_ASSERT_OK(hipMemImportFromShareableHandle(&second, reinterpret_cast<void*>(std::intptr_t{fd}),
                                                hipMemHandleTypePosixFileDescriptor));
  ::close(fd);
  void* a = nullptr;
  void* b = nullptr;
  HIP_ASSERT_OK(hipMemAddressReserve(&a, granularity, 0, nullptr, 0));
  HIP_ASSERT_OK(hipMemAddressReserve(&b, granularity, 0, nullptr, 0));
  HIP_ASSERT_OK(hipMemMap(a, granularity, 0, first, 0));
  HIP_ASSERT_OK(hipMemMap(b, granularity, 0, second, 0));
  hipMemAccessDesc access{};
  access.location = prop.location;
  access.flags = hipMemAccessFlagsProtReadWrite;
  HIP_ASSERT_OK(hipMemSetAccess(a, granularity, &access, 1));
  HIP_ASSERT_OK(hipMemSetAccess(b, granularity, &access, 1));
  HIP_ASSERT_OK(hipMemsetD8Async(a, 0x3c, granularity, stream_));
  hipEvent_t shared = nullptr;
  hipEvent_t opened = nullptr;
  EXPECT_EQ(hipEventCreateWithFlags(&shared, hipEventInterprocess), hipErrorInvalidValue);
  HIP_ASSERT_OK(hipEventCreateWithFlags(&shared, hipEventInterprocess | hipEventDisableTiming));
  hipIpcEventHandle_t handle{};
  HIP_ASSERT_OK(hipIpcGetEventHandle(&handle, shared));
  HIP_ASSERT_OK(hipIpcOpenEventHandle(&opened, handle));
  HIP_ASSERT_OK(hipEventRecord(shared, stream_));
  HIP_ASSERT_OK(hipEventSynchronize(opened));
  unsigned char last = 0;
  HIP_ASSERT_OK(hipMemcpyAsync(&last, static_cast<char*>(b) + granularity - 1, 1,
                               hipMemcpyDeviceToHost, stream_));
  HIP_ASSERT_OK(hipStreamSynchronize(stream_));
  EXPECT_EQ(last, 0x3c);
  HIP_EXPECT_OK(hipEventDestroy(opened));
  HIP_EXPECT_OK(hipEventDestroy(shared));
  for (void* p : {a, b}) {
    HIP_EXPECT_OK(hipMemUnmap(p, granularity));
    HIP_EXPECT_OK(hipMemAddressFree(p, granularity));
  }
  HIP_EXPECT_OK(hipMemRelease(first));
  HIP_EXPECT_OK(hipMemRelease(second));
}

}  // namespace

int main(int argc, char** argv) {
  setenv("ANYDEV_HIP_EMULATOR_DELAY_US", "20000", 0);
  setenv("ANYDEV_HIP_EMULATOR_QUIET", "1", 0);
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  return RUN_ALL_TESTS();
}

namespace {

// hipEventElapsedTime as the runtime documents it: hipErrorInvalidHandle for
// an event created with hipEventDisableTiming or never recorded,
// hipErrorNotReady while a record has not run, else the milliseconds.
TEST_F(HipEmulatorTest, EventElapsedTimeFollowsTheRuntimesRules) {
  hipEvent_t untimed = nullptr;
  hipEvent_t start = nullptr;
  hipEvent_t end = nullptr;
  hipEvent_t never = nullptr;
  HIP_ASSERT_OK(hipEventCreateWithFlags(&untimed, hipEventDisableTiming));
  HIP_ASSERT_OK(hipEventCreateWithFlags(&start, hipEventDefault));
  HIP_ASSERT_OK(hipEventCreateWithFlags(&end, hipEventBlockingSync));
  HIP_ASSERT_OK(hipEventCreateWithFlags(&never, hipEventDefault));
  void* host = nullptr;
  HIP_ASSERT_OK(hipHostMalloc(&host, 16, 0));
  float ms = -1.0F;
  HIP_ASSERT_OK(hipEventRecord(start, stream_));
  HIP_ASSERT_OK(hipMemsetD8Async(host, 1, 16, stream_));
  HIP_ASSERT_OK(hipEventRecord(end, stream_));
  HIP_ASSERT_OK(hipEventRecord(untimed, stream_));
  // The delay (set in main) keeps the records queued.
  EXPECT_EQ(hipEventElapsedTime(&ms, start, end), hipErrorNotReady);
  HIP_ASSERT_OK(hipStreamSynchronize(stream_));
  HIP_ASSERT_OK(hipEventElapsedTime(&ms, start, end));
  EXPECT_GE(ms, 0.0F);
  EXPECT_EQ(hipEventElapsedTime(&ms, start, untimed), hipErrorInvalidHandle);
  EXPECT_EQ(hipEventElapsedTime(&ms, start, never), hipErrorInvalidHandle);
  EXPECT_EQ(hipEventElapsedTime(nullptr, start, end), hipErrorInvalidValue);
  for (hipEvent_t e : {untimed, start, end, never}) HIP_EXPECT_OK(hipEventDestroy(e));
  HIP_EXPECT_OK(hipHostFree(host));
}

TEST_F(HipEmulatorTest, StreamPrioritiesHaveRocmsRange) {
  int least = 1;
  int greatest = 1;
  HIP_ASSERT_OK(hipDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT_EQ(least, 0);
  EXPECT_EQ(greatest, -1);
  hipStream_t high = nullptr;
  HIP_ASSERT_OK(hipStreamCreateWithPriority(&high, hipStreamNonBlocking, -7));
  HIP_EXPECT_OK(hipStreamSynchronize(high));
  HIP_EXPECT_OK(hipStreamDestroy(high));
  EXPECT_EQ(hipStreamCreateWithPriority(&high, 8, 0), hipErrorInvalidValue);
}

}  // namespace

// A graph's memset, 1-D copies and empty node run in dependency order on
// every launch and are counted; a memset node of host memory is
// hipErrorInvalidValue, as are a repeated dependency and a destroyed
// executable graph.
TEST_F(HipEmulatorTest, GraphsRunTheirNodesInDependencyOrder) {
  constexpr size_t kBytes = 512;
  void* a = nullptr;
  void* b = nullptr;
  void* host = nullptr;
  HIP_ASSERT_OK(hipMalloc(&a, kBytes));
  HIP_ASSERT_OK(hipMalloc(&b, kBytes));
  HIP_ASSERT_OK(hipHostMalloc(&host, kBytes, 0));
  hipGraph_t graph = nullptr;
  HIP_ASSERT_OK(hipGraphCreate(&graph, 0));
  hipMemsetParams fill{};
  fill.dst = a;
  fill.elementSize = 2;
  fill.width = kBytes / 2;
  fill.height = 1;
  fill.pitch = kBytes;
  fill.value = 0xBEEF;
  hipGraphNode_t set = nullptr;
  hipGraphNode_t to_b = nullptr;
  hipGraphNode_t to_host = nullptr;
  hipGraphNode_t join = nullptr;
  HIP_ASSERT_OK(hipGraphAddMemsetNode(&set, graph, nullptr, 0, &fill));
  HIP_ASSERT_OK(
      hipGraphAddMemcpyNode1D(&to_b, graph, &set, 1, b, a, kBytes, hipMemcpyDeviceToDevice));
  HIP_ASSERT_OK(
      hipGraphAddMemcpyNode1D(&to_host, graph, &to_b, 1, host, b, kBytes, hipMemcpyDefault));
  HIP_ASSERT_OK(hipGraphAddEmptyNode(&join, graph, &to_host, 1));
  hipGraphNode_t bad = nullptr;
  const hipGraphNode_t twice[] = {set, set};
  EXPECT_EQ(hipGraphAddEmptyNode(&bad, graph, twice, 2), hipErrorInvalidValue);
  hipMemsetParams on_host = fill;
  on_host.dst = host;
  EXPECT_EQ(hipGraphAddMemsetNode(&bad, graph, nullptr, 0, &on_host), hipErrorInvalidValue);

  hipGraphExec_t exec = nullptr;
  HIP_ASSERT_OK(hipGraphInstantiateWithFlags(&exec, graph, 0));
  HIP_EXPECT_OK(hipGraphDestroy(graph));
  anydev_hip_emulator_reset_call_counts();
  for (int launch = 0; launch < 2; ++launch) {
    std::memset(host, 0, kBytes);
    HIP_ASSERT_OK(hipGraphLaunch(exec, stream_));
    HIP_ASSERT_OK(hipStreamSynchronize(stream_));
    const auto* halves = static_cast<const std::uint16_t*>(host);
    for (size_t i = 0; i < kBytes / 2; ++i) ASSERT_EQ(halves[i], 0xBEEF) << i;
  }
  EXPECT_EQ(anydev_hip_emulator_call_count("hipGraphLaunch"), 2u);
  EXPECT_EQ(anydev_hip_emulator_call_count("hipMemcpyAsync"), 0u);
  HIP_EXPECT_OK(hipGraphExecDestroy(exec));
  EXPECT_EQ(hipGraphLaunch(exec, stream_), hipErrorInvalidValue);
  HIP_EXPECT_OK(hipFree(a));
  HIP_EXPECT_OK(hipFree(b));
  HIP_EXPECT_OK(hipHostFree(host));
}

// anydev's fill kernel: the code object for the device's processor (gfx90a
// by default) loads for the current device and its kernel fills by the
// contract; another processor's code object, too few threads, or a stream of
// another device are refused with HIP's codes; gcnArchName says the processor.
TEST_F(HipEmulatorTest, ModulesLoadTheDevicesCodeObjectAndRunTheFillKernel) {
  hipDeviceProp_t props{};
  HIP_ASSERT_OK(hipGetDeviceProperties(&props, 0));
  EXPECT_STREQ(props.gcnArchName, "gfx90a:sramecc+:xnack-");
  const anydev::hip::FillCodeObject* gfx90a = nullptr;
  const anydev::hip::FillCodeObject* gfx1100 = nullptr;
  for (const anydev::hip::FillCodeObject& object : anydev::hip::fill_code_objects()) {
    if (std::strcmp(object.arch, "gfx90a") == 0) gfx90a = &object;
    if (std::strcmp(object.arch, "gfx1100") == 0) gfx1100 = &object;
  }
  ASSERT_NE(gfx90a, nullptr);
  ASSERT_NE(gfx1100, nullptr);
  hipModule_t other = nullptr;
  EXPECT_EQ(hipModuleLoadData(&other, gfx1100->bytes), hipErrorNoBinaryForGpu);
  const unsigned char garbage[64] = {};
  EXPECT_EQ(hipModuleLoadData(&other, garbage), hipErrorInvalidImage);

  hipModule_t module = nullptr;
  HIP_ASSERT_OK(hipModuleLoadData(&module, gfx90a->bytes));
  hipFunction_t function = nullptr;
  EXPECT_EQ(hipModuleGetFunction(&function, module, "another_kernel"), hipErrorNotFound);
  HIP_ASSERT_OK(hipModuleGetFunction(&function, module, "anydev_fill_pattern16"));

  unsigned char* dst = nullptr;
  HIP_ASSERT_OK(hipMalloc(reinterpret_cast<void**>(&dst), 64));
  HIP_ASSERT_OK(hipMemsetD8Async(dst, 0, 64, stream_));
  std::uint64_t address = reinterpret_cast<std::uintptr_t>(dst) + 3;
  std::uint64_t bytes = 40;
  std::uint64_t lo = 0x0706050403020100ull;
  std::uint64_t hi = 0x0f0e0d0c0b0a0908ull;
  void* params[] = {&address, &bytes, &lo, &hi};
  EXPECT_EQ(hipModuleLaunchKernel(function, 1, 1, 1, 8, 1, 1, 0, stream_, params, nullptr),
            hipErrorInvalidValue);  // the head and tail need 16 threads
  HIP_ASSERT_OK(hipModuleLaunchKernel(function, 1, 1, 1, 256, 1, 1, 0, stream_, params, nullptr));
  std::vector<unsigned char> out(64);
  HIP_ASSERT_OK(hipMemcpyAsync(out.data(), dst, 64, hipMemcpyDeviceToHost, stream_));
  HIP_ASSERT_OK(hipStreamSynchronize(stream_));
  for (std::size_t i = 0; i < 64; ++i) {
    const bool inside = i >= 3 && i < 43;
    // Byte (address mod 16) of lo | hi << 64: the byte at dst + i is (dst + i) mod 16.
    const auto expected =
        static_cast<unsigned char>((reinterpret_cast<std::uintptr_t>(dst) + i) % 16);
    EXPECT_EQ(out[i], inside ? expected : 0) << "byte " << i;
  }

  HIP_ASSERT_OK(hipSetDevice(1));
  hipStream_t other_stream = nullptr;
  HIP_ASSERT_OK(hipStreamCreateWithFlags(&other_stream, hipStreamNonBlocking));
  EXPECT_EQ(hipModuleLaunchKernel(function, 1, 1, 1, 256, 1, 1, 0, other_stream, params, nullptr),
            hipErrorInvalidDevice);
  HIP_EXPECT_OK(hipStreamDestroy(other_stream));
  HIP_ASSERT_OK(hipSetDevice(0));
  HIP_EXPECT_OK(hipFree(dst));
}
