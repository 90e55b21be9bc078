// SPDX-License-Identifier: Apache-2.0
// The CUDA driver entry points the cuda backend uses, in one X-macro list.
//
// ANYDEV_CUDA_SYMBOL(X, name, version, need), which gives the backend kit's
// X(member, need, type, key) (include/anydev/kit/symbols.h):
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

namespace anydev::cuda {

// What the driver is asked for one entry point; names are string literals.
struct CudaSymbolKey {
  const char* base = "";      // "cuMemAlloc"
  const char* exported = "";  // "cuMemAlloc_v2", the symbol cuda.h maps base to
  int version = 0;            // the cudaVersion of the signature cuda.h declares
};

}  // namespace anydev::cuda

#define ANYDEV_CUDA_STR2(x) #x
#define ANYDEV_CUDA_STR(x) ANYDEV_CUDA_STR2(x)

// The field is the name without "cu", typed PFN_cu<name>_v<version>; the
// resolver (cuda_driver.cpp) is asked for the unversioned name, the symbol
// cuda.h maps it to (cuMemAlloc_v2, used with plain dlsym) and the version.
#define ANYDEV_CUDA_SYMBOL(X, name, version, need) \
  X(name, need, PFN_cu##name##_v##version,         \
    (::anydev::cuda::CudaSymbolKey{"cu" #name, ANYDEV_CUDA_STR(cu##name), version}))

#define ANYDEV_CUDA_SYMBOLS(X)                                         \
  ANYDEV_CUDA_SYMBOL(X, GetErrorName, 6000, REQUIRED)                  \
  ANYDEV_CUDA_SYMBOL(X, GetErrorString, 6000, REQUIRED)                \
  ANYDEV_CUDA_SYMBOL(X, Init, 2000, REQUIRED)                          \
  ANYDEV_CUDA_SYMBOL(X, DriverGetVersion, 2020, REQUIRED)              \
  ANYDEV_CUDA_SYMBOL(X, DeviceGet, 2000, REQUIRED)                     \
  ANYDEV_CUDA_SYMBOL(X, DeviceGetCount, 2000, REQUIRED)                \
  ANYDEV_CUDA_SYMBOL(X, DeviceGetName, 2000, REQUIRED)                 \
  ANYDEV_CUDA_SYMBOL(X, DeviceTotalMem, 3020, REQUIRED)                \
  ANYDEV_CUDA_SYMBOL(X, DeviceGetAttribute, 2000, REQUIRED)            \
  ANYDEV_CUDA_SYMBOL(X, DeviceGetPCIBusId, 4010, REQUIRED)             \
  ANYDEV_CUDA_SYMBOL(X, DeviceCanAccessPeer, 4000, REQUIRED)           \
  ANYDEV_CUDA_SYMBOL(X, DevicePrimaryCtxRetain, 7000, REQUIRED)        \
  ANYDEV_CUDA_SYMBOL(X, CtxGetCurrent, 4000, REQUIRED)                 \
  ANYDEV_CUDA_SYMBOL(X, CtxPushCurrent, 4000, REQUIRED)                \
  ANYDEV_CUDA_SYMBOL(X, CtxPopCurrent, 4000, REQUIRED)                 \
  ANYDEV_CUDA_SYMBOL(X, CtxEnablePeerAccess, 4000, REQUIRED)           \
  ANYDEV_CUDA_SYMBOL(X, MemGetInfo, 3020, REQUIRED)                    \
  ANYDEV_CUDA_SYMBOL(X, MemAlloc, 3020, REQUIRED)                      \
  ANYDEV_CUDA_SYMBOL(X, MemFree, 3020, REQUIRED)                       \
  ANYDEV_CUDA_SYMBOL(X, MemHostAlloc, 2020, REQUIRED)                  \
  ANYDEV_CUDA_SYMBOL(X, MemFreeHost, 2000, REQUIRED)                   \
  ANYDEV_CUDA_SYMBOL(X, MemcpyAsync, 4000, REQUIRED)                   \
  ANYDEV_CUDA_SYMBOL(X, MemcpyPeerAsync, 4000, REQUIRED)               \
  ANYDEV_CUDA_SYMBOL(X, MemsetD8Async, 3020, REQUIRED)                 \
  ANYDEV_CUDA_SYMBOL(X, MemsetD16Async, 3020, REQUIRED)                \
  ANYDEV_CUDA_SYMBOL(X, MemsetD32Async, 3020, REQUIRED)                \
  ANYDEV_CUDA_SYMBOL(X, MemsetD2D32Async, 3020, REQUIRED)              \
  ANYDEV_CUDA_SYMBOL(X, StreamCreate, 2000, REQUIRED)                  \
  ANYDEV_CUDA_SYMBOL(X, StreamDestroy, 4000, REQUIRED)                 \
  ANYDEV_CUDA_SYMBOL(X, StreamSynchronize, 2000, REQUIRED)             \
  ANYDEV_CUDA_SYMBOL(X, StreamWaitEvent, 3020, REQUIRED)               \
  ANYDEV_CUDA_SYMBOL(X, EventCreate, 2000, REQUIRED)                   \
  ANYDEV_CUDA_SYMBOL(X, EventDestroy, 4000, REQUIRED)                  \
  ANYDEV_CUDA_SYMBOL(X, EventRecord, 2000, REQUIRED)                   \
  ANYDEV_CUDA_SYMBOL(X, EventSynchronize, 2000, REQUIRED)              \
  ANYDEV_CUDA_SYMBOL(X, EventQuery, 2000, REQUIRED)                    \
  ANYDEV_CUDA_SYMBOL(X, StreamGetCtx, 9020, OPTIONAL)                  \
  ANYDEV_CUDA_SYMBOL(X, MemPoolCreate, 11020, OPTIONAL)                \
  ANYDEV_CUDA_SYMBOL(X, MemPoolDestroy, 11020, OPTIONAL)               \
  ANYDEV_CUDA_SYMBOL(X, MemPoolSetAttribute, 11020, OPTIONAL)          \
  ANYDEV_CUDA_SYMBOL(X, MemAllocFromPoolAsync, 11020, OPTIONAL)        \
  ANYDEV_CUDA_SYMBOL(X, MemFreeAsync, 11020, OPTIONAL)                 \
  ANYDEV_CUDA_SYMBOL(X, MemPoolSetAccess, 11020, OPTIONAL)             \
  ANYDEV_CUDA_SYMBOL(X, DeviceGetUuid, 11040, OPTIONAL)                \
  ANYDEV_CUDA_SYMBOL(X, MemGetAllocationGranularity, 10020, OPTIONAL)  \
  ANYDEV_CUDA_SYMBOL(X, MemCreate, 10020, OPTIONAL)                    \
  ANYDEV_CUDA_SYMBOL(X, MemRelease, 10020, OPTIONAL)                   \
  ANYDEV_CUDA_SYMBOL(X, MemAddressReserve, 10020, OPTIONAL)            \
  ANYDEV_CUDA_SYMBOL(X, MemAddressFree, 10020, OPTIONAL)               \
  ANYDEV_CUDA_SYMBOL(X, MemMap, 10020, OPTIONAL)                       \
  ANYDEV_CUDA_SYMBOL(X, MemUnmap, 10020, OPTIONAL)                     \
  ANYDEV_CUDA_SYMBOL(X, MemSetAccess, 10020, OPTIONAL)                 \
  ANYDEV_CUDA_SYMBOL(X, MemExportToShareableHandle, 10020, OPTIONAL)   \
  ANYDEV_CUDA_SYMBOL(X, MemImportFromShareableHandle, 10020, OPTIONAL) \
  ANYDEV_CUDA_SYMBOL(X, MemHostRegister, 6050, OPTIONAL)               \
  ANYDEV_CUDA_SYMBOL(X, MemHostUnregister, 4000, OPTIONAL)             \
  ANYDEV_CUDA_SYMBOL(X, IpcGetEventHandle, 4010, OPTIONAL)             \
  ANYDEV_CUDA_SYMBOL(X, IpcOpenEventHandle, 4010, OPTIONAL)            \
  ANYDEV_CUDA_SYMBOL(X, EventElapsedTime, 2000, OPTIONAL)              \
  ANYDEV_CUDA_SYMBOL(X, StreamCreateWithPriority, 5050, OPTIONAL)      \
  ANYDEV_CUDA_SYMBOL(X, CtxGetStreamPriorityRange, 5050, OPTIONAL)     \
  ANYDEV_CUDA_SYMBOL(X, ModuleLoadData, 2000, OPTIONAL)                \
  ANYDEV_CUDA_SYMBOL(X, ModuleGetFunction, 2000, OPTIONAL)             \
  ANYDEV_CUDA_SYMBOL(X, LaunchKernel, 4000, OPTIONAL)                  \
  ANYDEV_CUDA_SYMBOL(X, GraphCreate, 10000, OPTIONAL)                  \
  ANYDEV_CUDA_SYMBOL(X, GraphAddEmptyNode, 10000, OPTIONAL)            \
  ANYDEV_CUDA_SYMBOL(X, GraphAddMemcpyNode, 10000, OPTIONAL)           \
  ANYDEV_CUDA_SYMBOL(X, GraphAddMemsetNode, 10000, OPTIONAL)           \
  ANYDEV_CUDA_SYMBOL(X, GraphAddKernelNode, 12000, OPTIONAL)           \
  ANYDEV_CUDA_SYMBOL(X, GraphInstantiateWithFlags, 11040, OPTIONAL)    \
  ANYDEV_CUDA_SYMBOL(X, GraphLaunch, 10000, OPTIONAL)                  \
  ANYDEV_CUDA_SYMBOL(X, GraphExecDestroy, 10000, OPTIONAL)             \
  ANYDEV_CUDA_SYMBOL(X, GraphDestroy, 10000, OPTIONAL)

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_SYMBOLS_H_
