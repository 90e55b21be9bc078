// The CUDA driver entry points the cuda backend uses, in one X-macro list.
//
// X(name, version, need):
//   name     the entry point without its "cu" prefix (MemAlloc for cuMemAlloc);
//   version  the cudaVersion passed to cuGetProcAddress: the CUDA release whose
//            signature cuda.h declares for cu<name>, i.e. the one spelled
//            PFN_cu<name>_v<version> in cudaTypedefs.h. cuda_driver.cpp checks
//            at compile time that the two agree, so that a versioned entry
//            point (cuMemAlloc_v2, cuStreamDestroy_v2, ...) is the one resolved;
//   need     REQUIRED (the backend is unavailable without it) or OPTIONAL
//            (a null pointer is handled where it is used).
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_SYMBOLS_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_SYMBOLS_H_

#define ANYDEV_CUDA_SYMBOLS(X)              \
  X(GetErrorName, 6000, REQUIRED)           \
  X(GetErrorString, 6000, REQUIRED)         \
  X(Init, 2000, REQUIRED)                   \
  X(DriverGetVersion, 2020, REQUIRED)       \
  X(DeviceGet, 2000, REQUIRED)              \
  X(DeviceGetCount, 2000, REQUIRED)         \
  X(DeviceGetName, 2000, REQUIRED)          \
  X(DeviceTotalMem, 3020, REQUIRED)         \
  X(DeviceGetAttribute, 2000, REQUIRED)     \
  X(DeviceGetPCIBusId, 4010, REQUIRED)      \
  X(DeviceCanAccessPeer, 4000, REQUIRED)    \
  X(DevicePrimaryCtxRetain, 7000, REQUIRED) \
  X(CtxGetCurrent, 4000, REQUIRED)          \
  X(CtxPushCurrent, 4000, REQUIRED)         \
  X(CtxPopCurrent, 4000, REQUIRED)          \
  X(CtxEnablePeerAccess, 4000, REQUIRED)    \
  X(MemGetInfo, 3020, REQUIRED)             \
  X(MemAlloc, 3020, REQUIRED)               \
  X(MemFree, 3020, REQUIRED)                \
  X(MemHostAlloc, 2020, REQUIRED)           \
  X(MemFreeHost, 2000, REQUIRED)            \
  X(MemcpyAsync, 4000, REQUIRED)            \
  X(MemcpyPeerAsync, 4000, REQUIRED)        \
  X(MemsetD8Async, 3020, REQUIRED)          \
  X(MemsetD16Async, 3020, REQUIRED)         \
  X(MemsetD32Async, 3020, REQUIRED)         \
  X(MemsetD2D32Async, 3020, REQUIRED)       \
  X(StreamCreate, 2000, REQUIRED)           \
  X(StreamDestroy, 4000, REQUIRED)          \
  X(StreamSynchronize, 2000, REQUIRED)      \
  X(StreamWaitEvent, 3020, REQUIRED)        \
  X(EventCreate, 2000, REQUIRED)            \
  X(EventDestroy, 4000, REQUIRED)           \
  X(EventRecord, 2000, REQUIRED)            \
  X(EventSynchronize, 2000, REQUIRED)       \
  X(EventQuery, 2000, REQUIRED)             \
  X(StreamGetCtx, 9020, OPTIONAL)           \
  X(MemPoolCreate, 11020, OPTIONAL)         \
  X(MemPoolDestroy, 11020, OPTIONAL)        \
  X(MemPoolSetAttribute, 11020, OPTIONAL)   \
  X(MemAllocFromPoolAsync, 11020, OPTIONAL) \
  X(MemFreeAsync, 11020, OPTIONAL)          \
  X(MemPoolSetAccess, 11020, OPTIONAL)

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_SYMBOLS_H_
