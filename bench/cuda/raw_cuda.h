// SPDX-License-Identifier: Apache-2.0
// The raw CUDA driver calls that the cuda benchmarks compare anydev against,
// opened the way the cuda backend opens the driver (ANYDEV_CUDA_LIBRARY, else
// libcuda.so.1), on device 0's primary context with its own non-blocking
// stream.
//
// RawCuda is created once on the benchmark thread, which it leaves with the
// primary context current, and lives until the program ends. Not thread-safe:
// the benchmarks run on that one thread.
#ifndef ANYDEV_BENCH_CUDA_RAW_CUDA_H_
#define ANYDEV_BENCH_CUDA_RAW_CUDA_H_

#include <cudaTypedefs.h>

#include <string>

#define ANYDEV_RAW_CUDA_SYMBOLS(X) \
  X(GetErrorName, 6000)            \
  X(Init, 2000)                    \
  X(DriverGetVersion, 2020)        \
  X(DeviceGet, 2000)               \
  X(DevicePrimaryCtxRetain, 7000)  \
  X(CtxPushCurrent, 4000)          \
  X(StreamCreate, 2000)            \
  X(StreamSynchronize, 2000)       \
  X(MemHostAlloc, 2020)            \
  X(MemFreeHost, 2000)             \
  X(MemAlloc, 3020)                \
  X(MemcpyHtoDAsync, 3020)         \
  X(MemcpyDtoHAsync, 3020)         \
  X(MemsetD32Async, 3020)          \
  X(MemsetD2D32Async, 3020)        \
  X(MemcpyAsync, 4000)

namespace anydev_bench {

struct RawCuda {
#define ANYDEV_RAW_CUDA_MEMBER(name, version) PFN_cu##name##_v##version name = nullptr;
  ANYDEV_RAW_CUDA_SYMBOLS(ANYDEV_RAW_CUDA_MEMBER)
#undef ANYDEV_RAW_CUDA_MEMBER
  std::string path;
  int driver_version = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;

  // Opens the driver, makes device 0's primary context current and creates
  // the stream. Null with *error set on failure.
  static RawCuda* Open(std::string* error);

  // "cuMemcpyHtoDAsync failed: CUDA_ERROR_..." for a failing call.
  std::string Failure(const char* call, CUresult r) const;
};

}  // namespace anydev_bench

#endif  // ANYDEV_BENCH_CUDA_RAW_CUDA_H_
