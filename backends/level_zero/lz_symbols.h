// SPDX-License-Identifier: Apache-2.0
// The Level Zero loader entry points the level_zero backend uses, in one
// X-macro list for the backend kit (include/anydev/kit/symbols.h).
//
// ANYDEV_LEVEL_ZERO_SYMBOL(X, name, need): the field is the entry point's
// name, typed from the declaration in Debian's <level_zero/ze_api.h>, and is
// looked up by that name with dlsym in the loader (libze_loader.so.1 exports
// every ze* entry point and dispatches it to the driver that owns the handle).
// zeInitDrivers (Level Zero 1.10) is not in the 1.4 headers: it is declared
// in lz_init_drivers.h and OPTIONAL (the 1.8 loader lacks it; zeInit is used).
// The IPC entry points (and the event and pool destruction that only shared
// events use) are OPTIONAL: without them sharing is UNSUPPORTED
// (lz_share.cpp, lz_share_events.cpp) and everything else works. Without
// the module and kernel entry points, wide fills use the fill plan
// (lz_fill_kernel.h). The command queue and regular list entry points are
// optional too: without them (or without zeEventDestroy and
// zeEventPoolDestroy) graphs are declined (lz_graph.cpp).
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_SYMBOLS_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_SYMBOLS_H_

#include <level_zero/ze_api.h>

#include <string>

#include "anydev/kit/symbols.h"
#include "lz_init_drivers.h"

#define ANYDEV_LEVEL_ZERO_SYMBOL(X, name, need) X(name, need, decltype(&::name), #name)
#define ANYDEV_LEVEL_ZERO_TYPED_SYMBOL(X, name, type, need) X(name, need, type, #name)

#define ANYDEV_LEVEL_ZERO_SYMBOLS(X)                                                              \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeInit, REQUIRED)                                                   \
  ANYDEV_LEVEL_ZERO_TYPED_SYMBOL(X, zeInitDrivers, ::anydev::level_zero::InitDriversFn, OPTIONAL) \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDriverGet, REQUIRED)                                              \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDriverGetProperties, REQUIRED)                                    \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDriverGetApiVersion, REQUIRED)                                    \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDeviceGet, REQUIRED)                                              \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDeviceGetProperties, REQUIRED)                                    \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDeviceGetMemoryProperties, REQUIRED)                              \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDeviceGetCommandQueueGroupProperties, REQUIRED)                   \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDeviceCanAccessPeer, REQUIRED)                                    \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeContextCreate, REQUIRED)                                          \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeContextDestroy, REQUIRED)                                         \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandListCreateImmediate, REQUIRED)                             \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandListDestroy, REQUIRED)                                     \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandListAppendMemoryCopy, REQUIRED)                            \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandListAppendMemoryFill, REQUIRED)                            \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandListAppendBarrier, REQUIRED)                               \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandListAppendWaitOnEvents, REQUIRED)                          \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeEventPoolCreate, REQUIRED)                                        \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeEventCreate, REQUIRED)                                            \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeEventHostSynchronize, REQUIRED)                                   \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeEventQueryStatus, REQUIRED)                                       \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeEventHostReset, REQUIRED)                                         \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeEventQueryKernelTimestamp, OPTIONAL)                              \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeMemAllocHost, REQUIRED)                                           \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeMemAllocDevice, REQUIRED)                                         \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeMemFree, REQUIRED)                                                \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeMemGetAddressRange, REQUIRED)                                     \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDriverGetIpcProperties, OPTIONAL)                                 \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeMemGetIpcHandle, OPTIONAL)                                        \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeMemOpenIpcHandle, OPTIONAL)                                       \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeMemCloseIpcHandle, OPTIONAL)                                      \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeEventDestroy, OPTIONAL)                                           \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeEventPoolDestroy, OPTIONAL)                                       \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeEventPoolGetIpcHandle, OPTIONAL)                                  \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeEventPoolOpenIpcHandle, OPTIONAL)                                 \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeEventPoolCloseIpcHandle, OPTIONAL)                                \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDriverGetExtensionFunctionAddress, OPTIONAL)                      \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDeviceGetCacheProperties, OPTIONAL)                               \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDeviceGetComputeProperties, OPTIONAL)                             \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeDevicePciGetPropertiesExt, OPTIONAL)                              \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeModuleCreate, OPTIONAL)                                           \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeKernelCreate, OPTIONAL)                                           \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeKernelSetGroupSize, OPTIONAL)                                     \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeKernelSetArgumentValue, OPTIONAL)                                 \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandListAppendLaunchKernel, OPTIONAL)                          \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandQueueCreate, OPTIONAL)                                     \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandQueueDestroy, OPTIONAL)                                    \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandQueueExecuteCommandLists, OPTIONAL)                        \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandQueueSynchronize, OPTIONAL)                                \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandListCreate, OPTIONAL)                                      \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandListClose, OPTIONAL)                                       \
  ANYDEV_LEVEL_ZERO_SYMBOL(X, zeCommandListAppendEventReset, OPTIONAL)

namespace anydev::level_zero {

// The loader's entry points and where they came from.
struct LoaderApi {
  ANYDEV_KIT_SYMBOL_FIELDS(ANYDEV_LEVEL_ZERO_SYMBOLS)
  std::string path;  // as asked for (ANYDEV_LEVEL_ZERO_LIBRARY or libze_loader.so.1)
};

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_SYMBOLS_H_
