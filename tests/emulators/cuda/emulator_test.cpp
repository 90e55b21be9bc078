// SPDX-License-Identifier: Apache-2.0
// Tests of the CUDA emulator itself: it must fail where a real driver fails
// and expose what real hardware would expose (asynchrony, faulting device
// addresses), or the conformance runs against it prove nothing.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "emu_call_counts.h"

namespace {

class EmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxPushCurrent(context_), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  void TearDown() override {
    EXPECT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy(stream_), CUDA_SUCCESS);
    CUcontext popped = nullptr;
    EXPECT_EQ(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    EXPECT_EQ(popped, context_);
    EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  }
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
};

TEST(EmulatorInit, CallsBeforeCuInitFail) {
  // A fresh process: this one may already have called cuInit.
  EXPECT_EXIT(
      {
        int count = 0;
        std::exit(cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(EmulatorProcAddress, ResolvesTheVersionedEntryPoint) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  ASSERT_EQ(cuGetProcAddress("cuMemAlloc", &fn, 3020, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
  // The entry point handed out counts its calls before making them
  // (emu_call_counts.h): not &cuMemAlloc_v2 itself, but it is found.
  EXPECT_NE(fn, nullptr);
  EXPECT_EQ(cuGetProcAddress("cuMemAlloc", &fn, 2000, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(cuGetProcAddress("cuNoSuchCall", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
}

// Calls through cuGetProcAddress's pointers are counted per entry point;
// calls to the exported symbols are not; a reset starts again from 0.
TEST(EmulatorCallCounts, CountsCallsThroughProcAddressOnly) {
  void* fn = nullptr;
  ASSERT_EQ(cuGetProcAddress("cuDriverGetVersion", &fn, 2020, CU_GET_PROC_ADDRESS_DEFAULT, nullptr),
            CUDA_SUCCESS);
  auto driver_get_version = reinterpret_cast<decltype(&cuDriverGetVersion)>(fn);
  anydev_cuda_emulator_reset_call_counts();
  int version = 0;
  EXPECT_EQ(driver_get_version(&version), CUDA_SUCCESS);
  EXPECT_EQ(driver_get_version(nullptr), CUDA_ERROR_INVALID_VALUE);  // failed calls count too
  EXPECT_EQ(cuDriverGetVersion(&version), CUDA_SUCCESS);             // not counted
  EXPECT_EQ(anydev_cuda_emulator_call_count("cuDriverGetVersion"), 2u);
  EXPECT_EQ(anydev_cuda_emulator_call_count("cuNoSuchCall"), 0u);
  char text[64];
  EXPECT_EQ(anydev_cuda_emulator_call_counts(text, sizeof text), 2u);
  EXPECT_STREQ(text, "cuDriverGetVersion=2");
  EXPECT_EQ(anydev_cuda_emulator_call_counts(text, 6), 2u);
  EXPECT_STREQ(text, "cuDri");  // truncated, NUL-terminated
  anydev_cuda_emulator_reset_call_counts();
  EXPECT_EQ(anydev_cuda_emulator_call_counts(text, sizeof text), 0u);
  EXPECT_STREQ(text, "");
}

TEST_F(EmulatorTest, DeviceAddressesFaultOnTheHost) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc(&p, 64), CUDA_SUCCESS);
  EXPECT_DEATH({ *reinterpret_cast<volatile char*>(static_cast<std::uintptr_t>(p)) = 1; }, "");
  EXPECT_EQ(cuMemFree(p), CUDA_SUCCESS);
}

TEST_F(EmulatorTest, CopiesRoundTripThroughDeviceMemory) {
  constexpr size_t kBytes = 4096;
  void* host = nullptr;
  ASSERT_EQ(cuMemHostAlloc(&host, kBytes, CU_MEMHOSTALLOC_PORTABLE), CUDA_SUCCESS);
  std::vector<unsigned char> source(kBytes);
  for (size_t i = 0; i < kBytes; ++i) source[i] = static_cast<unsigned char>(i * 7);
  CUdeviceptr device = 0;
  ASSERT_EQ(cuMemAlloc(&device, kBytes), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyHtoDAsync(device, source.data(), kBytes, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(host), device, kBytes, stream_),
            CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(host, source.data(), kBytes), 0);
  EXPECT_EQ(cuMemFree(device), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
}

TEST_F(EmulatorTest, WorkIsAsynchronousUntilSynchronize) {
  void* host = nullptr;
  ASSERT_EQ(cuMemHostAlloc(&host, 16, 0), CUDA_SUCCESS);
  std::memset(host, 0, 16);
  CUevent done = nullptr;
  ASSERT_EQ(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(host), 0xab, 16, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuEventRecord(done, stream_), CUDA_SUCCESS);
  // The delay (set in main) keeps the memset queued: reading the memory now
  // would race with it and see stale data.
  EXPECT_EQ(cuEventQuery(done), CUDA_ERROR_NOT_READY);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(cuEventQuery(done), CUDA_SUCCESS);
  EXPECT_EQ(static_cast<unsigned char*>(host)[0], 0xab);
  EXPECT_EQ(static_cast<unsigned char*>(host)[15], 0xab);
  EXPECT_EQ(cuEventDestroy(done), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
}

TEST_F(EmulatorTest, StridedMemsetWritesExactWords) {
  constexpr size_t kRows = 5;
  void* host = nullptr;
  ASSERT_EQ(cuMemHostAlloc(&host, kRows * 8, 0), CUDA_SUCCESS);
  const auto base = reinterpret_cast<CUdeviceptr>(host);
  ASSERT_EQ(cuMemsetD2D32Async(base, 8, 0x11223344u, 1, kRows, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD2D32Async(base + 4, 8, 0x55667788u, 1, kRows, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  for (size_t row = 0; row < kRows; ++row) {
    std::uint64_t value = 0;
    std::memcpy(&value, static_cast<char*>(host) + row * 8, 8);
    EXPECT_EQ(value, 0x5566778811223344ull) << "row " << row;
  }
  EXPECT_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
}

TEST_F(EmulatorTest, MisuseIsAnError) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc(&p, 256), CUDA_SUCCESS);
  unsigned char bytes[512] = {};
  EXPECT_EQ(cuMemcpyHtoDAsync(p + 128, bytes, 256, stream_), CUDA_ERROR_INVALID_VALUE)
      << "out of bounds";
  EXPECT_EQ(cuMemsetD32Async(p + 2, 0, 1, stream_), CUDA_ERROR_INVALID_VALUE) << "misaligned";
  EXPECT_EQ(cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(bytes), 0, 1, stream_),
            CUDA_ERROR_INVALID_VALUE)
      << "pageable memory";
  EXPECT_EQ(cuMemFree(p), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(p), CUDA_ERROR_INVALID_VALUE) << "double free";
  EXPECT_EQ(cuMemcpyHtoDAsync(p, bytes, 1, stream_), CUDA_ERROR_INVALID_VALUE) << "freed";
  EXPECT_EQ(cuMemFreeHost(bytes), CUDA_ERROR_INVALID_VALUE) << "not pinned";
  EXPECT_EQ(cuStreamSynchronize(reinterpret_cast<CUstream>(0x1234)), CUDA_ERROR_INVALID_HANDLE);
  CUevent event = nullptr;
  EXPECT_EQ(cuEventQuery(event), CUDA_ERROR_INVALID_HANDLE);
}

// Modules: only anydev's fill kernel runs, by name, after its declared
// parameters and the launch are checked; anything else is an error.
TEST_F(EmulatorTest, ModulesRunAnydevsFillKernelByNameOnly) {
  const char* ptx =
      ".version 6.3\n.target sm_75\n.address_size 64\n"
      ".visible .entry anydev_fill_pattern16(\n .param .u64 a,\n .param .u64 b,\n"
      " .param .u64 c,\n .param .u64 d\n)\n{ ret; }\n"
      ".visible .entry other(.param .u32 x)\n{ ret; }\n";
  CUmodule module = nullptr;
  ASSERT_EQ(cuModuleLoadData(&module, ptx), CUDA_SUCCESS);
  CUfunction fill = nullptr;
  CUfunction other = nullptr;
  ASSERT_EQ(cuModuleGetFunction(&fill, module, "anydev_fill_pattern16"), CUDA_SUCCESS);
  ASSERT_EQ(cuModuleGetFunction(&other, module, "other"), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleGetFunction(&other, module, "missing"), CUDA_ERROR_NOT_FOUND);

  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc(&p, 64), CUDA_SUCCESS);
  std::uint64_t dst = p + 4;
  std::uint64_t bytes = 40;
  std::uint64_t lo = 0x0706050403020100ull;
  std::uint64_t hi = 0x0f0e0d0c0b0a0908ull;
  void* params[] = {&dst, &bytes, &lo, &hi};
  EXPECT_EQ(cuLaunchKernel(fill, 1, 1, 1, 8, 1, 1, 0, stream_, params, nullptr),
            CUDA_ERROR_INVALID_VALUE)
      << "fewer than the 16 threads the head and tail need";
  EXPECT_EQ(cuLaunchKernel(fill, 1, 1, 1, 256, 1, 1, 0, stream_, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE)
      << "no kernelParams";
  std::uint32_t x = 0;
  void* other_params[] = {&x};
  EXPECT_EQ(cuLaunchKernel(other, 1, 1, 1, 32, 1, 1, 0, stream_, other_params, nullptr),
            CUDA_ERROR_INVALID_VALUE)
      << "a kernel the emulator does not know";
  ASSERT_EQ(cuMemsetD8Async(p, 0xee, 64, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchKernel(fill, 1, 1, 1, 256, 1, 1, 0, stream_, params, nullptr), CUDA_SUCCESS);
  unsigned char back[64] = {};
  ASSERT_EQ(cuMemcpyDtoHAsync(back, p, 64, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  for (std::size_t i = 0; i < 64; ++i) {
    // Byte (address mod 16) of lo | hi << 64 inside [p + 4, p + 44).
    const std::size_t k = (p + i) % 16;
    const unsigned char want = i >= 4 && i < 44 ? static_cast<unsigned char>(k) : 0xee;
    EXPECT_EQ(back[i], want) << "byte " << i;
  }
  EXPECT_EQ(cuMemFree(p), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchKernel(fill, 1, 1, 1, 256, 1, 1, 0, stream_, params, nullptr),
            CUDA_ERROR_INVALID_HANDLE)
      << "a function of an unloaded module";
  EXPECT_EQ(cuModuleLoadData(&module, "not ptx"), CUDA_ERROR_INVALID_IMAGE);
}

void wait_for_release(void* flag) {
  while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::yield();
}

// As on a real device (CUDA_ERROR_ILLEGAL_ADDRESS is documented as sticky):
// one asynchronous fault breaks the context, and every later call on it
// returns the fault, until the primary context's last retain is released.
TEST_F(EmulatorTest, AsynchronousFaultIsStickyUntilTheContextIsReset) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc(&p, 64), CUDA_SUCCESS);
  std::atomic<bool> release{false};
  ASSERT_EQ(cuLaunchHostFunc(stream_, wait_for_release, &release), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8Async(p, 1, 64, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFree(p), CUDA_SUCCESS);  // too early: the memset is still queued
  release = true;
  EXPECT_EQ(cuStreamSynchronize(stream_), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(cuStreamSynchronize(stream_), CUDA_ERROR_ILLEGAL_ADDRESS) << "sticky";
  CUdeviceptr q = 0;
  EXPECT_EQ(cuMemAlloc(&q, 64), CUDA_ERROR_ILLEGAL_ADDRESS);
  CUevent event = nullptr;
  EXPECT_EQ(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), CUDA_ERROR_ILLEGAL_ADDRESS);
  std::size_t free_bytes = 0, total_bytes = 0;
  EXPECT_EQ(cuMemGetInfo(&free_bytes, &total_bytes), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(cuMemsetD8Async(p, 1, 64, stream_), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(cuStreamDestroy(stream_), CUDA_ERROR_ILLEGAL_ADDRESS) << "destroyed, but says so";

  // The last release resets the context; a new retain gets a healthy one.
  CUcontext popped = nullptr;
  ASSERT_EQ(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxPushCurrent(context_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&q, 64), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(q), CUDA_SUCCESS);
}

// As the real driver: a child of fork() cannot use the driver its parent
// initialized, not even by calling cuInit again.
TEST_F(EmulatorTest, ForkedChildIsRefused) {
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    alarm(20);  // a hang fails the test instead of blocking it
    int count = 0;
    CUdeviceptr p = 0;
    const bool refused = cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED &&
                         cuInit(0) == CUDA_ERROR_NOT_INITIALIZED &&
                         cuMemAlloc(&p, 64) == CUDA_ERROR_NOT_INITIALIZED &&
                         cuStreamSynchronize(stream_) == CUDA_ERROR_NOT_INITIALIZED;
    _exit(refused ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
  int count = 0;
  EXPECT_EQ(cuDeviceGetCount(&count), CUDA_SUCCESS) << "the parent still works";
}

// main() sets ANYDEV_CUDA_EMULATOR_NULL_SYMBOLS=cuMemPoolGetAccess.
TEST(EmulatorProcAddress, NullSymbolIsSuccessWithANullPointer) {
  void* fn = reinterpret_cast<void*>(1);
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  ASSERT_EQ(
      cuGetProcAddress("cuMemPoolGetAccess", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status),
      CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
  EXPECT_EQ(fn, nullptr);
}

constexpr std::size_t kImpossible = std::size_t{1} << 62;

TEST_F(EmulatorTest, ImpossibleSizeIsOutOfMemoryByDefault) {
  CUdeviceptr p = 0;
  void* host = nullptr;
  EXPECT_EQ(cuMemAlloc(&p, kImpossible), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(cuMemAllocAsync(&p, kImpossible, stream_), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(cuMemHostAlloc(&host, kImpossible, 0), CUDA_ERROR_OUT_OF_MEMORY);
}

TEST(EmulatorHugeIsInvalid, ImpossibleSizeIsInvalidValueWhenAsked) {
  EXPECT_EXIT(
      {  // a fresh process: the setting is read once, at first use
        setenv("ANYDEV_CUDA_EMULATOR_HUGE_IS_INVALID", "1", 1);
        CUcontext context = nullptr;
        CUstream stream = nullptr;
        CUdeviceptr p = 0;
        void* host = nullptr;
        const bool ok = cuInit(0) == CUDA_SUCCESS &&
                        cuDevicePrimaryCtxRetain(&context, 0) == CUDA_SUCCESS &&
                        cuCtxPushCurrent(context) == CUDA_SUCCESS &&
                        cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
                        cuMemAlloc(&p, kImpossible) == CUDA_ERROR_INVALID_VALUE &&
                        cuMemAllocAsync(&p, kImpossible, stream) == CUDA_ERROR_INVALID_VALUE &&
                        cuMemHostAlloc(&host, kImpossible, 0) == CUDA_ERROR_INVALID_VALUE &&
                        cuMemAlloc(&p, 64) == CUDA_SUCCESS;
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(EmulatorTest, CreatedPoolIsItsOwnWithItsAttributesAndAccess) {
  CUmemoryPool default_pool = nullptr;
  ASSERT_EQ(cuDeviceGetDefaultMemPool(&default_pool, 0), CUDA_SUCCESS);
  CUmemPoolProps props = {};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  EXPECT_NE(pool, default_pool);
  cuuint64_t threshold = 12345;
  ASSERT_EQ(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
            CUDA_SUCCESS);
  threshold = 0;
  ASSERT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
            CUDA_SUCCESS);
  EXPECT_EQ(threshold, 12345u);
  ASSERT_EQ(cuMemPoolGetAttribute(default_pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
            CUDA_SUCCESS);
  EXPECT_EQ(threshold, 0u) << "the default pool is untouched";

  CUdeviceptr from_pool = 0, from_default = 0, plain = 0;
  ASSERT_EQ(cuMemAllocFromPoolAsync(&from_pool, 64, pool, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAllocAsync(&from_default, 64, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&plain, 64), CUDA_SUCCESS);
  CUmemoryPool owner = nullptr;
  ASSERT_EQ(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, from_pool + 8),
            CUDA_SUCCESS);
  EXPECT_EQ(owner, pool);
  ASSERT_EQ(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, from_default),
            CUDA_SUCCESS);
  EXPECT_EQ(owner, default_pool);
  ASSERT_EQ(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, plain),
            CUDA_SUCCESS);
  EXPECT_EQ(owner, nullptr);

  CUmemAccessDesc own = {};
  own.location = props.location;
  own.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  EXPECT_EQ(cuMemPoolSetAccess(pool, &own, 1), CUDA_ERROR_INVALID_VALUE)
      << "the owner keeps read-write access";
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CUmemLocation where = props.location;
  ASSERT_EQ(cuMemPoolGetAccess(&flags, pool, &where), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);

  // Destroying a pool with memory still allocated is allowed; the memory
  // stays valid and may be freed later; the pool itself is gone.
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD8Async(from_pool, 7, 64, stream_), CUDA_SUCCESS);
  CUdeviceptr late = 0;
  EXPECT_EQ(cuMemAllocFromPoolAsync(&late, 64, pool, stream_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE) << "destroyed twice";
  EXPECT_EQ(cuMemPoolDestroy(default_pool), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFreeAsync(from_pool, stream_), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeAsync(from_default, stream_), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(plain), CUDA_SUCCESS);
}

TEST_F(EmulatorTest, StreamOrderedFree) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAllocAsync(&p, 64, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8Async(p, 1, 64, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFreeAsync(p, stream_), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeAsync(p, stream_), CUDA_ERROR_INVALID_VALUE) << "double free";
  EXPECT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
}

TEST_F(EmulatorTest, CallsNeedACurrentContext) {
  CUresult result = CUDA_SUCCESS;
  std::thread([&result] {
    CUdeviceptr p = 0;
    result = cuMemAlloc(&p, 64);
  }).join();
  EXPECT_EQ(result, CUDA_ERROR_INVALID_CONTEXT);
}

TEST_F(EmulatorTest, StreamWaitsForAnEventOfAnotherStream) {
  CUstream other = nullptr;
  ASSERT_EQ(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUevent event = nullptr;
  ASSERT_EQ(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  EXPECT_EQ(cuEventQuery(event), CUDA_SUCCESS) << "never recorded";
  void* host = nullptr;
  ASSERT_EQ(cuMemHostAlloc(&host, 8, 0), CUDA_SUCCESS);
  CUdeviceptr device = 0;
  ASSERT_EQ(cuMemAlloc(&device, 8), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8Async(device, 0x5a, 8, other), CUDA_SUCCESS);
  ASSERT_EQ(cuEventRecord(event, other), CUDA_SUCCESS);
  EXPECT_EQ(cuEventQuery(event), CUDA_ERROR_NOT_READY);
  ASSERT_EQ(cuStreamWaitEvent(stream_, event, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoHAsync(host, device, 8, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(static_cast<unsigned char*>(host)[7], 0x5a);
  EXPECT_EQ(cuEventQuery(event), CUDA_SUCCESS);
  EXPECT_EQ(cuEventDestroy(event), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(other), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(device), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
}

// Sharing (core_share.h), within one process: an exported allocation
// imported and mapped twice is the same memory, which outlives the first
// handle and mapping; each misuse gets the driver's documented error.
TEST_F(EmulatorTest, VmmAllocationExportsAsAnFdAndOutlivesItsFirstHandle) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  std::size_t granularity = 0;
  ASSERT_EQ(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
            CUDA_SUCCESS);
  ASSERT_GT(granularity, 0u);
  CUmemGenericAllocationHandle first = 0;
  EXPECT_EQ(cuMemCreate(&first, granularity + 1, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuMemCreate(&first, granularity, &prop, 0), CUDA_SUCCESS);
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  EXPECT_EQ(cuMemMap(0x1000, granularity, 0, first, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuMemAddressReserve(&a, granularity, 0, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAddressReserve(&b, granularity, 0, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemMap(a, granularity, 0, first, 0), CUDA_SUCCESS);
  // Mapped but not accessible yet.
  EXPECT_EQ(cuMemsetD8Async(a, 1, 8, stream_), CUDA_ERROR_INVALID_VALUE);
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  ASSERT_EQ(cuMemSetAccess(a, granularity, &access, 1), CUDA_SUCCESS);
  int fd = -1;
  ASSERT_EQ(cuMemExportToShareableHandle(&fd, first, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_SUCCESS);
  CUmemGenericAllocationHandle second = 0;
  ASSERT_EQ(cuMemImportFromShareableHandle(&second, reinterpret_cast<void*>(std::intptr_t{fd}),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            CUDA_SUCCESS);
  ::close(fd);
  ASSERT_EQ(cuMemMap(b, granularity, 0, second, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemSetAccess(b, granularity, &access, 1), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32Async(a, 0xfeedbeef, granularity / 4, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  // The first handle and mapping go; the second still holds the bytes.
  EXPECT_EQ(cuMemAddressFree(a, granularity), CUDA_ERROR_INVALID_VALUE) << "still mapped";
  ASSERT_EQ(cuMemUnmap(a, granularity), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAddressFree(a, granularity), CUDA_SUCCESS);
  ASSERT_EQ(cuMemRelease(first), CUDA_SUCCESS);
  EXPECT_EQ(cuMemRelease(first), CUDA_ERROR_INVALID_VALUE);
  std::uint32_t last = 0;
  ASSERT_EQ(cuMemcpyDtoHAsync(&last, b + granularity - 4, 4, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(last, 0xfeedbeefu);
  EXPECT_EQ(cuMemUnmap(b, granularity), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAddressFree(b, granularity), CUDA_SUCCESS);
  EXPECT_EQ(cuMemRelease(second), CUDA_SUCCESS);
}

TEST_F(EmulatorTest, HostRegistrationAndInterprocessEvents) {
  std::vector<std::uint32_t> host(1024, 0);
  ASSERT_EQ(cuMemHostRegister(host.data(), 4096, CU_MEMHOSTREGISTER_PORTABLE), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostRegister(host.data(), 4096, CU_MEMHOSTREGISTER_PORTABLE),
            CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  ASSERT_EQ(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(host.data()), 7, 1024, stream_),
            CUDA_SUCCESS);
  CUevent plain = nullptr;
  CUevent shared = nullptr;
  CUevent opened = nullptr;
  ASSERT_EQ(cuEventCreate(&plain, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  EXPECT_EQ(cuEventCreate(&shared, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE)
      << "an interprocess event must disable timing";
  ASSERT_EQ(cuEventCreate(&shared, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  CUipcEventHandle handle{};
  EXPECT_EQ(cuIpcGetEventHandle(&handle, plain), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuIpcGetEventHandle(&handle, shared), CUDA_SUCCESS);
  ASSERT_EQ(cuIpcOpenEventHandle(&opened, handle), CUDA_SUCCESS);
  ASSERT_EQ(cuEventRecord(shared, stream_), CUDA_SUCCESS);
  EXPECT_EQ(cuEventQuery(opened), CUDA_ERROR_NOT_READY) << "the memset is still queued";
  ASSERT_EQ(cuEventSynchronize(opened), CUDA_SUCCESS);
  EXPECT_EQ(host[1023], 7u);
  EXPECT_EQ(cuEventQuery(shared), CUDA_SUCCESS);
  EXPECT_EQ(cuEventDestroy(opened), CUDA_SUCCESS);
  EXPECT_EQ(cuEventDestroy(shared), CUDA_SUCCESS);
  // The creator's destruction removes the name: the handle no longer opens.
  EXPECT_EQ(cuIpcOpenEventHandle(&opened, handle), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuEventDestroy(plain), CUDA_SUCCESS);
  ASSERT_EQ(cuMemHostUnregister(host.data()), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostUnregister(host.data()), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
}

}  // namespace

int main(int argc, char** argv) {
  setenv("ANYDEV_CUDA_EMULATOR_DELAY_US", "20000", 0);
  setenv("ANYDEV_CUDA_EMULATOR_QUIET", "1", 0);
  setenv("ANYDEV_CUDA_EMULATOR_NULL_SYMBOLS", "cuMemPoolGetAccess", 0);
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  return RUN_ALL_TESTS();
}

namespace {

// cuEventElapsedTime as the driver documents it: INVALID_HANDLE for an event
// created with CU_EVENT_DISABLE_TIMING or never recorded, NOT_READY while a
// record has not run, the milliseconds between the records' completion.
TEST_F(EmulatorTest, EventElapsedTimeFollowsTheDriversRules) {
  CUevent untimed = nullptr;
  CUevent start = nullptr;
  CUevent end = nullptr;
  CUevent never = nullptr;
  ASSERT_EQ(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(cuEventCreate(&start, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(cuEventCreate(&end, CU_EVENT_BLOCKING_SYNC), CUDA_SUCCESS);
  ASSERT_EQ(cuEventCreate(&never, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  void* host = nullptr;
  ASSERT_EQ(cuMemHostAlloc(&host, 16, 0), CUDA_SUCCESS);
  float ms = -1.0F;
  ASSERT_EQ(cuEventRecord(start, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(host), 1, 16, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuEventRecord(end, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuEventRecord(untimed, stream_), CUDA_SUCCESS);
  // The delay (set in main) keeps the records queued.
  EXPECT_EQ(cuEventElapsedTime(&ms, start, end), CUDA_ERROR_NOT_READY);
  ASSERT_EQ(cuEventSynchronize(end), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuEventElapsedTime(&ms, start, end), CUDA_SUCCESS);
  EXPECT_GE(ms, 0.0F);
  float back = 1.0F;
  ASSERT_EQ(cuEventElapsedTime(&back, end, start), CUDA_SUCCESS);
  EXPECT_FLOAT_EQ(back, -ms);
  EXPECT_EQ(cuEventElapsedTime(&ms, start, untimed), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuEventElapsedTime(&ms, start, never), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuEventElapsedTime(nullptr, start, end), CUDA_ERROR_INVALID_VALUE);
  for (CUevent e : {untimed, start, end, never}) EXPECT_EQ(cuEventDestroy(e), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
}

TEST_F(EmulatorTest, StreamPrioritiesHaveTheRangeOfCurrentGpus) {
  int least = 1;
  int greatest = 1;
  ASSERT_EQ(cuCtxGetStreamPriorityRange(&least, &greatest), CUDA_SUCCESS);
  EXPECT_EQ(least, 0);
  EXPECT_EQ(greatest, -5);
  EXPECT_EQ(cuCtxGetStreamPriorityRange(nullptr, nullptr), CUDA_SUCCESS);
  CUstream high = nullptr;
  ASSERT_EQ(cuStreamCreateWithPriority(&high, CU_STREAM_NON_BLOCKING, -100), CUDA_SUCCESS)
      << "out-of-range priorities are clamped, not refused";
  EXPECT_EQ(cuStreamSynchronize(high), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(high), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamCreateWithPriority(&high, 8, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamCreateWithPriority(nullptr, 0, 0), CUDA_ERROR_INVALID_VALUE);
}

}  // namespace

namespace {

// A 1-D CUDA_MEMCPY3D between unified addresses.
CUDA_MEMCPY3D copy_params(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.srcDevice = src;
  p.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.dstDevice = dst;
  p.WidthInBytes = bytes;
  p.Height = 1;
  p.Depth = 1;
  return p;
}

CUDA_MEMSET_NODE_PARAMS memset_params(CUdeviceptr dst, unsigned value, unsigned element,
                                      size_t width) {
  CUDA_MEMSET_NODE_PARAMS p{};
  p.dst = dst;
  p.value = value;
  p.elementSize = element;
  p.width = width;
  p.height = 1;
  p.pitch = width * element;
  return p;
}

}  // namespace

// A graph runs its nodes after their dependencies, on every launch, and its
// executable graph may be destroyed while launches are queued; bad node
// parameters are CUDA_ERROR_INVALID_VALUE, as the driver documents.
TEST_F(EmulatorTest, GraphsRunTheirNodesInDependencyOrder) {
  constexpr size_t kBytes = 1024;
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  void* host = nullptr;
  ASSERT_EQ(cuMemAlloc(&a, kBytes), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&b, kBytes), CUDA_SUCCESS);
  ASSERT_EQ(cuMemHostAlloc(&host, kBytes, CU_MEMHOSTALLOC_PORTABLE), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  // memset a -> copy a to b -> copy b to host; the memset and the copy of a
  // to b write and read the same bytes: only the dependency orders them.
  CUgraphNode set = nullptr;
  CUgraphNode to_b = nullptr;
  CUgraphNode to_host = nullptr;
  const CUDA_MEMSET_NODE_PARAMS fill = memset_params(a, 0x5A6B7C8Du, 4, kBytes / 4);
  ASSERT_EQ(cuGraphAddMemsetNode(&set, graph, nullptr, 0, &fill, context_), CUDA_SUCCESS);
  const CUDA_MEMCPY3D ab = copy_params(b, a, kBytes);
  ASSERT_EQ(cuGraphAddMemcpyNode(&to_b, graph, &set, 1, &ab, context_), CUDA_SUCCESS);
  const CUDA_MEMCPY3D bh = copy_params(reinterpret_cast<CUdeviceptr>(host), b, kBytes);
  ASSERT_EQ(cuGraphAddMemcpyNode(&to_host, graph, &to_b, 1, &bh, context_), CUDA_SUCCESS);
  CUgraphNode join = nullptr;
  const CUgraphNode both[] = {set, to_host};
  ASSERT_EQ(cuGraphAddEmptyNode(&join, graph, both, 2), CUDA_SUCCESS);

  // Bad input adds nothing.
  CUgraphNode bad = nullptr;
  const CUgraphNode twice[] = {set, set};
  EXPECT_EQ(cuGraphAddEmptyNode(&bad, graph, twice, 2), CUDA_ERROR_INVALID_VALUE)
      << "a repeated dependency";
  EXPECT_EQ(cuGraphAddEmptyNode(&bad, graph, nullptr, 1), CUDA_ERROR_INVALID_VALUE);
  const CUDA_MEMSET_NODE_PARAMS on_host =
      memset_params(reinterpret_cast<CUdeviceptr>(host), 0, 4, kBytes / 4);
  EXPECT_EQ(cuGraphAddMemsetNode(&bad, graph, nullptr, 0, &on_host, context_),
            CUDA_ERROR_INVALID_VALUE)
      << "memset nodes write device memory only";
  const CUDA_MEMSET_NODE_PARAMS eight = memset_params(a, 0, 8, kBytes / 8);
  EXPECT_EQ(cuGraphAddMemsetNode(&bad, graph, nullptr, 0, &eight, context_),
            CUDA_ERROR_INVALID_VALUE);
  CUgraph other = nullptr;
  ASSERT_EQ(cuGraphCreate(&other, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphAddEmptyNode(&bad, other, &set, 1), CUDA_ERROR_INVALID_VALUE)
      << "a node of another graph";
  EXPECT_EQ(cuGraphDestroy(other), CUDA_SUCCESS);

  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS) << "the executable graph stays valid";
  for (int launch = 0; launch < 3; ++launch) {
    std::memset(host, 0, kBytes);
    ASSERT_EQ(cuMemsetD8Async(b, 0, kBytes, stream_), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
    const auto* words = static_cast<const std::uint32_t*>(host);
    EXPECT_EQ(std::count(words, words + kBytes / 4, 0x5A6B7C8Du), static_cast<long>(kBytes / 4));
  }
  ASSERT_EQ(cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS) << "while a launch is queued";
  EXPECT_EQ(cuGraphLaunch(exec, stream_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(b), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
}
