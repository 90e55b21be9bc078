// SPDX-License-Identifier: Apache-2.0
// Modules and launches: hipModuleLoadData takes an AMD GPU code object
// (core_images.h), refuses one built for another processor than the
// device's (ANYDEV_HIP_EMULATOR_ARCH), and keeps its kernels (name and
// explicit argument sizes) for the device current at the load;
// hipModuleGetFunction finds a kernel by name; hipModuleLaunchKernel
// performs a kernel the emulator knows by name (core_kernels.h: anydev's
// fill kernel) in stream order, on a stream of the module's device. And
// the device properties, of which the emulator fills name, totalGlobalMem,
// multiProcessorCount and gcnArchName (exported as HIP 5.2's
// hipGetDeviceProperties or ROCm 7's hipGetDevicePropertiesR0000:
// variant_5.cpp, variant_7.cpp).
//
// Settings: ANYDEV_HIP_EMULATOR_ARCH, the device's gcnArchName (default
// "gfx90a:sramecc+:xnack-"); ANYDEV_HIP_EMULATOR_NO_MODULES=1:
// hipModuleLoadData answers hipErrorNotSupported (not misuse), as a runtime
// that cannot load code objects.
//
// Modules live in a registry under one mutex, never unloaded (the emulator
// exports no hipModuleUnload). Thread-safe.
#include <hip/hip_runtime_api.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core_config.h"
#include "core_images.h"
#include "core_kernels.h"
#include "hip_face.h"

namespace hip = anydev_emu::hip;
namespace core = anydev_emu::core;
using hip::Call;

namespace {

struct Function {
  core::Context* context = nullptr;  // the module's device
  core::KernelEntry entry;
};

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<std::vector<std::unique_ptr<Function>>>> modules;
  std::unordered_map<const void*, Function*> functions;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: calls may come during exit
  return *r;
}

const std::string& device_arch() {
  static const std::string arch = [] {
    const std::vector<std::string> list = core::read_setting_list("ARCH");
    return list.empty() ? std::string("gfx90a:sramecc+:xnack-") : list.front();
  }();
  return arch;
}

bool no_modules() {
  static const bool refused = core::read_setting("NO_MODULES", 0, 0, 1) != 0;
  return refused;
}

}  // namespace

namespace anydev_emu::hip {

hipError_t device_properties(void* out, int ordinal) {
  core::Device* device = nullptr;
  if (const hipError_t e = device_of(ordinal, &device); e != hipSuccess) return e;
  if (out == nullptr) {
    core::report_misuse("hipGetDeviceProperties: null prop");
    return hipErrorInvalidValue;
  }
  hipDeviceProp_t props{};
  std::strncpy(props.name, "anydev HIP emulator", sizeof props.name - 1);
  props.totalGlobalMem = core::get_config().memory_bytes;
  props.multiProcessorCount = 1;
  props.warpSize = 64;
  props.maxThreadsPerBlock = 1024;
  std::strncpy(props.gcnArchName, device_arch().c_str(), sizeof props.gcnArchName - 1);
  std::memcpy(out, &props, sizeof props);
  return hipSuccess;
}

hipError_t function_entry(hipFunction_t function, const char* api, core::KernelEntry* entry,
                          core::Context** context) {
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  const auto it = reg.functions.find(function);
  if (it == reg.functions.end()) {
    core::report_misuse(std::string(api) + ": not a function of a loaded module");
    return hipErrorInvalidResourceHandle;
  }
  *entry = it->second->entry;
  *context = it->second->context;
  return hipSuccess;
}

}  // namespace anydev_emu::hip

extern "C" {

hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
  hip::count(Call::hipModuleLoadData);
  core::Context* context = nullptr;
  if (const hipError_t e = hip::current(&context); e != hipSuccess) return e;
  if (module == nullptr || image == nullptr) {
    core::report_misuse("hipModuleLoadData: null module or image");
    return hipErrorInvalidValue;
  }
  if (no_modules()) return hipErrorNotSupported;
  std::string processor;
  std::vector<core::KernelEntry> entries;
  if (core::parse_amdgpu_code_object("hipModuleLoadData", image, &processor, &entries) !=
      core::Status::success) {
    return hipErrorInvalidImage;
  }
  const std::string arch = device_arch().substr(0, device_arch().find(':'));
  if (processor != arch) {
    core::report_misuse("hipModuleLoadData: a code object for " + processor + " on a " + arch +
                        " device");
    return hipErrorNoBinaryForGpu;
  }
  auto functions = std::make_unique<std::vector<std::unique_ptr<Function>>>();
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  for (core::KernelEntry& entry : entries) {
    auto f = std::make_unique<Function>();
    f->context = context;
    f->entry = std::move(entry);
    reg.functions[f.get()] = f.get();
    functions->push_back(std::move(f));
  }
  *module = reinterpret_cast<hipModule_t>(functions.get());
  reg.modules.push_back(std::move(functions));
  return hipSuccess;
}

hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* name) {
  hip::count(Call::hipModuleGetFunction);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (function == nullptr || name == nullptr) {
    core::report_misuse("hipModuleGetFunction: null function or name");
    return hipErrorInvalidValue;
  }
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  for (const auto& m : reg.modules) {
    if (reinterpret_cast<hipModule_t>(m.get()) != module) continue;
    for (const std::unique_ptr<Function>& f : *m) {
      if (f->entry.name == name) {
        *function = reinterpret_cast<hipFunction_t>(f.get());
        return hipSuccess;
      }
    }
    return hipErrorNotFound;
  }
  core::report_misuse("hipModuleGetFunction: not a loaded module");
  return hipErrorInvalidResourceHandle;
}

hipError_t hipModuleLaunchKernel(hipFunction_t function, unsigned grid_x, unsigned grid_y,
                                 unsigned grid_z, unsigned block_x, unsigned block_y,
                                 unsigned block_z, unsigned shared_bytes, hipStream_t stream,
                                 void** params, void** extra) {
  hip::count(Call::hipModuleLaunchKernel);
  const char* api = "hipModuleLaunchKernel";
  core::StreamRef s;
  if (const hipError_t e = hip::stream_of(stream, api, &s); e != hipSuccess) return e;
  const std::uint64_t block = std::uint64_t{block_x} * block_y * block_z;
  const std::uint64_t grid = std::uint64_t{grid_x} * grid_y * grid_z;
  if (block == 0 || grid == 0 || block > 1024 || shared_bytes != 0 || extra != nullptr) {
    core::report_misuse(std::string(api) + ": an empty grid or block, more than 1024 threads " +
                        "a block, shared memory or `extra` (the emulator takes kernelParams)");
    return hipErrorInvalidValue;
  }
  core::KernelEntry entry;
  core::Context* context = nullptr;
  if (const hipError_t e = hip::function_entry(function, api, &entry, &context); e != hipSuccess) {
    return e;
  }
  if (context != s->context()) {
    core::report_misuse(std::string(api) + ": the module was loaded for another device");
    return hipErrorInvalidDevice;
  }
  return hip::to_hip(core::enqueue_kernel(api, s, entry, params, grid * block));
}

}  // extern "C"
