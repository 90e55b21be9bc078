// SPDX-License-Identifier: Apache-2.0
// anydev's wide fill kernel on HIP: the code objects of
// kernels/fill_pattern.hip (one per architecture clang-15 builds,
// kernels/hip_fill_code_objects.cpp), the one for the device's gcnArchName
// loaded once per device with hipModuleLoadData and launched with one
// hipModuleLaunchKernel per fill (gpu_fill_launch.h).
//
// When the runtime lacks the entry points, the device's architecture has no
// code object here, the runtime refuses the module, or
// ANYDEV_HIP_FILL_KERNEL=0 turns it off, the log says why once per device
// and fills of an 8- or 16-byte period run the fill plan (gpu_fill_plan.h).
//
// In graphs, a wide fill is a kernel node of the same function. HIP releases
// whose hipGraphAddKernelNode takes only kernels a host program registered
// refuse a module's function (hipErrorInvalidDeviceFunction): the graph is
// then declined, and the core replays it with a launch per wide fill.
#include <cstddef>
#include <cstring>
#include <string>

#include "hip_api.h"
#include "hip_fill_code_objects.h"

namespace anydev::hip {
namespace {

using kit::cat;

// Larger than hipDeviceProp_t of any release (HIP 5: under 1 KiB; ROCm 6's
// R0600: under 2 KiB), so that the runtime's write stays inside whichever
// layout it has.
struct alignas(8) PropertiesBuffer {
  unsigned char bytes[4096];
};
static_assert(sizeof(hipDeviceProp_t) <= sizeof(PropertiesBuffer));

// The processor of the device's gcnArchName ("gfx90a" of
// "gfx90a:sramecc+:xnack-"): the code objects are built for any xnack and
// sramecc mode. Empty, with *why set, when the runtime does not say.
std::string device_arch(int device, std::string* why) {
  const HipRuntime& rt = gpu::driver<HipApi>();
  if (rt.GetDeviceProperties == nullptr) {
    *why = "the runtime lacks hipGetDeviceProperties";
    return {};
  }
  PropertiesBuffer props{};
  if (const hipError_t r = rt.GetDeviceProperties(&props, device); r != hipSuccess) {
    *why = cat("hipGetDeviceProperties failed: ", HipApi::describe(r));
    return {};
  }
  // The field's place in HIP 5's layout, kept by later releases' R0000 entry.
  const char* name =
      reinterpret_cast<const char*>(props.bytes + offsetof(hipDeviceProp_t, gcnArchName));
  const std::size_t length = strnlen(name, sizeof(hipDeviceProp_t::gcnArchName));
  const std::string arch(name, length);
  if (length == sizeof(hipDeviceProp_t::gcnArchName) || arch.rfind("gfx", 0) != 0) {
    *why = "the runtime does not name the device's architecture (gcnArchName)";
    return {};
  }
  return arch.substr(0, arch.find(':'));
}

// The code object for `arch`, or null.
const FillCodeObject* code_object_for(const std::string& arch) {
  for (const FillCodeObject& object : fill_code_objects()) {
    if (arch == object.arch) return &object;
  }
  return nullptr;
}

// The architectures with a code object, for the log: "gfx900, gfx906, ...".
std::string known_archs() {
  std::string text;
  for (const FillCodeObject& object : fill_code_objects()) {
    text += cat(text.empty() ? "" : ", ", object.arch);
  }
  return text;
}

// Loads the module for `device`; on failure says why in *why and leaves
// k->function null. *refused: the runtime was asked and said no (worth a
// warning).
void load_module(int device, HipFillKernel* k, std::string* why, bool* refused) {
  const HipRuntime& rt = gpu::driver<HipApi>();
  if (rt.ModuleLoadData == nullptr || rt.ModuleGetFunction == nullptr ||
      rt.LaunchKernel == nullptr) {
    *why = "the runtime lacks hipModuleLoadData, hipModuleGetFunction or hipModuleLaunchKernel";
    return;
  }
  const std::string arch = device_arch(device, why);
  if (arch.empty()) return;
  const FillCodeObject* object = code_object_for(arch);
  if (object == nullptr) {
    *why = cat("no code object for ", arch, "; the plugin has ", known_archs());
    return;
  }
  *refused = true;
  // A module loads for the current device.
  ScopedDevice scope;
  if (scope.enter(device, "fill") != ANYDEV_SUCCESS) {
    *why = "the device could not be made current";
    return;
  }
  hipModule_t module = nullptr;
  hipError_t r = rt.ModuleLoadData(&module, object->bytes);
  if (r != hipSuccess) {
    *why = cat("hipModuleLoadData of the ", arch, " code object failed: ", HipApi::describe(r));
    return;
  }
  hipFunction_t function = nullptr;
  r = rt.ModuleGetFunction(&function, module, gpu::kWideFillKernel);
  if (r != hipSuccess) {
    *why =
        cat("hipModuleGetFunction(\"", gpu::kWideFillKernel, "\") failed: ", HipApi::describe(r));
    return;  // the module stays loaded, as the device does
  }
  k->module = module;
  k->function = function;
}

}  // namespace

gpu::KernelFill HipApi::fill_kernel(const gpu::Stream<HipApi>& stream,
                                    const gpu::WideFillArgs& args, hipError_t* r,
                                    const char** call) {
  return gpu::launch_fill_kernel<HipApi>(stream, args,
                                         gpu::device_state<HipApi>(stream.device).extra.fill_kernel,
                                         load_module, r, call);
}

gpu::KernelFill HipApi::graph_add_fill_kernel(hipGraphNode_t* out, hipGraph_t graph,
                                              const hipGraphNode_t* deps, std::size_t count,
                                              int device, const gpu::WideFillArgs& args,
                                              hipError_t* r) {
  HipDevice& state = gpu::device_state<HipApi>(device).extra;
  const HipRuntime& rt = gpu::driver<HipApi>();
  if (!gpu::fill_kernel_loaded<HipApi>(device, state.fill_kernel, load_module) ||
      rt.GraphAddKernelNode == nullptr ||
      state.graph_kernel_refused.load(std::memory_order_relaxed)) {
    return gpu::KernelFill::kUnavailable;
  }
  gpu::WideFillLaunch launch(args, state.fill_kernel.units);  // the runtime copies the values
  hipKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(state.fill_kernel.function);
  p.gridDim.x = launch.blocks;
  p.gridDim.y = 1;
  p.gridDim.z = 1;
  p.blockDim.x = gpu::kWideFillThreads;
  p.blockDim.y = 1;
  p.blockDim.z = 1;
  p.kernelParams = launch.params;
  *r = rt.GraphAddKernelNode(out, graph, deps, count, &p);
  if (*r == hipErrorInvalidDeviceFunction) {
    if (!state.graph_kernel_refused.exchange(true)) {
      gpu::log<HipApi>(
          ANYDEV_LOG_INFO,
          cat("hip device ", device,
              ": the runtime takes no module kernel in a graph (hipGraphAddKernelNode: ",
              HipApi::describe(*r), "); graphs with 8- or 16-byte fills are replayed by anydev"));
    }
    return gpu::KernelFill::kUnavailable;
  }
  return *r == hipSuccess ? gpu::KernelFill::kLaunched : gpu::KernelFill::kFailed;
}

}  // namespace anydev::hip
