// SPDX-License-Identifier: Apache-2.0
// The driver, device and context entry points of the emulated driver.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "emu_lz.h"
#include "emu_lz_api.h"

namespace anydev_lz_emu {
namespace {

constexpr std::uint32_t kDriverVersion = 0x00010001;

// Copies up to *count of `n` items (or says how many there are).
template <class T, class Make>
ze_result_t enumerate(std::uint32_t* count, T* out, std::uint32_t n, Make make) {
  if (count == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "null pCount");
  if (*count == 0 || out == nullptr) {
    *count = n;
    return ZE_RESULT_SUCCESS;
  }
  const std::uint32_t k = std::min(*count, n);
  for (std::uint32_t i = 0; i < k; ++i) out[i] = make(i);
  *count = k;
  return ZE_RESULT_SUCCESS;
}

}  // namespace

ze_result_t ZE_APICALL emu_zeInit(ze_init_flags_t flags) {
  count_call("zeInit");
  return initialize(flags);
}

ze_result_t ZE_APICALL emu_zeDriverGet(uint32_t* pCount, ze_driver_handle_t* phDrivers) {
  count_call("zeDriverGet");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  return enumerate(pCount, phDrivers, 1, [](std::uint32_t) { return driver_handle(); });
}

#define ANYDEV_LZ_CHECK_DRIVER(api, h)                                                         \
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;                                    \
  if ((h) == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, api ": null driver"); \
  if (!driver_matches(h)) return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, api ": unknown driver")

ze_result_t ZE_APICALL emu_zeDriverGetApiVersion(ze_driver_handle_t hDriver,
                                                 ze_api_version_t* version) {
  count_call("zeDriverGetApiVersion");
  ANYDEV_LZ_CHECK_DRIVER("zeDriverGetApiVersion", hDriver);
  if (version == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "null version");
  *version = static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, api_minor()));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeDriverGetProperties(ze_driver_handle_t hDriver,
                                                 ze_driver_properties_t* props) {
  count_call("zeDriverGetProperties");
  ANYDEV_LZ_CHECK_DRIVER("zeDriverGetProperties", hDriver);
  if (props == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "null properties");
  if (props->stype != ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeDriverGetProperties: wrong stype");
  }
  std::memset(props->uuid.id, 0, sizeof(props->uuid.id));
  std::memcpy(props->uuid.id, "anydev-lz-emu", 13);
  props->driverVersion = kDriverVersion;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeDriverGetIpcProperties(ze_driver_handle_t hDriver,
                                                    ze_driver_ipc_properties_t* props) {
  count_call("zeDriverGetIpcProperties");
  ANYDEV_LZ_CHECK_DRIVER("zeDriverGetIpcProperties", hDriver);
  if (props == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "null properties");
  props->flags =
      ipc_enabled() ? (ZE_IPC_PROPERTY_FLAG_MEMORY | ZE_IPC_PROPERTY_FLAG_EVENT_POOL) : 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeDriverGetExtensionProperties(ze_driver_handle_t hDriver,
                                                          uint32_t* pCount,
                                                          ze_driver_extension_properties_t* props) {
  count_call("zeDriverGetExtensionProperties");
  ANYDEV_LZ_CHECK_DRIVER("zeDriverGetExtensionProperties", hDriver);
  return enumerate(pCount, props, 0,
                   [](std::uint32_t) { return ze_driver_extension_properties_t{}; });
}

ze_result_t ZE_APICALL emu_zeDeviceGet(ze_driver_handle_t hDriver, uint32_t* pCount,
                                       ze_device_handle_t* phDevices) {
  count_call("zeDeviceGet");
  ANYDEV_LZ_CHECK_DRIVER("zeDeviceGet", hDriver);
  return enumerate(pCount, phDevices, static_cast<std::uint32_t>(core::device_count()),
                   [](std::uint32_t i) { return device_handle(static_cast<int>(i)); });
}

#define ANYDEV_LZ_DEVICE(api, h, d)                                                            \
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;                                    \
  if ((h) == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, api ": null device"); \
  core::Device* d = find_device(h);                                                            \
  if (d == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, api ": unknown device")

ze_result_t ZE_APICALL emu_zeDeviceGetSubDevices(ze_device_handle_t hDevice, uint32_t* pCount,
                                                 ze_device_handle_t* phSubdevices) {
  count_call("zeDeviceGetSubDevices");
  ANYDEV_LZ_DEVICE("zeDeviceGetSubDevices", hDevice, d);
  (void)d;
  return enumerate(pCount, phSubdevices, 0, [](std::uint32_t) { return ze_device_handle_t{}; });
}

ze_result_t ZE_APICALL emu_zeDeviceGetProperties(ze_device_handle_t hDevice,
                                                 ze_device_properties_t* props) {
  count_call("zeDeviceGetProperties");
  ANYDEV_LZ_DEVICE("zeDeviceGetProperties", hDevice, d);
  if (props == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "null properties");
  if (props->stype != ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeDeviceGetProperties: wrong stype");
  }
  void* next = props->pNext;
  std::memset(props, 0, sizeof(*props));
  props->stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  props->pNext = next;
  props->type = ZE_DEVICE_TYPE_GPU;
  props->vendorId = 0;  // no vendor: an emulator
  props->deviceId = static_cast<std::uint32_t>(d->index);
  props->maxMemAllocSize = core::get_config().memory_bytes;
  props->maxHardwareContexts = 1;
  props->numSlices = 1;
  props->numSubslicesPerSlice = 1;
  props->numEUsPerSubslice = 8;
  props->physicalEUSimdWidth = 8;
  props->coreClockRate = 1000;  // MHz
  props->timerResolution = 1;   // ns per tick (the stype without _1_2)
  props->timestampValidBits = 64;
  props->kernelTimestampValidBits = 64;
  props->uuid.id[0] = static_cast<std::uint8_t>(d->index);
  std::snprintf(props->name, sizeof(props->name), "anydev Level Zero emulator");
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeDeviceGetMemoryProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                                       ze_device_memory_properties_t* props) {
  count_call("zeDeviceGetMemoryProperties");
  ANYDEV_LZ_DEVICE("zeDeviceGetMemoryProperties", hDevice, d);
  (void)d;
  if (pCount != nullptr && *pCount != 0 && props != nullptr &&
      props->stype != ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeDeviceGetMemoryProperties: wrong stype");
  }
  return enumerate(pCount, props, 1, [props](std::uint32_t) {
    ze_device_memory_properties_t m = {};
    m.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
    m.pNext = props->pNext;
    m.totalSize = core::get_config().memory_bytes;
    std::snprintf(m.name, sizeof(m.name), "emulated");
    return m;
  });
}

ze_result_t ZE_APICALL emu_zeDeviceGetCommandQueueGroupProperties(
    ze_device_handle_t hDevice, uint32_t* pCount, ze_command_queue_group_properties_t* props) {
  count_call("zeDeviceGetCommandQueueGroupProperties");
  ANYDEV_LZ_DEVICE("zeDeviceGetCommandQueueGroupProperties", hDevice, d);
  (void)d;
  if (pCount != nullptr && *pCount != 0 && props != nullptr &&
      props->stype != ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeDeviceGetCommandQueueGroupProperties: wrong stype");
  }
  return enumerate(pCount, props, 1, [props](std::uint32_t) {
    ze_command_queue_group_properties_t g = {};
    g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    g.pNext = props->pNext;
    g.flags =
        ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    g.maxMemoryFillPatternSize = max_fill_pattern();
    g.numQueues = 1;
    return g;
  });
}

ze_result_t ZE_APICALL emu_zeDeviceCanAccessPeer(ze_device_handle_t hDevice,
                                                 ze_device_handle_t hPeerDevice, ze_bool_t* value) {
  count_call("zeDeviceCanAccessPeer");
  ANYDEV_LZ_DEVICE("zeDeviceCanAccessPeer", hDevice, d);
  ANYDEV_LZ_DEVICE("zeDeviceCanAccessPeer", hPeerDevice, peer);
  (void)d;
  (void)peer;
  if (value == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "null value");
  *value = 1;  // one host memory: every device reaches every other
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeDeviceGetStatus(ze_device_handle_t hDevice) {
  count_call("zeDeviceGetStatus");
  ANYDEV_LZ_DEVICE("zeDeviceGetStatus", hDevice, d);
  (void)d;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeContextCreate(ze_driver_handle_t hDriver,
                                           const ze_context_desc_t* desc,
                                           ze_context_handle_t* phContext) {
  count_call("zeContextCreate");
  ANYDEV_LZ_CHECK_DRIVER("zeContextCreate", hDriver);
  if (desc == nullptr || phContext == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeContextCreate: null desc or out");
  }
  if (desc->stype != ZE_STRUCTURE_TYPE_CONTEXT_DESC) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeContextCreate: wrong stype");
  }
  *phContext = add_context(std::make_unique<Context>());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeContextDestroy(ze_context_handle_t hContext) {
  count_call("zeContextDestroy");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (hContext == nullptr) return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "null context");
  if (!remove_context(hContext)) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeContextDestroy: unknown context");
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeContextGetStatus(ze_context_handle_t hContext) {
  count_call("zeContextGetStatus");
  if (find_context(hContext) == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeContextGetStatus: unknown context");
  }
  return ZE_RESULT_SUCCESS;
}

}  // namespace anydev_lz_emu
