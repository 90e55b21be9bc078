// SPDX-License-Identifier: Apache-2.0
// Tests of the HIP emulator itself, calling its hip* exports directly: it
// must fail where the real runtime fails and expose what real hardware would
// (asynchrony, faulting device addresses), or the hip backend's runs against
// it prove nothing. ctest runs it with ANYDEV_HIP_EMULATOR_DEVICES=2.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hip_calls.h"

namespace {

class HipEmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(hipInit(0), hipSuccess);
    int count = 0;
    ASSERT_EQ(hipGetDeviceCount(&count), hipSuccess);
    ASSERT_EQ(count, 2) << "run with ANYDEV_HIP_EMULATOR_DEVICES=2 (ctest does)";
    ASSERT_EQ(hipSetDevice(0), hipSuccess);
    ASSERT_EQ(hipStreamCreateWithFlags(&stream_, hipStreamNonBlocking), hipSuccess);
  }
  void TearDown() override {
    EXPECT_EQ(hipStreamSynchronize(stream_), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(stream_), hipSuccess);
    EXPECT_EQ(hipSetDevice(0), hipSuccess);
  }
  static int device_of(const void* p) {
    hipPointerAttribute_t attributes{};
    EXPECT_EQ(hipPointerGetAttributes(&attributes, p), hipSuccess);
    return attributes.memoryType == hipMemoryTypeDevice ? attributes.device : -1;
  }
  hipStream_t stream_ = nullptr;
};

TEST(HipEmulatorInit, InitVersionsAndErrorNames) {
  EXPECT_EQ(hipInit(0), hipSuccess);
  EXPECT_EQ(hipInit(1), hipErrorInvalidValue);
  int version = 0;
  EXPECT_EQ(hipRuntimeGetVersion(&version), hipSuccess);
  EXPECT_EQ(version, HIP_VERSION);
  EXPECT_EQ(hipDriverGetVersion(&version), hipSuccess);
  EXPECT_EQ(hipDriverGetVersion(nullptr), hipErrorInvalidValue);
  EXPECT_STREQ(hipGetErrorName(hipErrorInvalidDevice), "hipErrorInvalidDevice");
  EXPECT_STREQ(hipGetErrorName(hipErrorNoDevice), "hipErrorNoDevice");
  EXPECT_STREQ(hipGetErrorName(static_cast<hipError_t>(12345)), "hipErrorUnknown");
  EXPECT_STREQ(hipGetErrorString(hipErrorInvalidValue), "invalid argument");
}

// As the real 5.2 runtime on a machine without a GPU (issue 15).
TEST(HipEmulatorInit, NoDeviceIsInvalidDeviceThenNoDeviceWithCountZero) {
  EXPECT_EXIT(
      {  // a fresh process: the setting is read once, at first use
        setenv("ANYDEV_HIP_EMULATOR_DEVICES", "0", 1);
        int count = -1;
        void* p = nullptr;
        const bool ok = hipInit(0) == hipErrorInvalidDevice &&
                        hipGetDeviceCount(&count) == hipErrorNoDevice && count == 0 &&
                        hipMalloc(&p, 64) == hipErrorNoDevice;
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(HipEmulatorTest, CurrentDeviceIsPerThreadAndChecked) {
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  int device = -1;
  EXPECT_EQ(hipGetDevice(&device), hipSuccess);
  EXPECT_EQ(device, 1);
  int other = -1;
  std::thread([&other] { (void)hipGetDevice(&other); }).join();
  EXPECT_EQ(other, 0) << "a new thread starts on device 0";
  EXPECT_EQ(hipSetDevice(2), hipErrorInvalidDevice);
  EXPECT_EQ(hipSetDevice(-1), hipErrorInvalidDevice);
  EXPECT_EQ(hipGetDevice(&device), hipSuccess);
  EXPECT_EQ(device, 1) << "a refused hipSetDevice changes nothing";
  int value = 0;
  EXPECT_EQ(hipDeviceGetAttribute(&value, hipDeviceAttributePciBusId, 2), hipErrorInvalidDevice);
  char name[64] = {};
  EXPECT_EQ(hipDeviceGetName(name, sizeof name, 1), hipSuccess);
  EXPECT_STREQ(name, "anydev HIP emulator");
}

TEST_F(HipEmulatorTest, AttributesTheBackendReads) {
  int value = -1;
  EXPECT_EQ(hipDeviceGetAttribute(&value, hipDeviceAttributePciBusId, 1), hipSuccess);
  EXPECT_EQ(value, 2);
  EXPECT_EQ(hipDeviceGetAttribute(&value, hipDeviceAttributeMemoryPoolsSupported, 0), hipSuccess);
  EXPECT_EQ(value, 1);
  EXPECT_EQ(hipDeviceGetAttribute(&value, hipDeviceAttributeComputeCapabilityMajor, 0), hipSuccess);
  EXPECT_EQ(hipDeviceGetAttribute(&value, hipDeviceAttributeMaxTexture1DWidth, 0),
            hipErrorInvalidValue)
      << "not emulated";
  std::size_t total = 0, free_bytes = 0;
  EXPECT_EQ(hipDeviceTotalMem(&total, 0), hipSuccess);
  EXPECT_EQ(hipMemGetInfo(&free_bytes, &total), hipSuccess);
  EXPECT_LE(free_bytes, total);
}

TEST_F(HipEmulatorTest, StreamsBelongToTheDeviceCurrentAtCreation) {
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  hipStream_t on_one = nullptr;
  ASSERT_EQ(hipStreamCreateWithFlags(&on_one, 0), hipSuccess);
  ASSERT_EQ(hipSetDevice(0), hipSuccess);
  void* p = nullptr;
  ASSERT_EQ(hipMallocAsync(&p, 64, on_one), hipSuccess);
  EXPECT_EQ(device_of(p), 1) << "the stream's device, not the current one";
  EXPECT_EQ(hipFreeAsync(p, on_one), hipSuccess);
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  void* q = nullptr;
  ASSERT_EQ(hipMallocAsync(&q, 64, nullptr), hipSuccess);
  EXPECT_EQ(device_of(q), 1) << "the null stream is the current device's";
  EXPECT_EQ(hipFreeAsync(q, hipStreamPerThread), hipSuccess);
  EXPECT_EQ(hipStreamSynchronize(nullptr), hipSuccess);
  EXPECT_EQ(hipStreamDestroy(on_one), hipSuccess);
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
  ASSERT_EQ(hipHostMalloc(&pinned, kBytes, 0), hipSuccess);
  ASSERT_EQ(hipMalloc(&a, kBytes), hipSuccess);
  ASSERT_EQ(hipMalloc(&b, kBytes), hipSuccess);
  ASSERT_EQ(hipMemcpyAsync(host_copy.data(), source.data(), kBytes, hipMemcpyHostToHost, stream_),
            hipSuccess);
  ASSERT_EQ(hipMemcpyAsync(a, host_copy.data(), kBytes, hipMemcpyHostToDevice, stream_),
            hipSuccess);
  ASSERT_EQ(hipMemcpyAsync(b, a, kBytes, hipMemcpyDeviceToDevice, stream_), hipSuccess);
  ASSERT_EQ(hipMemcpyAsync(pinned, b, kBytes, hipMemcpyDeviceToHost, stream_), hipSuccess);
  ASSERT_EQ(hipMemcpyAsync(back.data(), pinned, kBytes, hipMemcpyDefault, stream_), hipSuccess);
  ASSERT_EQ(hipStreamSynchronize(stream_), hipSuccess);
  EXPECT_EQ(back, source);
  // The kind must describe the pointers.
  EXPECT_EQ(hipMemcpyAsync(back.data(), a, kBytes, hipMemcpyHostToDevice, stream_),
            hipErrorInvalidValue);
  EXPECT_EQ(hipMemcpyAsync(a, back.data(), kBytes, hipMemcpyDeviceToDevice, stream_),
            hipErrorInvalidValue);
  EXPECT_EQ(hipMemcpyAsync(a, b, kBytes, static_cast<hipMemcpyKind>(7), stream_),
            hipErrorInvalidMemcpyDirection);
  EXPECT_EQ(hipFree(a), hipSuccess);
  EXPECT_EQ(hipFree(b), hipSuccess);
  EXPECT_EQ(hipHostFree(pinned), hipSuccess);
}

TEST_F(HipEmulatorTest, WorkIsAsynchronousUntilSynchronize) {
  void* host = nullptr;
  ASSERT_EQ(hipHostMalloc(&host, 16, 0), hipSuccess);
  std::memset(host, 0, 16);
  hipEvent_t done = nullptr;
  ASSERT_EQ(hipEventCreateWithFlags(&done, hipEventDisableTiming), hipSuccess);
  ASSERT_EQ(hipMemsetD8Async(host, 0xab, 16, stream_), hipSuccess);
  ASSERT_EQ(hipEventRecord(done, stream_), hipSuccess);
  // The delay (set in main) keeps the memset queued: stale data until synchronized.
  EXPECT_EQ(hipEventQuery(done), hipErrorNotReady);
  EXPECT_EQ(hipStreamQuery(stream_), hipErrorNotReady);
  EXPECT_EQ(static_cast<unsigned char*>(host)[0], 0);
  ASSERT_EQ(hipEventSynchronize(done), hipSuccess);
  EXPECT_EQ(hipEventQuery(done), hipSuccess);
  EXPECT_EQ(static_cast<unsigned char*>(host)[15], 0xab);
  EXPECT_EQ(hipStreamSynchronize(stream_), hipSuccess);
  EXPECT_EQ(hipStreamQuery(stream_), hipSuccess);
  EXPECT_EQ(hipEventDestroy(done), hipSuccess);
  EXPECT_EQ(hipEventDestroy(done), hipErrorInvalidHandle);
  EXPECT_EQ(hipEventCreateWithFlags(&done, hipEventInterprocess), hipErrorInvalidValue)
      << "interprocess events must disable timing";
  EXPECT_EQ(hipHostFree(host), hipSuccess);
}

TEST_F(HipEmulatorTest, StreamWaitsForAnEventOfAnotherStream) {
  hipStream_t other = nullptr;
  ASSERT_EQ(hipStreamCreateWithFlags(&other, hipStreamNonBlocking), hipSuccess);
  hipEvent_t event = nullptr;
  ASSERT_EQ(hipEventCreateWithFlags(&event, hipEventDisableTiming), hipSuccess);
  EXPECT_EQ(hipEventQuery(event), hipSuccess) << "never recorded";
  std::uint8_t host[8] = {};
  void* device = nullptr;
  ASSERT_EQ(hipMalloc(&device, 8), hipSuccess);
  ASSERT_EQ(hipMemsetD8Async(device, 0x5a, 8, other), hipSuccess);
  ASSERT_EQ(hipEventRecord(event, other), hipSuccess);
  ASSERT_EQ(hipStreamWaitEvent(stream_, event, 0), hipSuccess);
  ASSERT_EQ(hipMemcpyAsync(host, device, 8, hipMemcpyDeviceToHost, stream_), hipSuccess);
  ASSERT_EQ(hipStreamSynchronize(stream_), hipSuccess);
  EXPECT_EQ(host[7], 0x5a);
  EXPECT_EQ(hipStreamWaitEvent(stream_, event, 1), hipErrorInvalidValue);
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  hipStream_t on_one = nullptr;
  ASSERT_EQ(hipStreamCreateWithFlags(&on_one, 0), hipSuccess);
  EXPECT_EQ(hipEventRecord(event, on_one), hipErrorInvalidHandle) << "an event of device 0";
  EXPECT_EQ(hipStreamDestroy(on_one), hipSuccess);
  EXPECT_EQ(hipEventDestroy(event), hipSuccess);
  EXPECT_EQ(hipStreamDestroy(other), hipSuccess);
  EXPECT_EQ(hipFree(device), hipSuccess);
}

TEST_F(HipEmulatorTest, PeerCopyTakesDeviceOrdinals) {
  void* zero = nullptr;
  void* one = nullptr;
  ASSERT_EQ(hipMalloc(&zero, 32), hipSuccess);
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  ASSERT_EQ(hipMalloc(&one, 32), hipSuccess);
  EXPECT_EQ(hipDeviceEnablePeerAccess(0, 0), hipSuccess);
  EXPECT_EQ(hipDeviceEnablePeerAccess(0, 0), hipErrorPeerAccessAlreadyEnabled);
  EXPECT_EQ(hipDeviceEnablePeerAccess(1, 0), hipErrorInvalidDevice) << "itself";
  EXPECT_EQ(hipDeviceEnablePeerAccess(5, 0), hipErrorInvalidDevice);
  int can = -1;
  EXPECT_EQ(hipDeviceCanAccessPeer(&can, 1, 0), hipSuccess);
  EXPECT_EQ(can, 1);
  ASSERT_EQ(hipSetDevice(0), hipSuccess);
  ASSERT_EQ(hipMemsetD32Async(zero, 0x01020304, 8, stream_), hipSuccess);
  ASSERT_EQ(hipMemcpyPeerAsync(one, 1, zero, 0, 32, stream_), hipSuccess);
  std::uint32_t back[8] = {};
  ASSERT_EQ(hipMemcpyAsync(back, one, 32, hipMemcpyDeviceToHost, stream_), hipSuccess);
  ASSERT_EQ(hipStreamSynchronize(stream_), hipSuccess);
  EXPECT_EQ(back[7], 0x01020304u);
  EXPECT_EQ(hipMemcpyPeerAsync(one, 0, zero, 0, 32, stream_), hipErrorInvalidValue)
      << "the pointer is not memory of the device named for it";
  EXPECT_EQ(hipMemcpyPeerAsync(one, 2, zero, 0, 32, stream_), hipErrorInvalidDevice);
  EXPECT_EQ(hipFree(zero), hipSuccess);
  EXPECT_EQ(hipFree(one), hipSuccess);
}

TEST_F(HipEmulatorTest, FillsWriteExactElementsAndCheckAlignment) {
  void* p = nullptr;
  ASSERT_EQ(hipMalloc(&p, 64), hipSuccess);
  auto* bytes = static_cast<std::uint8_t*>(p);
  ASSERT_EQ(hipMemsetD8Async(p, 0, 64, stream_), hipSuccess);
  ASSERT_EQ(hipMemsetD16Async(bytes + 2, 0xbeef, 3, stream_), hipSuccess);
  ASSERT_EQ(hipMemsetD32Async(bytes + 16, static_cast<int>(0xdeadbeef), 2, stream_), hipSuccess);
  std::uint8_t back[64] = {};
  ASSERT_EQ(hipMemcpyAsync(back, p, 64, hipMemcpyDeviceToHost, stream_), hipSuccess);
  ASSERT_EQ(hipStreamSynchronize(stream_), hipSuccess);
  const std::uint8_t expect[] = {0, 0, 0xef, 0xbe, 0xef, 0xbe, 0xef, 0xbe, 0};
  EXPECT_EQ(std::memcmp(back, expect, sizeof expect), 0);
  std::uint32_t word = 0;
  std::memcpy(&word, back + 20, 4);
  EXPECT_EQ(word, 0xdeadbeefu);
  EXPECT_EQ(back[24], 0);
  EXPECT_EQ(hipMemsetD32Async(bytes + 2, 1, 1, stream_), hipErrorInvalidValue) << "misaligned";
  EXPECT_EQ(hipMemsetD8Async(bytes, 1, 65, stream_), hipErrorInvalidValue) << "out of bounds";
  EXPECT_EQ(hipFree(p), hipSuccess);
}

TEST_F(HipEmulatorTest, StalePointersAreAlwaysRecognized) {
  void* p = nullptr;
  ASSERT_EQ(hipMalloc(&p, 64), hipSuccess);
  EXPECT_DEATH({ *static_cast<volatile char*>(p) = 1; }, "") << "device memory faults on the host";
  ASSERT_EQ(hipFree(p), hipSuccess);
  EXPECT_EQ(hipMemsetD8Async(p, 1, 64, stream_), hipErrorInvalidValue);
  EXPECT_EQ(hipFree(p), hipErrorInvalidDevicePointer) << "double free";
  hipPointerAttribute_t attributes{};
  EXPECT_EQ(hipPointerGetAttributes(&attributes, p), hipErrorInvalidValue);
  void* q = nullptr;
  ASSERT_EQ(hipMalloc(&q, 64), hipSuccess);
  EXPECT_NE(q, p) << "addresses are never reused";
  EXPECT_EQ(hipFree(q), hipSuccess);
}

// HIP documents: zero-byte hipMalloc/hipHostMalloc give null, and freeing null
// succeeds. HIP 5.2 (alpaka#2197): hipMallocAsync(0) and hipFreeAsync(null)
// are errors, so the backend must not make them.
TEST_F(HipEmulatorTest, ZeroSizesAndNullFreesAsHip52) {
  void* p = reinterpret_cast<void*>(1);
  EXPECT_EQ(hipMalloc(&p, 0), hipSuccess);
  EXPECT_EQ(p, nullptr);
  p = reinterpret_cast<void*>(1);
  EXPECT_EQ(hipHostMalloc(&p, 0, 0), hipSuccess);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(hipFree(nullptr), hipSuccess);
  EXPECT_EQ(hipHostFree(nullptr), hipSuccess);
  EXPECT_EQ(hipMallocAsync(&p, 0, stream_), hipErrorInvalidValue);
  EXPECT_EQ(hipFreeAsync(nullptr, stream_), hipErrorInvalidValue);
  EXPECT_EQ(hipMalloc(nullptr, 64), hipErrorInvalidValue);
  EXPECT_EQ(hipHostMalloc(&p, 64, 0x10), hipErrorInvalidValue) << "unknown flag";
  // The 5.2 headers mark hipHostAlloc deprecated: call the export, as the backend would.
  using HostAlloc = hipError_t (*)(void**, size_t, unsigned int);
  auto host_alloc = reinterpret_cast<HostAlloc>(dlsym(RTLD_DEFAULT, "hipHostAlloc"));
  ASSERT_NE(host_alloc, nullptr);
  EXPECT_EQ(host_alloc(&p, 64, hipHostMallocPortable), hipSuccess);
  EXPECT_EQ(hipHostFree(p), hipSuccess);
  EXPECT_EQ(hipHostFree(p), hipErrorInvalidValue) << "double free";
}

// hipFree synchronizes the device first, as HIP documents: queued work on
// the memory runs before it goes.
TEST_F(HipEmulatorTest, FreeWaitsForQueuedWork) {
  void* p = nullptr;
  ASSERT_EQ(hipMalloc(&p, 64), hipSuccess);
  ASSERT_EQ(hipMemsetD8Async(p, 1, 64, stream_), hipSuccess);
  ASSERT_EQ(hipFree(p), hipSuccess);
  EXPECT_EQ(hipStreamSynchronize(stream_), hipSuccess);
}

TEST(HipEmulatorFault, MemoryFreedBeforeQueuedWorkRunsIsStickyIllegalAddress) {
  EXPECT_EXIT(
      {
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
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(HipEmulatorTest, ForkedChildIsRefused) {
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    alarm(20);  // a hang fails the test instead of blocking it
    int count = 0;
    void* p = nullptr;
    const bool refused = hipGetDeviceCount(&count) == hipErrorNotInitialized &&
                         hipMalloc(&p, 64) == hipErrorNotInitialized &&
                         hipStreamSynchronize(stream_) == hipErrorNotInitialized;
    _exit(refused ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
}

TEST_F(HipEmulatorTest, CreatedPoolIsItsOwnWithItsAttributesAndAccess) {
  hipMemPoolProps props{};
  props.allocType = hipMemAllocationTypePinned;
  props.handleTypes = hipMemHandleTypeNone;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = 1;
  hipMemPool_t pool = nullptr;
  ASSERT_EQ(hipMemPoolCreate(&pool, &props), hipSuccess);
  std::uint64_t threshold = UINT64_MAX;
  EXPECT_EQ(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &threshold), hipSuccess);
  EXPECT_EQ(hipMemPoolSetAttribute(pool, hipMemPoolAttrReservedMemCurrent, &threshold),
            hipErrorInvalidValue)
      << "not emulated";
  hipMemAccessDesc access{};
  access.location.type = hipMemLocationTypeDevice;
  access.location.id = 0;
  access.flags = hipMemAccessFlagsProtReadWrite;
  EXPECT_EQ(hipMemPoolSetAccess(pool, &access, 1), hipSuccess);
  access.location.id = 1;
  access.flags = hipMemAccessFlagsProtNone;
  EXPECT_EQ(hipMemPoolSetAccess(pool, &access, 1), hipErrorInvalidValue) << "its own device";
  void* p = nullptr;
  ASSERT_EQ(hipMallocFromPoolAsync(&p, 128, pool, stream_), hipSuccess);
  EXPECT_EQ(device_of(p), 1) << "the pool's device";
  EXPECT_EQ(hipMemPoolDestroy(pool), hipSuccess);
  EXPECT_EQ(hipMemPoolDestroy(pool), hipErrorInvalidValue) << "destroyed";
  EXPECT_EQ(hipMallocFromPoolAsync(&p, 128, pool, stream_), hipErrorInvalidValue);
  EXPECT_EQ(hipFreeAsync(p, stream_), hipSuccess) << "its memory may still be freed";
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
  EXPECT_EXIT(
      {  // a fresh process: the setting is read once, at first use
        setenv("ANYDEV_HIP_EMULATOR_MEMORY_POOLS", "0", 1);
        int pools = -1;
        void* p = nullptr;
        hipMemPool_t pool = nullptr;
        hipMemPoolProps props{};
        const bool ok = hipDeviceGetAttribute(&pools, hipDeviceAttributeMemoryPoolsSupported, 0) ==
                            hipSuccess &&
                        pools == 0 && hipMallocAsync(&p, 64, nullptr) == hipErrorNotSupported &&
                        hipMemPoolCreate(&pool, &props) == hipErrorNotSupported &&
                        hipMalloc(&p, 64) == hipSuccess &&
                        hipFreeAsync(p, nullptr) == hipErrorNotSupported;
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(HipEmulatorCallCounts, EveryExportedCallCounts) {
  anydev_hip_emulator_reset_call_counts();
  int device = -1;
  EXPECT_EQ(hipGetDevice(&device), hipSuccess);
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
  EXPECT_EQ(version(&v), hipSuccess);
  EXPECT_EQ(v / 10000000, 7);
  void* p = nullptr;
  ASSERT_EQ(malloc_fn(&p, 48), hipSuccess);
  ASSERT_EQ(memset_fn(p, 0, 48, nullptr), hipSuccess);
  ASSERT_EQ(fill(p, 16, 0x11223344u, 2, 3, nullptr), hipSuccess);  // 2 words, 3 rows of 16 bytes
  std::uint32_t back[12] = {};
  ASSERT_EQ(copy(back, p, 48, hipMemcpyDeviceToHost, nullptr), hipSuccess);
  ASSERT_EQ(sync(nullptr), hipSuccess);
  for (int row = 0; row < 3; ++row) {
    EXPECT_EQ(back[row * 4], 0x11223344u);
    EXPECT_EQ(back[row * 4 + 1], 0x11223344u);
    EXPECT_EQ(back[row * 4 + 2], 0u);
    EXPECT_EQ(back[row * 4 + 3], 0u);
  }
  EXPECT_EQ(fill(p, 6, 1, 2, 2, nullptr), hipErrorInvalidValue) << "pitch below the row";
}

}  // namespace

int main(int argc, char** argv) {
  setenv("ANYDEV_HIP_EMULATOR_DELAY_US", "20000", 0);
  setenv("ANYDEV_HIP_EMULATOR_QUIET", "1", 0);
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  return RUN_ALL_TESTS();
}
