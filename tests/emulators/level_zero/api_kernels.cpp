// SPDX-License-Identifier: Apache-2.0
// Modules and kernels of the emulated driver: zeModuleCreate takes SPIR-V
// (ZE_MODULE_FORMAT_IL_SPIRV only) and keeps its kernel entry points
// (core_images.h) for one context and device; zeKernelCreate makes a kernel
// of one of them, whose group size and argument values zeKernelSetGroupSize
// and zeKernelSetArgumentValue set; zeCommandListAppendLaunchKernel
// (api_lists.cpp) performs a kernel the emulator knows by name
// (core_kernels.h: anydev's fill kernel).
//
// ANYDEV_LEVEL_ZERO_EMULATOR_NO_MODULES=1: zeModuleCreate answers
// ZE_RESULT_ERROR_MODULE_BUILD_FAILURE (not misuse), as a driver whose
// compiler refuses the module.
//
// Modules and kernels live in one registry under its mutex until destroyed;
// a module with live kernels cannot be. Thread-safe.
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core_config.h"
#include "core_images.h"
#include "emu_lz.h"
#include "emu_lz_api.h"

namespace anydev_lz_emu {
namespace {

struct Module {
  Context* context = nullptr;
  int device = 0;
  std::vector<core::KernelEntry> entries;
  int kernels = 0;  // live kernels made from it
};

struct Registry {
  std::mutex mutex;
  std::map<const void*, std::unique_ptr<Module>> modules;
  std::map<const void*, std::pair<KernelRef, Module*>> kernels;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: calls may come during exit
  return *r;
}

bool no_modules() {
  static const bool refused = core::read_setting("NO_MODULES", 0, 0, 1) != 0;
  return refused;
}

}  // namespace

KernelRef find_kernel(ze_kernel_handle_t handle) {
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  const auto it = reg.kernels.find(handle);
  return it == reg.kernels.end() ? nullptr : it->second.first;
}

ze_result_t ZE_APICALL emu_zeModuleCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                          const ze_module_desc_t* desc,
                                          ze_module_handle_t* phModule,
                                          ze_module_build_log_handle_t* phBuildLog) {
  count_call("zeModuleCreate");
  const char* api = "zeModuleCreate";
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  Context* context = find_context(hContext);
  core::Device* device = find_device(hDevice);
  if (context == nullptr || device == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeModuleCreate: unknown context or device");
  }
  if (desc == nullptr || phModule == nullptr || desc->pInputModule == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeModuleCreate: null desc, input or out");
  }
  if (desc->stype != ZE_STRUCTURE_TYPE_MODULE_DESC || desc->format != ZE_MODULE_FORMAT_IL_SPIRV ||
      phBuildLog != nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeModuleCreate: wrong stype, a format other than SPIR-V, or a build log "
                  "(not emulated)");
  }
  if (no_modules()) return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  auto module = std::make_unique<Module>();
  if (core::parse_spirv_entries(api, desc->pInputModule, desc->inputSize, &module->entries) !=
      core::Status::success) {
    return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
  }
  module->context = context;
  module->device = device->index;
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  *phModule = reinterpret_cast<ze_module_handle_t>(module.get());
  reg.modules[module.get()] = std::move(module);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeModuleDestroy(ze_module_handle_t hModule) {
  count_call("zeModuleDestroy");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  const auto it = reg.modules.find(hModule);
  if (it == reg.modules.end()) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeModuleDestroy: unknown module");
  }
  if (it->second->kernels != 0) {
    return misuse(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                  "zeModuleDestroy: the module still has live kernels");
  }
  reg.modules.erase(it);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeKernelCreate(ze_module_handle_t hModule, const ze_kernel_desc_t* desc,
                                          ze_kernel_handle_t* phKernel) {
  count_call("zeKernelCreate");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (desc == nullptr || phKernel == nullptr || desc->pKernelName == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeKernelCreate: null desc, name or out");
  }
  if (desc->stype != ZE_STRUCTURE_TYPE_KERNEL_DESC) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeKernelCreate: wrong stype");
  }
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  const auto it = reg.modules.find(hModule);
  if (it == reg.modules.end()) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeKernelCreate: unknown module");
  }
  Module& module = *it->second;
  for (const core::KernelEntry& entry : module.entries) {
    if (entry.name != desc->pKernelName) continue;
    auto kernel = std::make_shared<Kernel>();
    kernel->context = module.context;
    kernel->device = module.device;
    kernel->entry = entry;
    kernel->args.resize(entry.param_sizes.size());
    *phKernel = reinterpret_cast<ze_kernel_handle_t>(kernel.get());
    reg.kernels[kernel.get()] = {kernel, &module};
    ++module.kernels;
    return ZE_RESULT_SUCCESS;
  }
  return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
}

ze_result_t ZE_APICALL emu_zeKernelDestroy(ze_kernel_handle_t hKernel) {
  count_call("zeKernelDestroy");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  const auto it = reg.kernels.find(hKernel);
  if (it == reg.kernels.end()) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeKernelDestroy: unknown kernel");
  }
  --it->second.second->kernels;
  reg.kernels.erase(it);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeKernelSetGroupSize(ze_kernel_handle_t hKernel, uint32_t groupSizeX,
                                                uint32_t groupSizeY, uint32_t groupSizeZ) {
  count_call("zeKernelSetGroupSize");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  const KernelRef kernel = find_kernel(hKernel);
  if (kernel == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeKernelSetGroupSize: unknown kernel");
  }
  const std::uint64_t size = std::uint64_t{groupSizeX} * groupSizeY * groupSizeZ;
  if (size == 0 || size > 1024) {
    return misuse(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION,
                  "zeKernelSetGroupSize: " + std::to_string(size) +
                      " work-items a group (1 to maxTotalGroupSize 1024)");
  }
  const std::lock_guard<std::mutex> lock(kernel->mutex);
  kernel->group_size = static_cast<std::uint32_t>(size);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeKernelSetArgumentValue(ze_kernel_handle_t hKernel, uint32_t argIndex,
                                                    size_t argSize, const void* pArgValue) {
  count_call("zeKernelSetArgumentValue");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  const KernelRef kernel = find_kernel(hKernel);
  if (kernel == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeKernelSetArgumentValue: unknown kernel");
  }
  if (argIndex >= kernel->entry.param_sizes.size()) {
    return misuse(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
                  "zeKernelSetArgumentValue: argument " + std::to_string(argIndex) + " of " +
                      kernel->entry.name + ", which takes " +
                      std::to_string(kernel->entry.param_sizes.size()));
  }
  if (argSize != kernel->entry.param_sizes[argIndex] || pArgValue == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
                  "zeKernelSetArgumentValue: " + std::to_string(argSize) + " bytes for argument " +
                      std::to_string(argIndex) + " of " + kernel->entry.name + " (" +
                      std::to_string(kernel->entry.param_sizes[argIndex]) +
                      " bytes), or a null value");
  }
  const auto* bytes = static_cast<const unsigned char*>(pArgValue);
  const std::lock_guard<std::mutex> lock(kernel->mutex);
  kernel->args[argIndex].assign(bytes, bytes + argSize);
  return ZE_RESULT_SUCCESS;
}

}  // namespace anydev_lz_emu
