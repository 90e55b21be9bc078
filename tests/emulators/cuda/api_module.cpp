// SPDX-License-Identifier: Apache-2.0
// Modules and launches: cuModuleLoadData takes a PTX text and keeps its
// .entry declarations (name and parameter sizes), in the current context;
// cuModuleGetFunction finds an entry by name; cuLaunchKernel performs a
// kernel the emulator knows by name (core_kernels.h: anydev's fill kernel)
// in stream order, after checking the launch against the entry.
//
// Modules live in a registry under one mutex until cuModuleUnload; a
// function handle is valid while its module is. Thread-safe.
#include <cuda.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core_config.h"
#include "core_kernels.h"
#include "emu_config.h"
#include "emu_state.h"

namespace core = anydev_emu::core;

namespace {

struct Module;

struct Function {
  Module* module = nullptr;
  core::KernelEntry entry;
};

struct Module {
  anydev_emu::Context* context = nullptr;
  std::vector<std::unique_ptr<Function>> functions;  // one per .entry
};

struct Registry {
  std::mutex mutex;
  std::unordered_map<Module*, std::unique_ptr<Module>> modules;
  std::unordered_map<Function*, Module*> functions;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: calls may come during exit
  return *r;
}

CUmodule to_handle(Module* m) { return reinterpret_cast<CUmodule>(m); }
CUfunction to_handle(Function* f) { return reinterpret_cast<CUfunction>(f); }

}  // namespace

namespace anydev_emu {

CUresult check_launch_shape(const char* api, std::uint64_t grid, std::uint64_t block,
                            unsigned shared_bytes, void** extra) {
  if (block == 0 || grid == 0 || block > 1024 || shared_bytes != 0 || extra != nullptr) {
    core::report_misuse(std::string(api) + ": an empty grid or block, more than 1024 threads " +
                        "a block, shared memory or `extra` (the emulator takes kernelParams)");
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult function_entry(CUfunction function, const char* api, core::KernelEntry* entry,
                        Context** context) {
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  auto* f = reinterpret_cast<Function*>(function);
  if (reg.functions.find(f) == reg.functions.end()) {
    core::report_misuse(std::string(api) + ": not a function of a loaded module");
    return CUDA_ERROR_INVALID_HANDLE;
  }
  *entry = f->entry;
  *context = f->module->context;
  return CUDA_SUCCESS;
}

}  // namespace anydev_emu

extern "C" {

CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  anydev_emu::Context* context = nullptr;
  if (const CUresult r = anydev_emu::require_current("cuModuleLoadData", &context);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (module == nullptr || image == nullptr) {
    core::report_misuse("cuModuleLoadData: null module or image");
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Told to: as a driver older than the PTX's ISA answers (not misuse).
  if (anydev_emu::cuda_config().no_modules) return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  const std::string text(static_cast<const char*>(image));
  std::vector<core::KernelEntry> entries;
  if (core::parse_ptx_entries("cuModuleLoadData", text, &entries) != core::Status::success) {
    return CUDA_ERROR_INVALID_IMAGE;
  }
  auto m = std::make_unique<Module>();
  m->context = context;
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  for (core::KernelEntry& entry : entries) {
    auto f = std::make_unique<Function>();
    f->module = m.get();
    f->entry = std::move(entry);
    reg.functions[f.get()] = m.get();
    m->functions.push_back(std::move(f));
  }
  *module = to_handle(m.get());
  reg.modules[m.get()] = std::move(m);
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (function == nullptr || name == nullptr) {
    core::report_misuse("cuModuleGetFunction: null function or name");
    return CUDA_ERROR_INVALID_VALUE;
  }
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  const auto it = reg.modules.find(reinterpret_cast<Module*>(module));
  if (it == reg.modules.end()) {
    core::report_misuse("cuModuleGetFunction: not a loaded module");
    return CUDA_ERROR_INVALID_HANDLE;
  }
  for (const std::unique_ptr<Function>& f : it->second->functions) {
    if (f->entry.name == name) {
      *function = to_handle(f.get());
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuModuleUnload(CUmodule module) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  const auto it = reg.modules.find(reinterpret_cast<Module*>(module));
  if (it == reg.modules.end()) {
    core::report_misuse("cuModuleUnload: not a loaded module");
    return CUDA_ERROR_INVALID_HANDLE;
  }
  for (const std::unique_ptr<Function>& f : it->second->functions) reg.functions.erase(f.get());
  reg.modules.erase(it);
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                        unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                        CUstream stream, void** params, void** extra) {
  const char* api = "cuLaunchKernel";
  core::StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, api, &s); r != CUDA_SUCCESS) return r;
  const std::uint64_t block = std::uint64_t{block_x} * block_y * block_z;
  const std::uint64_t grid = std::uint64_t{grid_x} * grid_y * grid_z;
  if (const CUresult r = anydev_emu::check_launch_shape(api, grid, block, shared_bytes, extra);
      r != CUDA_SUCCESS) {
    return r;
  }
  core::KernelEntry entry;
  anydev_emu::Context* context = nullptr;
  if (const CUresult r = anydev_emu::function_entry(function, api, &entry, &context);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (context != s->context()) {
    core::report_misuse(std::string(api) +
                        ": the function's module is loaded in another "
                        "context than the stream's");
    return CUDA_ERROR_INVALID_HANDLE;
  }
  return anydev_emu::cu(core::enqueue_kernel(api, s, entry, params, grid * block));
}

}  // extern "C"
