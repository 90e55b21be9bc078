// Tests of the CUDA emulator itself: it must fail where a real driver fails
// and expose what real hardware would expose (asynchrony, faulting device
// addresses), or the conformance runs against it prove nothing.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

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
  EXPECT_EQ(fn, reinterpret_cast<void*>(&cuMemAlloc_v2));
  EXPECT_EQ(cuGetProcAddress("cuMemAlloc", &fn, 2000, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(cuGetProcAddress("cuNoSuchCall", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
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

TEST_F(EmulatorTest, FreeBeforeQueuedWorkRanFailsTheStream) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc(&p, 64), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8Async(p, 1, 64, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFree(p), CUDA_SUCCESS);  // too early: the memset is still queued
  EXPECT_EQ(cuStreamSynchronize(stream_), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS) << "reported once";
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

}  // namespace

int main(int argc, char** argv) {
  setenv("ANYDEV_CUDA_EMULATOR_DELAY_US", "20000", 0);
  setenv("ANYDEV_CUDA_EMULATOR_QUIET", "1", 0);
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  return RUN_ALL_TESTS();
}
