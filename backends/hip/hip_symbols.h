// SPDX-License-Identifier: Apache-2.0
// The HIP runtime entry points the hip backend uses, in one X-macro list,
// with their C signatures spelled here.
//
// ANYDEV_HIP_SYMBOLS(X) gives the backend kit's X(member, need, type, key)
// (include/anydev/kit/symbols.h):
//   member  the field's name: the GPU core's name for the operation where it
//           has one (MemAlloc for hipMalloc, StreamCreate for
//           hipStreamCreateWithFlags: backends/gpu/gpu_api.h), else the
//           entry point without "hip";
//   need    REQUIRED (the backend is unavailable without it) or OPTIONAL
//           (a null pointer is handled where it is used);
//   type    the signature, declared below rather than taken with decltype
//           from hip_runtime_api.h: C++ overloads (hipMalloc's template, ...)
//           make decltype ambiguous, and some entry points are not declared
//           by every release's header (hipMemsetD2D32Async: not in 5.2);
//   key     the exported name, and an alternative tried when it is absent
//           (hipHostMalloc, deprecated by later releases, or hipHostAlloc).
// Signatures use only hip_runtime_api.h's plain types and enums, which keep
// their layout across releases; never hipDeviceProp_t, which ROCm 6 changed
// (hipGetDevicePropertiesR0600).
#ifndef ANYDEV_BACKENDS_HIP_HIP_SYMBOLS_H_
#define ANYDEV_BACKENDS_HIP_HIP_SYMBOLS_H_

#include <hip/hip_runtime_api.h>

#include <cstddef>

namespace anydev::hip {

// What the runtime is asked for one entry point; names are string literals.
struct HipSymbolKey {
  const char* name = "";              // "hipHostMalloc"
  const char* alternative = nullptr;  // "hipHostAlloc", or none
};

// The signatures, as the runtime exports them.
namespace fn {
using Init = hipError_t (*)(unsigned int);
using GetIntOut = hipError_t (*)(int*);  // hipGetDeviceCount, hipGetDevice, the versions
using GetErrorText = const char* (*)(hipError_t);
using SetDevice = hipError_t (*)(int);
using DeviceGetAttribute = hipError_t (*)(int*, hipDeviceAttribute_t, int);
using DeviceGetName = hipError_t (*)(char*, int, int);
using DeviceTotalMem = hipError_t (*)(std::size_t*, int);
using MemGetInfo = hipError_t (*)(std::size_t*, std::size_t*);
using DeviceCanAccessPeer = hipError_t (*)(int*, int, int);
using DeviceEnablePeerAccess = hipError_t (*)(int, unsigned int);
using Malloc = hipError_t (*)(void**, std::size_t);
using Free = hipError_t (*)(void*);
using HostMalloc = hipError_t (*)(void**, std::size_t, unsigned int);
using MallocFromPoolAsync = hipError_t (*)(void**, std::size_t, hipMemPool_t, hipStream_t);
using FreeAsync = hipError_t (*)(void*, hipStream_t);
using MemPoolCreate = hipError_t (*)(hipMemPool_t*, const hipMemPoolProps*);
using MemPoolDestroy = hipError_t (*)(hipMemPool_t);
using MemPoolSetAttribute = hipError_t (*)(hipMemPool_t, hipMemPoolAttr, void*);
using MemPoolSetAccess = hipError_t (*)(hipMemPool_t, const hipMemAccessDesc*, std::size_t);
using MemsetD8Async = hipError_t (*)(hipDeviceptr_t, unsigned char, std::size_t, hipStream_t);
using MemsetD16Async = hipError_t (*)(hipDeviceptr_t, unsigned short, std::size_t, hipStream_t);
using MemsetD32Async = hipError_t (*)(hipDeviceptr_t, int, std::size_t, hipStream_t);
using MemsetD2D32Async = hipError_t (*)(hipDeviceptr_t, std::size_t, unsigned int, std::size_t,
                                        std::size_t, hipStream_t);
using MemcpyAsync = hipError_t (*)(void*, const void*, std::size_t, hipMemcpyKind, hipStream_t);
using MemcpyPeerAsync = hipError_t (*)(void*, int, const void*, int, std::size_t, hipStream_t);
using StreamCreate = hipError_t (*)(hipStream_t*, unsigned int);
using OnStream = hipError_t (*)(hipStream_t);  // destroy, synchronize, query
using StreamWaitEvent = hipError_t (*)(hipStream_t, hipEvent_t, unsigned int);
using EventCreate = hipError_t (*)(hipEvent_t*, unsigned int);
using OnEvent = hipError_t (*)(hipEvent_t);  // destroy, query, synchronize
using EventRecord = hipError_t (*)(hipEvent_t, hipStream_t);
using EventElapsedTime = hipError_t (*)(float*, hipEvent_t, hipEvent_t);
using StreamCreateWithPriority = hipError_t (*)(hipStream_t*, unsigned int, int);
using GetStreamPriorityRange = hipError_t (*)(int*, int*);
// Sharing (backends/gpu/gpu_share.h). The allocation properties are passed
// as `const void*`: their layout differs between HIP 5 and ROCm 6
// (hip_share.cpp picks the loaded runtime's).
using DeviceGetUuid = hipError_t (*)(hipUUID*, hipDevice_t);
using MemGetAllocationGranularity = hipError_t (*)(std::size_t*, const void*,
                                                   hipMemAllocationGranularity_flags);
using MemCreate = hipError_t (*)(hipMemGenericAllocationHandle_t*, std::size_t, const void*,
                                 unsigned long long);
using MemRelease = hipError_t (*)(hipMemGenericAllocationHandle_t);
using MemAddressReserve = hipError_t (*)(void**, std::size_t, std::size_t, void*,
                                         unsigned long long);
using MemAddressFree = hipError_t (*)(void*, std::size_t);
using MemMap = hipError_t (*)(void*, std::size_t, std::size_t, hipMemGenericAllocationHandle_t,
                              unsigned long long);
using MemUnmap = hipError_t (*)(void*, std::size_t);
using MemSetAccess = hipError_t (*)(void*, std::size_t, const hipMemAccessDesc*, std::size_t);
using MemExportToShareableHandle = hipError_t (*)(void*, hipMemGenericAllocationHandle_t,
                                                  hipMemAllocationHandleType, unsigned long long);
using MemImportFromShareableHandle = hipError_t (*)(hipMemGenericAllocationHandle_t*, void*,
                                                    hipMemAllocationHandleType);
using HostRegister = hipError_t (*)(void*, std::size_t, unsigned int);
using IpcGetEventHandle = hipError_t (*)(hipIpcEventHandle_t*, hipEvent_t);
using IpcOpenEventHandle = hipError_t (*)(hipEvent_t*, hipIpcEventHandle_t);
// Graphs (backends/gpu/gpu_graph.h).
using GraphCreate = hipError_t (*)(hipGraph_t*, unsigned int);
using GraphAddEmptyNode = hipError_t (*)(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
                                         std::size_t);
using GraphAddMemcpyNode1D = hipError_t (*)(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
                                            std::size_t, void*, const void*, std::size_t,
                                            hipMemcpyKind);
using GraphAddMemsetNode = hipError_t (*)(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
                                          std::size_t, const hipMemsetParams*);
using GraphAddKernelNode = hipError_t (*)(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
                                          std::size_t, const hipKernelNodeParams*);
using GraphInstantiateWithFlags = hipError_t (*)(hipGraphExec_t*, hipGraph_t, unsigned long long);
using GraphLaunch = hipError_t (*)(hipGraphExec_t, hipStream_t);
using GraphExecDestroy = hipError_t (*)(hipGraphExec_t);
using GraphDestroy = hipError_t (*)(hipGraph_t);
// anydev's fill kernel (hip_fill_kernel.cpp). The device properties are
// read into a buffer larger than any release's hipDeviceProp_t, as `void*`:
// only gcnArchName is read, where HIP 5's layout has it.
using ModuleLoadData = hipError_t (*)(hipModule_t*, const void*);
using ModuleGetFunction = hipError_t (*)(hipFunction_t*, hipModule_t, const char*);
using ModuleLaunchKernel = hipError_t (*)(hipFunction_t, unsigned int, unsigned int, unsigned int,
                                          unsigned int, unsigned int, unsigned int, unsigned int,
                                          hipStream_t, void**, void**);
using GetDeviceProperties = hipError_t (*)(void*, int);
}  // namespace fn

}  // namespace anydev::hip

#define ANYDEV_HIP_KEY(...) (::anydev::hip::HipSymbolKey{__VA_ARGS__})

#define ANYDEV_HIP_SYMBOLS(X)                                                                      \
  X(Init, REQUIRED, ::anydev::hip::fn::Init, ANYDEV_HIP_KEY("hipInit"))                            \
  X(GetDeviceCount, REQUIRED, ::anydev::hip::fn::GetIntOut, ANYDEV_HIP_KEY("hipGetDeviceCount"))   \
  X(DriverGetVersion, REQUIRED, ::anydev::hip::fn::GetIntOut,                                      \
    ANYDEV_HIP_KEY("hipDriverGetVersion"))                                                         \
  X(RuntimeGetVersion, REQUIRED, ::anydev::hip::fn::GetIntOut,                                     \
    ANYDEV_HIP_KEY("hipRuntimeGetVersion"))                                                        \
  X(GetErrorName, REQUIRED, ::anydev::hip::fn::GetErrorText, ANYDEV_HIP_KEY("hipGetErrorName"))    \
  X(GetErrorString, REQUIRED, ::anydev::hip::fn::GetErrorText,                                     \
    ANYDEV_HIP_KEY("hipGetErrorString"))                                                           \
  X(GetDevice, REQUIRED, ::anydev::hip::fn::GetIntOut, ANYDEV_HIP_KEY("hipGetDevice"))             \
  X(SetDevice, REQUIRED, ::anydev::hip::fn::SetDevice, ANYDEV_HIP_KEY("hipSetDevice"))             \
  X(DeviceGetAttribute, REQUIRED, ::anydev::hip::fn::DeviceGetAttribute,                           \
    ANYDEV_HIP_KEY("hipDeviceGetAttribute"))                                                       \
  X(DeviceGetName, REQUIRED, ::anydev::hip::fn::DeviceGetName, ANYDEV_HIP_KEY("hipDeviceGetName")) \
  X(DeviceTotalMem, REQUIRED, ::anydev::hip::fn::DeviceTotalMem,                                   \
    ANYDEV_HIP_KEY("hipDeviceTotalMem"))                                                           \
  X(MemGetInfo, REQUIRED, ::anydev::hip::fn::MemGetInfo, ANYDEV_HIP_KEY("hipMemGetInfo"))          \
  X(DeviceCanAccessPeer, REQUIRED, ::anydev::hip::fn::DeviceCanAccessPeer,                         \
    ANYDEV_HIP_KEY("hipDeviceCanAccessPeer"))                                                      \
  X(DeviceEnablePeerAccess, REQUIRED, ::anydev::hip::fn::DeviceEnablePeerAccess,                   \
    ANYDEV_HIP_KEY("hipDeviceEnablePeerAccess"))                                                   \
  X(MemAlloc, REQUIRED, ::anydev::hip::fn::Malloc, ANYDEV_HIP_KEY("hipMalloc"))                    \
  X(MemFree, REQUIRED, ::anydev::hip::fn::Free, ANYDEV_HIP_KEY("hipFree"))                         \
  X(MemHostAlloc, REQUIRED, ::anydev::hip::fn::HostMalloc,                                         \
    ANYDEV_HIP_KEY("hipHostMalloc", "hipHostAlloc"))                                               \
  X(MemFreeHost, REQUIRED, ::anydev::hip::fn::Free, ANYDEV_HIP_KEY("hipHostFree"))                 \
  X(MemcpyAsync, REQUIRED, ::anydev::hip::fn::MemcpyAsync, ANYDEV_HIP_KEY("hipMemcpyAsync"))       \
  X(MemcpyPeerAsync, REQUIRED, ::anydev::hip::fn::MemcpyPeerAsync,                                 \
    ANYDEV_HIP_KEY("hipMemcpyPeerAsync"))                                                          \
  X(MemsetD8Async, REQUIRED, ::anydev::hip::fn::MemsetD8Async, ANYDEV_HIP_KEY("hipMemsetD8Async")) \
  X(MemsetD16Async, REQUIRED, ::anydev::hip::fn::MemsetD16Async,                                   \
    ANYDEV_HIP_KEY("hipMemsetD16Async"))                                                           \
  X(MemsetD32Async, REQUIRED, ::anydev::hip::fn::MemsetD32Async,                                   \
    ANYDEV_HIP_KEY("hipMemsetD32Async"))                                                           \
  X(StreamCreate, REQUIRED, ::anydev::hip::fn::StreamCreate,                                       \
    ANYDEV_HIP_KEY("hipStreamCreateWithFlags"))                                                    \
  X(StreamDestroy, REQUIRED, ::anydev::hip::fn::OnStream, ANYDEV_HIP_KEY("hipStreamDestroy"))      \
  X(StreamSynchronize, REQUIRED, ::anydev::hip::fn::OnStream,                                      \
    ANYDEV_HIP_KEY("hipStreamSynchronize"))                                                        \
  X(StreamWaitEvent, REQUIRED, ::anydev::hip::fn::StreamWaitEvent,                                 \
    ANYDEV_HIP_KEY("hipStreamWaitEvent"))                                                          \
  X(EventCreate, REQUIRED, ::anydev::hip::fn::EventCreate,                                         \
    ANYDEV_HIP_KEY("hipEventCreateWithFlags"))                                                     \
  X(EventDestroy, REQUIRED, ::anydev::hip::fn::OnEvent, ANYDEV_HIP_KEY("hipEventDestroy"))         \
  X(EventRecord, REQUIRED, ::anydev::hip::fn::EventRecord, ANYDEV_HIP_KEY("hipEventRecord"))       \
  X(EventSynchronize, REQUIRED, ::anydev::hip::fn::OnEvent, ANYDEV_HIP_KEY("hipEventSynchronize")) \
  X(EventQuery, REQUIRED, ::anydev::hip::fn::OnEvent, ANYDEV_HIP_KEY("hipEventQuery"))             \
  X(MemsetD2D32Async, OPTIONAL, ::anydev::hip::fn::MemsetD2D32Async,                               \
    ANYDEV_HIP_KEY("hipMemsetD2D32Async"))                                                         \
  X(MemPoolCreate, OPTIONAL, ::anydev::hip::fn::MemPoolCreate, ANYDEV_HIP_KEY("hipMemPoolCreate")) \
  X(MemPoolDestroy, OPTIONAL, ::anydev::hip::fn::MemPoolDestroy,                                   \
    ANYDEV_HIP_KEY("hipMemPoolDestroy"))                                                           \
  X(MemPoolSetAttribute, OPTIONAL, ::anydev::hip::fn::MemPoolSetAttribute,                         \
    ANYDEV_HIP_KEY("hipMemPoolSetAttribute"))                                                      \
  X(MemPoolSetAccess, OPTIONAL, ::anydev::hip::fn::MemPoolSetAccess,                               \
    ANYDEV_HIP_KEY("hipMemPoolSetAccess"))                                                         \
  X(MemAllocFromPoolAsync, OPTIONAL, ::anydev::hip::fn::MallocFromPoolAsync,                       \
    ANYDEV_HIP_KEY("hipMallocFromPoolAsync"))                                                      \
  X(MemFreeAsync, OPTIONAL, ::anydev::hip::fn::FreeAsync, ANYDEV_HIP_KEY("hipFreeAsync"))          \
  X(DeviceGetUuid, OPTIONAL, ::anydev::hip::fn::DeviceGetUuid, ANYDEV_HIP_KEY("hipDeviceGetUuid")) \
  X(MemGetAllocationGranularity, OPTIONAL, ::anydev::hip::fn::MemGetAllocationGranularity,         \
    ANYDEV_HIP_KEY("hipMemGetAllocationGranularity"))                                              \
  X(MemCreate, OPTIONAL, ::anydev::hip::fn::MemCreate, ANYDEV_HIP_KEY("hipMemCreate"))             \
  X(MemRelease, OPTIONAL, ::anydev::hip::fn::MemRelease, ANYDEV_HIP_KEY("hipMemRelease"))          \
  X(MemAddressReserve, OPTIONAL, ::anydev::hip::fn::MemAddressReserve,                             \
    ANYDEV_HIP_KEY("hipMemAddressReserve"))                                                        \
  X(MemAddressFree, OPTIONAL, ::anydev::hip::fn::MemAddressFree,                                   \
    ANYDEV_HIP_KEY("hipMemAddressFree"))                                                           \
  X(MemMap, OPTIONAL, ::anydev::hip::fn::MemMap, ANYDEV_HIP_KEY("hipMemMap"))                      \
  X(MemUnmap, OPTIONAL, ::anydev::hip::fn::MemUnmap, ANYDEV_HIP_KEY("hipMemUnmap"))                \
  X(MemSetAccess, OPTIONAL, ::anydev::hip::fn::MemSetAccess, ANYDEV_HIP_KEY("hipMemSetAccess"))    \
  X(MemExportToShareableHandle, OPTIONAL, ::anydev::hip::fn::MemExportToShareableHandle,           \
    ANYDEV_HIP_KEY("hipMemExportToShareableHandle"))                                               \
  X(MemImportFromShareableHandle, OPTIONAL, ::anydev::hip::fn::MemImportFromShareableHandle,       \
    ANYDEV_HIP_KEY("hipMemImportFromShareableHandle"))                                             \
  X(MemHostRegister, OPTIONAL, ::anydev::hip::fn::HostRegister, ANYDEV_HIP_KEY("hipHostRegister")) \
  X(MemHostUnregister, OPTIONAL, ::anydev::hip::fn::Free, ANYDEV_HIP_KEY("hipHostUnregister"))     \
  X(IpcGetEventHandle, OPTIONAL, ::anydev::hip::fn::IpcGetEventHandle,                             \
    ANYDEV_HIP_KEY("hipIpcGetEventHandle"))                                                        \
  X(IpcOpenEventHandle, OPTIONAL, ::anydev::hip::fn::IpcOpenEventHandle,                           \
    ANYDEV_HIP_KEY("hipIpcOpenEventHandle"))                                                       \
  X(EventElapsedTime, OPTIONAL, ::anydev::hip::fn::EventElapsedTime,                               \
    ANYDEV_HIP_KEY("hipEventElapsedTime"))                                                         \
  X(StreamCreateWithPriority, OPTIONAL, ::anydev::hip::fn::StreamCreateWithPriority,               \
    ANYDEV_HIP_KEY("hipStreamCreateWithPriority"))                                                 \
  X(CtxGetStreamPriorityRange, OPTIONAL, ::anydev::hip::fn::GetStreamPriorityRange,                \
    ANYDEV_HIP_KEY("hipDeviceGetStreamPriorityRange"))                                             \
  X(GraphCreate, OPTIONAL, ::anydev::hip::fn::GraphCreate, ANYDEV_HIP_KEY("hipGraphCreate"))       \
  X(GraphAddEmptyNode, OPTIONAL, ::anydev::hip::fn::GraphAddEmptyNode,                             \
    ANYDEV_HIP_KEY("hipGraphAddEmptyNode"))                                                        \
  X(GraphAddMemcpyNode, OPTIONAL, ::anydev::hip::fn::GraphAddMemcpyNode1D,                         \
    ANYDEV_HIP_KEY("hipGraphAddMemcpyNode1D"))                                                     \
  X(GraphAddMemsetNode, OPTIONAL, ::anydev::hip::fn::GraphAddMemsetNode,                           \
    ANYDEV_HIP_KEY("hipGraphAddMemsetNode"))                                                       \
  X(GraphAddKernelNode, OPTIONAL, ::anydev::hip::fn::GraphAddKernelNode,                           \
    ANYDEV_HIP_KEY("hipGraphAddKernelNode"))                                                       \
  X(GraphInstantiateWithFlags, OPTIONAL, ::anydev::hip::fn::GraphInstantiateWithFlags,             \
    ANYDEV_HIP_KEY("hipGraphInstantiateWithFlags"))                                                \
  X(GraphLaunch, OPTIONAL, ::anydev::hip::fn::GraphLaunch, ANYDEV_HIP_KEY("hipGraphLaunch"))       \
  X(GraphExecDestroy, OPTIONAL, ::anydev::hip::fn::GraphExecDestroy,                               \
    ANYDEV_HIP_KEY("hipGraphExecDestroy"))                                                         \
  X(GraphDestroy, OPTIONAL, ::anydev::hip::fn::GraphDestroy, ANYDEV_HIP_KEY("hipGraphDestroy"))    \
  X(ModuleLoadData, OPTIONAL, ::anydev::hip::fn::ModuleLoadData,                                   \
    ANYDEV_HIP_KEY("hipModuleLoadData"))                                                           \
  X(ModuleGetFunction, OPTIONAL, ::anydev::hip::fn::ModuleGetFunction,                             \
    ANYDEV_HIP_KEY("hipModuleGetFunction"))                                                        \
  X(LaunchKernel, OPTIONAL, ::anydev::hip::fn::ModuleLaunchKernel,                                 \
    ANYDEV_HIP_KEY("hipModuleLaunchKernel"))                                                       \
  X(GetDeviceProperties, OPTIONAL, ::anydev::hip::fn::GetDeviceProperties,                         \
    ANYDEV_HIP_KEY("hipGetDevicePropertiesR0000", "hipGetDeviceProperties"))

#endif  // ANYDEV_BACKENDS_HIP_HIP_SYMBOLS_H_
