// SPDX-License-Identifier: Apache-2.0
#include "emu_proc_table.h"

#include <cudaTypedefs.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core_calls.h"
#include "emu_call_counts.h"

namespace anydev_emu {
namespace {

// Counted<&cuX>::call: what cuGetProcAddress hands out for cuX; it counts the
// call in Counted<&cuX>::calls and then makes it.
template <auto Fn>
struct Counted;

template <class... Args, CUresult (*Fn)(Args...)>
struct Counted<Fn> {
  static inline std::atomic<std::uint64_t> calls{0};
  static CUresult call(Args... args) {
    calls.fetch_add(1, std::memory_order_relaxed);
    return Fn(args...);
  }
};

struct Proc {
  const char* name;
  int version;
  void* fn;
  std::atomic<std::uint64_t>* calls;  // null: not counted
};

// P(name, version): cu<name> as cuda.h declares it (cuMemAlloc -> cuMemAlloc_v2)
// must have the signature PFN_cu<name>_v<version> of cudaTypedefs.h; handed
// out counted.
#define P(name, version)                                                                 \
  Proc {                                                                                 \
    "cu" #name, version,                                                                 \
        [] {                                                                             \
          static_assert(std::is_same_v<PFN_cu##name##_v##version, decltype(&cu##name)>); \
          return reinterpret_cast<void*>(&Counted<&cu##name>::call);                     \
        }(),                                                                             \
        &Counted<&cu##name>::calls                                                       \
  }

const Proc* proc_table(std::size_t* size) {
  static const Proc table[] = {
      P(GetErrorName, 6000),
      P(GetErrorString, 6000),
      P(Init, 2000),
      P(DriverGetVersion, 2020),
      P(GetProcAddress, 12000),
      Proc{"cuGetProcAddress", 11030, legacy_get_proc_address(), nullptr},
      P(DeviceGet, 2000),
      P(DeviceGetCount, 2000),
      P(DeviceGetName, 2000),
      P(DeviceTotalMem, 3020),
      P(DeviceGetAttribute, 2000),
      P(DeviceGetPCIBusId, 4010),
      P(DeviceCanAccessPeer, 4000),
      P(DeviceGetDefaultMemPool, 11020),
      P(DevicePrimaryCtxRetain, 7000),
      P(DevicePrimaryCtxRelease, 11000),
      P(CtxGetCurrent, 4000),
      P(CtxSetCurrent, 4000),
      P(CtxPushCurrent, 4000),
      P(CtxPopCurrent, 4000),
      P(CtxEnablePeerAccess, 4000),
      P(MemGetInfo, 3020),
      P(MemAlloc, 3020),
      P(MemFree, 3020),
      P(MemAllocAsync, 11020),
      P(MemFreeAsync, 11020),
      P(MemPoolSetAccess, 11020),
      P(MemPoolGetAccess, 11020),
      P(MemPoolCreate, 11020),
      P(MemPoolDestroy, 11020),
      P(MemPoolSetAttribute, 11020),
      P(MemPoolGetAttribute, 11020),
      P(MemAllocFromPoolAsync, 11020),
      P(PointerGetAttribute, 4000),
      P(MemHostAlloc, 2020),
      P(MemFreeHost, 2000),
      P(MemcpyAsync, 4000),
      P(MemcpyPeerAsync, 4000),
      P(MemcpyHtoDAsync, 3020),
      P(MemcpyDtoHAsync, 3020),
      P(MemsetD8Async, 3020),
      P(MemsetD16Async, 3020),
      P(MemsetD32Async, 3020),
      P(MemsetD2D32Async, 3020),
      P(StreamCreate, 2000),
      P(StreamDestroy, 4000),
      P(StreamSynchronize, 2000),
      P(StreamWaitEvent, 3020),
      P(StreamGetCtx, 9020),
      P(LaunchHostFunc, 10000),
      P(EventCreate, 2000),
      P(EventDestroy, 4000),
      P(EventRecord, 2000),
      P(EventSynchronize, 2000),
      P(EventQuery, 2000),
      P(EventElapsedTime, 2000),
      P(StreamCreateWithPriority, 5050),
      P(CtxGetStreamPriorityRange, 5050),
      P(DeviceGetUuid, 11040),
      P(MemGetAllocationGranularity, 10020),
      P(MemCreate, 10020),
      P(MemRelease, 10020),
      P(MemAddressReserve, 10020),
      P(MemAddressFree, 10020),
      P(MemMap, 10020),
      P(MemUnmap, 10020),
      P(MemSetAccess, 10020),
      P(MemExportToShareableHandle, 10020),
      P(MemImportFromShareableHandle, 10020),
      P(MemHostRegister, 6050),
      P(MemHostUnregister, 4000),
      P(IpcGetEventHandle, 4010),
      P(IpcOpenEventHandle, 4010),
      P(ModuleLoadData, 2000),
      P(ModuleGetFunction, 2000),
      P(ModuleUnload, 2000),
      P(LaunchKernel, 4000),
      P(GraphCreate, 10000),
      P(GraphAddEmptyNode, 10000),
      P(GraphAddMemcpyNode, 10000),
      P(GraphAddMemsetNode, 10000),
      P(GraphAddKernelNode, 12000),
      P(GraphInstantiateWithFlags, 11040),
      P(GraphLaunch, 10000),
      P(GraphExecDestroy, 10000),
      P(GraphDestroy, 10000),
  };
  *size = sizeof(table) / sizeof(table[0]);
  return table;
}

#undef P

}  // namespace

void* find_proc(const char* name, int cuda_version, bool* known) {
  std::size_t size = 0;
  const Proc* table = proc_table(&size);
  const Proc* best = nullptr;
  *known = false;
  for (std::size_t i = 0; i < size; ++i) {
    if (std::strcmp(table[i].name, name) != 0) continue;
    *known = true;
    if (table[i].version <= cuda_version && (best == nullptr || table[i].version > best->version)) {
      best = &table[i];
    }
  }
  return best != nullptr ? best->fn : nullptr;
}

}  // namespace anydev_emu

namespace {

// The counted entries of the table, for the core's call counts.
std::span<const anydev_emu::core::CallCounter> call_table() {
  static const std::vector<anydev_emu::core::CallCounter> counters = [] {
    std::vector<anydev_emu::core::CallCounter> list;
    std::size_t size = 0;
    const anydev_emu::Proc* table = anydev_emu::proc_table(&size);
    for (std::size_t i = 0; i < size; ++i) {
      if (table[i].calls != nullptr) list.push_back({table[i].name, table[i].calls});
    }
    return list;
  }();
  return counters;
}

}  // namespace

ANYDEV_EMU_DEFINE_CALL_COUNT_EXPORTS(anydev_cuda_emulator, call_table)
