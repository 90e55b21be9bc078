// SPDX-License-Identifier: Apache-2.0
// The emulated driver's entry points (api_*.cpp), which ddi_tables.cpp puts
// into the DDI tables the loader asks for. Named emu_ze*, never ze*: the
// driver exports only the table getters, so nothing here can interpose on the
// loader's own ze* symbols. Thread-safe (emu_lz.h).
#ifndef ANYDEV_TESTS_EMULATORS_LEVEL_ZERO_EMU_LZ_API_H_
#define ANYDEV_TESTS_EMULATORS_LEVEL_ZERO_EMU_LZ_API_H_

#include <level_zero/ze_api.h>

namespace anydev_lz_emu {

ze_result_t ZE_APICALL emu_zeInit(ze_init_flags_t flags);
ze_result_t ZE_APICALL emu_zeDriverGet(uint32_t* pCount, ze_driver_handle_t* phDrivers);
ze_result_t ZE_APICALL emu_zeDriverGetApiVersion(ze_driver_handle_t hDriver,
                                                 ze_api_version_t* version);
ze_result_t ZE_APICALL emu_zeDriverGetProperties(ze_driver_handle_t hDriver,
                                                 ze_driver_properties_t* props);
ze_result_t ZE_APICALL emu_zeDriverGetIpcProperties(ze_driver_handle_t hDriver,
                                                    ze_driver_ipc_properties_t* props);
ze_result_t ZE_APICALL emu_zeDeviceGetComputeProperties(ze_device_handle_t hDevice,
                                                        ze_device_compute_properties_t* props);
ze_result_t ZE_APICALL emu_zeDeviceGetCacheProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                                      ze_device_cache_properties_t* props);
ze_result_t ZE_APICALL emu_zeDevicePciGetPropertiesExt(ze_device_handle_t hDevice,
                                                       ze_pci_ext_properties_t* props);
ze_result_t ZE_APICALL emu_zeDriverGetExtensionFunctionAddress(ze_driver_handle_t hDriver,
                                                               const char* name, void** out);
ze_result_t ZE_APICALL emu_zeDriverGetExtensionProperties(ze_driver_handle_t hDriver,
                                                          uint32_t* pCount,
                                                          ze_driver_extension_properties_t* props);
ze_result_t ZE_APICALL emu_zeDeviceGet(ze_driver_handle_t hDriver, uint32_t* pCount,
                                       ze_device_handle_t* phDevices);
ze_result_t ZE_APICALL emu_zeDeviceGetSubDevices(ze_device_handle_t hDevice, uint32_t* pCount,
                                                 ze_device_handle_t* phSubdevices);
ze_result_t ZE_APICALL emu_zeDeviceGetProperties(ze_device_handle_t hDevice,
                                                 ze_device_properties_t* props);
ze_result_t ZE_APICALL emu_zeDeviceGetMemoryProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                                       ze_device_memory_properties_t* props);
ze_result_t ZE_APICALL emu_zeDeviceGetCommandQueueGroupProperties(
    ze_device_handle_t hDevice, uint32_t* pCount, ze_command_queue_group_properties_t* props);
ze_result_t ZE_APICALL emu_zeDeviceCanAccessPeer(ze_device_handle_t hDevice,
                                                 ze_device_handle_t hPeerDevice, ze_bool_t* value);
ze_result_t ZE_APICALL emu_zeDeviceGetStatus(ze_device_handle_t hDevice);
ze_result_t ZE_APICALL emu_zeContextCreate(ze_driver_handle_t hDriver,
                                           const ze_context_desc_t* desc,
                                           ze_context_handle_t* phContext);
ze_result_t ZE_APICALL emu_zeContextDestroy(ze_context_handle_t hContext);
ze_result_t ZE_APICALL emu_zeContextGetStatus(ze_context_handle_t hContext);
ze_result_t ZE_APICALL emu_zeEventPoolCreate(ze_context_handle_t hContext,
                                             const ze_event_pool_desc_t* desc, uint32_t numDevices,
                                             ze_device_handle_t* phDevices,
                                             ze_event_pool_handle_t* phEventPool);
ze_result_t ZE_APICALL emu_zeEventPoolDestroy(ze_event_pool_handle_t hEventPool);
ze_result_t ZE_APICALL emu_zeEventCreate(ze_event_pool_handle_t hEventPool,
                                         const ze_event_desc_t* desc, ze_event_handle_t* phEvent);
ze_result_t ZE_APICALL emu_zeEventDestroy(ze_event_handle_t hEvent);
ze_result_t ZE_APICALL emu_zeEventHostSignal(ze_event_handle_t hEvent);
ze_result_t ZE_APICALL emu_zeEventHostSynchronize(ze_event_handle_t hEvent, uint64_t timeout);
ze_result_t ZE_APICALL emu_zeEventQueryStatus(ze_event_handle_t hEvent);
ze_result_t ZE_APICALL emu_zeEventHostReset(ze_event_handle_t hEvent);
ze_result_t ZE_APICALL emu_zeEventQueryKernelTimestamp(ze_event_handle_t hEvent,
                                                       ze_kernel_timestamp_result_t* dstptr);
ze_result_t ZE_APICALL emu_zeCommandListCreateImmediate(ze_context_handle_t hContext,
                                                        ze_device_handle_t hDevice,
                                                        const ze_command_queue_desc_t* desc,
                                                        ze_command_list_handle_t* phCommandList);
ze_result_t ZE_APICALL emu_zeCommandListDestroy(ze_command_list_handle_t hCommandList);
ze_result_t ZE_APICALL emu_zeCommandListCreate(ze_context_handle_t hContext,
                                               ze_device_handle_t hDevice,
                                               const ze_command_list_desc_t* desc,
                                               ze_command_list_handle_t* phCommandList);
ze_result_t ZE_APICALL emu_zeCommandListClose(ze_command_list_handle_t hCommandList);
ze_result_t ZE_APICALL emu_zeCommandListAppendEventReset(ze_command_list_handle_t hCommandList,
                                                         ze_event_handle_t hEvent);
ze_result_t ZE_APICALL emu_zeCommandQueueCreate(ze_context_handle_t hContext,
                                                ze_device_handle_t hDevice,
                                                const ze_command_queue_desc_t* desc,
                                                ze_command_queue_handle_t* phCommandQueue);
ze_result_t ZE_APICALL emu_zeCommandQueueDestroy(ze_command_queue_handle_t hCommandQueue);
ze_result_t ZE_APICALL emu_zeCommandQueueExecuteCommandLists(
    ze_command_queue_handle_t hCommandQueue, uint32_t numCommandLists,
    ze_command_list_handle_t* phCommandLists, ze_fence_handle_t hFence);
ze_result_t ZE_APICALL emu_zeCommandQueueSynchronize(ze_command_queue_handle_t hCommandQueue,
                                                     uint64_t timeout);
ze_result_t ZE_APICALL emu_zeCommandListAppendMemoryCopy(
    ze_command_list_handle_t hCommandList, void* dstptr, const void* srcptr, size_t size,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);
ze_result_t ZE_APICALL emu_zeCommandListAppendMemoryFill(ze_command_list_handle_t hCommandList,
                                                         void* ptr, const void* pattern,
                                                         size_t pattern_size, size_t size,
                                                         ze_event_handle_t hSignalEvent,
                                                         uint32_t numWaitEvents,
                                                         ze_event_handle_t* phWaitEvents);
ze_result_t ZE_APICALL emu_zeCommandListAppendBarrier(ze_command_list_handle_t hCommandList,
                                                      ze_event_handle_t hSignalEvent,
                                                      uint32_t numWaitEvents,
                                                      ze_event_handle_t* phWaitEvents);
ze_result_t ZE_APICALL emu_zeCommandListAppendWaitOnEvents(ze_command_list_handle_t hCommandList,
                                                           uint32_t numEvents,
                                                           ze_event_handle_t* phEvents);
ze_result_t ZE_APICALL emu_zeMemAllocHost(ze_context_handle_t hContext,
                                          const ze_host_mem_alloc_desc_t* desc, size_t size,
                                          size_t alignment, void** pptr);
ze_result_t ZE_APICALL emu_zeMemAllocDevice(ze_context_handle_t hContext,
                                            const ze_device_mem_alloc_desc_t* desc, size_t size,
                                            size_t alignment, ze_device_handle_t hDevice,
                                            void** pptr);
ze_result_t ZE_APICALL emu_zeMemFree(ze_context_handle_t hContext, void* ptr);
ze_result_t ZE_APICALL emu_zeMemGetAddressRange(ze_context_handle_t hContext, const void* ptr,
                                                void** pBase, size_t* pSize);
ze_result_t ZE_APICALL emu_zeMemGetAllocProperties(ze_context_handle_t hContext, const void* ptr,
                                                   ze_memory_allocation_properties_t* props,
                                                   ze_device_handle_t* phDevice);
ze_result_t ZE_APICALL emu_zeMemGetIpcHandle(ze_context_handle_t hContext, const void* ptr,
                                             ze_ipc_mem_handle_t* pIpcHandle);
ze_result_t ZE_APICALL emu_zeMemOpenIpcHandle(ze_context_handle_t hContext,
                                              ze_device_handle_t hDevice,
                                              ze_ipc_mem_handle_t handle,
                                              ze_ipc_memory_flags_t flags, void** pptr);
ze_result_t ZE_APICALL emu_zeMemCloseIpcHandle(ze_context_handle_t hContext, const void* ptr);
// Device memory over a memfd, for zeMemAllocDevice when IPC is enabled.
ze_result_t allocate_shareable_device(int device, std::size_t size, void** pptr);
ze_result_t ZE_APICALL emu_zeEventPoolGetIpcHandle(ze_event_pool_handle_t hEventPool,
                                                   ze_ipc_event_pool_handle_t* phIpc);
ze_result_t ZE_APICALL emu_zeEventPoolOpenIpcHandle(ze_context_handle_t hContext,
                                                    ze_ipc_event_pool_handle_t hIpc,
                                                    ze_event_pool_handle_t* phEventPool);
ze_result_t ZE_APICALL emu_zeEventPoolCloseIpcHandle(ze_event_pool_handle_t hEventPool);
ze_result_t ZE_APICALL emu_zeDriverGetExtensionFunctionAddress(ze_driver_handle_t hDriver,
                                                               const char* name,
                                                               void** ppFunctionAddress);
// Gives a pool created with ZE_EVENT_POOL_FLAG_IPC its shared states.
ze_result_t make_ipc_pool(EventPool& pool);

// Modules and kernels (api_kernels.cpp) and their launch (api_lists.cpp).
ze_result_t ZE_APICALL emu_zeModuleCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                          const ze_module_desc_t* desc,
                                          ze_module_handle_t* phModule,
                                          ze_module_build_log_handle_t* phBuildLog);
ze_result_t ZE_APICALL emu_zeModuleDestroy(ze_module_handle_t hModule);
ze_result_t ZE_APICALL emu_zeKernelCreate(ze_module_handle_t hModule, const ze_kernel_desc_t* desc,
                                          ze_kernel_handle_t* phKernel);
ze_result_t ZE_APICALL emu_zeKernelDestroy(ze_kernel_handle_t hKernel);
ze_result_t ZE_APICALL emu_zeKernelSetGroupSize(ze_kernel_handle_t hKernel, uint32_t groupSizeX,
                                                uint32_t groupSizeY, uint32_t groupSizeZ);
ze_result_t ZE_APICALL emu_zeKernelSetArgumentValue(ze_kernel_handle_t hKernel, uint32_t argIndex,
                                                    size_t argSize, const void* pArgValue);
ze_result_t ZE_APICALL emu_zeCommandListAppendLaunchKernel(ze_command_list_handle_t hCommandList,
                                                           ze_kernel_handle_t hKernel,
                                                           const ze_group_count_t* pLaunchFuncArgs,
                                                           ze_event_handle_t hSignalEvent,
                                                           uint32_t numWaitEvents,
                                                           ze_event_handle_t* phWaitEvents);

}  // namespace anydev_lz_emu

#endif  // ANYDEV_TESTS_EMULATORS_LEVEL_ZERO_EMU_LZ_API_H_
