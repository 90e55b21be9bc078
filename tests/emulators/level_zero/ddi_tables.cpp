// SPDX-License-Identifier: Apache-2.0
// The DDI table getters the Level Zero loader looks up in a driver: every
// zeGet*ProcAddrTable, zetGet*ProcAddrTable and zesGet*ProcAddrTable that
// Debian's 1.8 loader asks for (it refuses a driver lacking any of them).
// The tables anydev uses are filled with the emulator's entry points; the
// others are left empty (the loader answers a call through a null entry with
// an error). Each getter checks the API version (major 1) and the table.
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "emu_lz.h"
#include "emu_lz_api.h"

namespace {

template <class Table>
ze_result_t check_table(ze_api_version_t version, Table* table) {
  if (table == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ZE_MAJOR_VERSION(version) != 1) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
  return ZE_RESULT_SUCCESS;
}

}  // namespace

using namespace anydev_lz_emu;  // NOLINT: the entry points fill the tables below

extern "C" {

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetGlobalProcAddrTable(ze_api_version_t version,
                                                             ze_global_dditable_t* table) {
  if (ze_result_t r = check_table(version, table); r != ZE_RESULT_SUCCESS) return r;
  table->pfnInit = emu_zeInit;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDriverProcAddrTable(ze_api_version_t version,
                                                             ze_driver_dditable_t* table) {
  if (ze_result_t r = check_table(version, table); r != ZE_RESULT_SUCCESS) return r;
  table->pfnGet = emu_zeDriverGet;
  table->pfnGetApiVersion = emu_zeDriverGetApiVersion;
  table->pfnGetProperties = emu_zeDriverGetProperties;
  table->pfnGetIpcProperties = emu_zeDriverGetIpcProperties;
  table->pfnGetExtensionProperties = emu_zeDriverGetExtensionProperties;
  table->pfnGetExtensionFunctionAddress = emu_zeDriverGetExtensionFunctionAddress;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDeviceProcAddrTable(ze_api_version_t version,
                                                             ze_device_dditable_t* table) {
  if (ze_result_t r = check_table(version, table); r != ZE_RESULT_SUCCESS) return r;
  table->pfnGet = emu_zeDeviceGet;
  table->pfnGetSubDevices = emu_zeDeviceGetSubDevices;
  table->pfnGetProperties = emu_zeDeviceGetProperties;
  table->pfnGetMemoryProperties = emu_zeDeviceGetMemoryProperties;
  table->pfnGetCommandQueueGroupProperties = emu_zeDeviceGetCommandQueueGroupProperties;
  table->pfnCanAccessPeer = emu_zeDeviceCanAccessPeer;
  table->pfnGetStatus = emu_zeDeviceGetStatus;
  table->pfnGetComputeProperties = emu_zeDeviceGetComputeProperties;
  table->pfnGetCacheProperties = emu_zeDeviceGetCacheProperties;
  table->pfnPciGetPropertiesExt = emu_zeDevicePciGetPropertiesExt;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetContextProcAddrTable(ze_api_version_t version,
                                                              ze_context_dditable_t* table) {
  if (ze_result_t r = check_table(version, table); r != ZE_RESULT_SUCCESS) return r;
  table->pfnCreate = emu_zeContextCreate;
  table->pfnDestroy = emu_zeContextDestroy;
  table->pfnGetStatus = emu_zeContextGetStatus;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL
zeGetCommandListProcAddrTable(ze_api_version_t version, ze_command_list_dditable_t* table) {
  if (ze_result_t r = check_table(version, table); r != ZE_RESULT_SUCCESS) return r;
  table->pfnCreateImmediate = emu_zeCommandListCreateImmediate;
  table->pfnDestroy = emu_zeCommandListDestroy;
  table->pfnAppendMemoryCopy = emu_zeCommandListAppendMemoryCopy;
  table->pfnAppendMemoryFill = emu_zeCommandListAppendMemoryFill;
  table->pfnAppendBarrier = emu_zeCommandListAppendBarrier;
  table->pfnAppendWaitOnEvents = emu_zeCommandListAppendWaitOnEvents;
  table->pfnAppendLaunchKernel = emu_zeCommandListAppendLaunchKernel;
  table->pfnCreate = emu_zeCommandListCreate;
  table->pfnClose = emu_zeCommandListClose;
  table->pfnAppendEventReset = emu_zeCommandListAppendEventReset;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL
zeGetCommandQueueProcAddrTable(ze_api_version_t version, ze_command_queue_dditable_t* table) {
  if (ze_result_t r = check_table(version, table); r != ZE_RESULT_SUCCESS) return r;
  table->pfnCreate = emu_zeCommandQueueCreate;
  table->pfnDestroy = emu_zeCommandQueueDestroy;
  table->pfnExecuteCommandLists = emu_zeCommandQueueExecuteCommandLists;
  table->pfnSynchronize = emu_zeCommandQueueSynchronize;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetModuleProcAddrTable(ze_api_version_t version,
                                                             ze_module_dditable_t* table) {
  if (ze_result_t r = check_table(version, table); r != ZE_RESULT_SUCCESS) return r;
  table->pfnCreate = emu_zeModuleCreate;
  table->pfnDestroy = emu_zeModuleDestroy;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetKernelProcAddrTable(ze_api_version_t version,
                                                             ze_kernel_dditable_t* table) {
  if (ze_result_t r = check_table(version, table); r != ZE_RESULT_SUCCESS) return r;
  table->pfnCreate = emu_zeKernelCreate;
  table->pfnDestroy = emu_zeKernelDestroy;
  table->pfnSetGroupSize = emu_zeKernelSetGroupSize;
  table->pfnSetArgumentValue = emu_zeKernelSetArgumentValue;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventPoolProcAddrTable(ze_api_version_t version,
                                                                ze_event_pool_dditable_t* table) {
  if (ze_result_t r = check_table(version, table); r != ZE_RESULT_SUCCESS) return r;
  table->pfnCreate = emu_zeEventPoolCreate;
  table->pfnDestroy = emu_zeEventPoolDestroy;
  table->pfnGetIpcHandle = emu_zeEventPoolGetIpcHandle;
  table->pfnOpenIpcHandle = emu_zeEventPoolOpenIpcHandle;
  table->pfnCloseIpcHandle = emu_zeEventPoolCloseIpcHandle;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventProcAddrTable(ze_api_version_t version,
                                                            ze_event_dditable_t* table) {
  if (ze_result_t r = check_table(version, table); r != ZE_RESULT_SUCCESS) return r;
  table->pfnCreate = emu_zeEventCreate;
  table->pfnDestroy = emu_zeEventDestroy;
  table->pfnHostSignal = emu_zeEventHostSignal;
  table->pfnHostSynchronize = emu_zeEventHostSynchronize;
  table->pfnQueryStatus = emu_zeEventQueryStatus;
  table->pfnHostReset = emu_zeEventHostReset;
  table->pfnQueryKernelTimestamp = emu_zeEventQueryKernelTimestamp;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetMemProcAddrTable(ze_api_version_t version,
                                                          ze_mem_dditable_t* table) {
  if (ze_result_t r = check_table(version, table); r != ZE_RESULT_SUCCESS) return r;
  table->pfnAllocHost = emu_zeMemAllocHost;
  table->pfnAllocDevice = emu_zeMemAllocDevice;
  table->pfnFree = emu_zeMemFree;
  table->pfnGetAllocProperties = emu_zeMemGetAllocProperties;
  table->pfnGetAddressRange = emu_zeMemGetAddressRange;
  table->pfnGetIpcHandle = emu_zeMemGetIpcHandle;
  table->pfnOpenIpcHandle = emu_zeMemOpenIpcHandle;
  table->pfnCloseIpcHandle = emu_zeMemCloseIpcHandle;
  return ZE_RESULT_SUCCESS;
}

// Tables anydev does not use: exported because the loader requires them,
// left empty.
#define ANYDEV_LZ_EMPTY_TABLE(getter, type)                                           \
  ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version, type* table) { \
    return check_table(version, table);                                               \
  }
ANYDEV_LZ_EMPTY_TABLE(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zeGetImageProcAddrTable, ze_image_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zeGetFenceProcAddrTable, ze_fence_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetDeviceProcAddrTable, zet_device_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetContextProcAddrTable, zet_context_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetModuleProcAddrTable, zet_module_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetMetricProcAddrTable, zet_metric_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zetGetDebugProcAddrTable, zet_debug_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetDriverProcAddrTable, zes_driver_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetDeviceProcAddrTable, zes_device_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetPowerProcAddrTable, zes_power_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetEngineProcAddrTable, zes_engine_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetPsuProcAddrTable, zes_psu_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetFanProcAddrTable, zes_fan_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetLedProcAddrTable, zes_led_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetRasProcAddrTable, zes_ras_dditable_t)
ANYDEV_LZ_EMPTY_TABLE(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
#undef ANYDEV_LZ_EMPTY_TABLE

}  // extern "C"
