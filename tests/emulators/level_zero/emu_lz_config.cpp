// SPDX-License-Identifier: Apache-2.0
// The face's identity for the core, its own setting, misuse counting, status
// mapping and call counts.
#include <atomic>
#include <cstring>
#include <span>
#include <string>

#include "core_calls.h"
#include "emu_lz.h"

namespace anydev_emu::core {
const Identity kIdentity = {"ANYDEV_LEVEL_ZERO_EMULATOR_", "anydev-level-zero-emulator"};
}  // namespace anydev_emu::core

namespace anydev_lz_emu {
namespace {

std::atomic<unsigned long long> g_misuse{0};

// Every entry point the face implements, in the order of the call-count text.
// clang-format off
#define ANYDEV_LZ_ENTRY_POINTS(X)                                                                 \
  X(zeInit) X(zeDriverGet) X(zeDriverGetApiVersion) X(zeDriverGetProperties)                      \
  X(zeDriverGetIpcProperties) X(zeDriverGetExtensionProperties) X(zeDeviceGet)                    \
  X(zeDeviceGetSubDevices) X(zeDeviceGetProperties) X(zeDeviceGetMemoryProperties)                \
  X(zeDeviceGetCommandQueueGroupProperties) X(zeDeviceCanAccessPeer) X(zeDeviceGetStatus)         \
  X(zeContextCreate) X(zeContextDestroy) X(zeContextGetStatus) X(zeMemAllocHost)                  \
  X(zeMemAllocDevice) X(zeMemFree) X(zeMemGetAddressRange) X(zeMemGetAllocProperties)             \
  X(zeMemGetIpcHandle) X(zeMemOpenIpcHandle) X(zeMemCloseIpcHandle)                               \
  X(zeEventPoolCreate) X(zeEventPoolDestroy) X(zeEventCreate) X(zeEventDestroy)                   \
  X(zeEventHostSignal) X(zeEventHostSynchronize) X(zeEventQueryStatus) X(zeEventHostReset)        \
  X(zeCommandListCreateImmediate) X(zeCommandListDestroy) X(zeCommandListAppendMemoryCopy)        \
  X(zeCommandListAppendMemoryFill) X(zeCommandListAppendBarrier)                                  \
  X(zeCommandListAppendWaitOnEvents) X(zeEventPoolGetIpcHandle) X(zeEventPoolOpenIpcHandle)      \
  X(zeEventPoolCloseIpcHandle) X(zeDriverGetExtensionFunctionAddress)                            \
  X(zexDriverImportExternalPointer) X(zexDriverReleaseImportedPointer)                           \
  X(zeEventQueryKernelTimestamp) X(zeDeviceGetComputeProperties) X(zeDeviceGetCacheProperties)   \
  X(zeDevicePciGetPropertiesExt) X(zeModuleCreate) X(zeModuleDestroy) X(zeKernelCreate)          \
  X(zeKernelDestroy) X(zeKernelSetGroupSize) X(zeKernelSetArgumentValue)                          \
  X(zeCommandListAppendLaunchKernel) X(zeCommandListCreate) X(zeCommandListClose)                  \
  X(zeCommandListAppendEventReset) X(zeCommandQueueCreate) X(zeCommandQueueDestroy)                \
  X(zeCommandQueueExecuteCommandLists) X(zeCommandQueueSynchronize)
// clang-format on

#define ANYDEV_LZ_COUNTER(name) std::atomic<std::uint64_t> g_calls_##name{0};
ANYDEV_LZ_ENTRY_POINTS(ANYDEV_LZ_COUNTER)
#undef ANYDEV_LZ_COUNTER

#define ANYDEV_LZ_ROW(name) {#name, &g_calls_##name},
const core::CallCounter kCalls[] = {ANYDEV_LZ_ENTRY_POINTS(ANYDEV_LZ_ROW)};
#undef ANYDEV_LZ_ROW

std::span<const core::CallCounter> calls() { return kCalls; }

}  // namespace

std::size_t max_fill_pattern() {
  static const std::size_t value = [] {
    const long long v = core::read_setting("MAX_FILL_PATTERN", 16, 1, 256);
    if ((v & (v - 1)) != 0) {
      core::report_misuse("ANYDEV_LEVEL_ZERO_EMULATOR_MAX_FILL_PATTERN=" + std::to_string(v) +
                          " is not a power of two: using 16");
      return std::size_t{16};
    }
    return static_cast<std::size_t>(v);
  }();
  return value;
}

int api_minor() {
  static const int value = static_cast<int>(core::read_setting("API_MINOR", 4, 4, 15));
  return value;
}

bool ipc_enabled() {
  static const bool value = core::read_setting("IPC", 0, 0, 1) != 0;
  return value;
}

ze_result_t misuse(ze_result_t result, const std::string& message) {
  g_misuse.fetch_add(1, std::memory_order_relaxed);
  char code[16];
  std::snprintf(code, sizeof(code), "0x%08x", static_cast<unsigned>(result));
  core::report_misuse(message + " (returns " + code + ")");
  return result;
}

unsigned long long misuse_count() { return g_misuse.load(std::memory_order_relaxed); }

ze_result_t to_ze(core::Status status, bool device_memory) {
  switch (status) {
    case core::Status::success:
      return ZE_RESULT_SUCCESS;
    case core::Status::out_of_memory:
      return device_memory ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
                           : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    case core::Status::not_initialized:
    case core::Status::no_device:
      return ZE_RESULT_ERROR_UNINITIALIZED;
    case core::Status::not_ready:
      return ZE_RESULT_NOT_READY;
    case core::Status::illegal_address:
      return ZE_RESULT_ERROR_DEVICE_LOST;
    case core::Status::not_supported:
      return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    default:
      return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
}

void count_call(const char* name) {
  for (const core::CallCounter& c : kCalls) {
    if (std::strcmp(c.name, name) == 0) {
      c.calls->fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
}

}  // namespace anydev_lz_emu

// Emulator-only functions, never named ze* (the loader would not pass them
// on): a test finds them with dlsym in the driver it named in
// ZE_ENABLE_ALT_DRIVERS.
ANYDEV_EMU_DECLARE_CALL_COUNT_EXPORTS(anydev_level_zero_emulator)
ANYDEV_EMU_DEFINE_CALL_COUNT_EXPORTS(anydev_level_zero_emulator, anydev_lz_emu::calls)

extern "C" __attribute__((visibility("default"))) unsigned long long
anydev_level_zero_emulator_misuse_count() {
  return anydev_lz_emu::misuse_count();
}
