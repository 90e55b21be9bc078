// SPDX-License-Identifier: Apache-2.0
// The HIP emulator's call counts, per entry point: every call of an exported
// hip* function (which is how the hip backend calls the runtime: through
// dlsym) adds one to its count, whatever it returns, from any caller.
//
// Emulator-only functions, never named hip* (the real runtime has no such
// entry points): a test finds them with dlsym in the libamdhip64.so the
// backend opened, or calls them directly when it links the emulator:
//   void anydev_hip_emulator_reset_call_counts(): sets every count to 0;
//   unsigned long long anydev_hip_emulator_call_count(const char* name): the
//     calls of `name` ("hipMemcpyAsync") since the last reset; 0 for a name
//     the emulator does not export;
//   unsigned long long anydev_hip_emulator_call_counts(char* text,
//     std::size_t capacity): writes "hipMemcpyAsync=1 hipStreamSynchronize=2"
//     (every non-zero count, in the order of ANYDEV_HIP_EMULATOR_CALLS) into
//     `text` (truncated to `capacity` with the NUL) and returns the total.
// One table per library, of relaxed atomic counters: thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_HIP_HIP_CALLS_H_
#define ANYDEV_TESTS_EMULATORS_HIP_HIP_CALLS_H_

#include "core_calls.h"

// Every entry point the emulator can export (hipMemsetD2D32Async and
// hipGetDevicePropertiesR0000 only in the ROCm 7 variant,
// hipGetDeviceProperties only in the 5.2 one), in the order of the count text.
// clang-format off
#define ANYDEV_HIP_EMULATOR_CALLS(X) \
  X(hipInit) X(hipGetDeviceCount) X(hipDriverGetVersion) X(hipRuntimeGetVersion) \
  X(hipGetErrorName) X(hipGetErrorString) X(hipGetDevice) X(hipSetDevice) \
  X(hipDeviceGetAttribute) X(hipDeviceGetName) X(hipDeviceTotalMem) X(hipMemGetInfo) \
  X(hipDeviceCanAccessPeer) X(hipDeviceEnablePeerAccess) X(hipMalloc) X(hipFree) \
  X(hipHostMalloc) X(hipHostAlloc) X(hipHostFree) X(hipMallocAsync) \
  X(hipFreeAsync) X(hipMemPoolCreate) X(hipMemPoolDestroy) X(hipMemPoolSetAttribute) \
  X(hipMemPoolSetAccess) X(hipMallocFromPoolAsync) X(hipMemsetD8Async) X(hipMemsetD16Async) \
  X(hipMemsetD32Async) X(hipMemsetD2D32Async) X(hipMemcpyAsync) X(hipMemcpyPeerAsync) \
  X(hipStreamCreateWithFlags) X(hipStreamDestroy) X(hipStreamSynchronize) X(hipStreamQuery) \
  X(hipStreamWaitEvent) X(hipEventCreateWithFlags) X(hipEventDestroy) X(hipEventRecord) \
  X(hipEventQuery) X(hipEventSynchronize) X(hipPointerGetAttributes) \
  X(hipDeviceGetUuid) X(hipMemGetAllocationGranularity) X(hipMemCreate) X(hipMemRelease) \
  X(hipMemExportToShareableHandle) X(hipMemImportFromShareableHandle) \
  X(hipMemAddressReserve) X(hipMemAddressFree) X(hipMemMap) X(hipMemUnmap) X(hipMemSetAccess) \
  X(hipHostRegister) X(hipHostUnregister) X(hipIpcGetEventHandle) X(hipIpcOpenEventHandle) \
  X(hipEventElapsedTime) X(hipStreamCreateWithPriority) X(hipDeviceGetStreamPriorityRange) \
  X(hipGraphCreate) X(hipGraphAddEmptyNode) X(hipGraphAddMemcpyNode1D) X(hipGraphAddMemsetNode) \
  X(hipGraphAddKernelNode) X(hipGraphInstantiateWithFlags) X(hipGraphLaunch) X(hipGraphExecDestroy) X(hipGraphDestroy) \
  X(hipModuleLoadData) X(hipModuleGetFunction) X(hipModuleLaunchKernel) \
  X(hipGetDeviceProperties) X(hipGetDevicePropertiesR0000)
// clang-format on

ANYDEV_EMU_DECLARE_CALL_COUNT_EXPORTS(anydev_hip_emulator)

#endif  // ANYDEV_TESTS_EMULATORS_HIP_HIP_CALLS_H_
