// SPDX-License-Identifier: Apache-2.0
// anydev's wide fill kernel on CUDA: the PTX of kernels/fill_pattern.cu,
// embedded at build time (cuda_fill_ptx.h, generated from the committed
// kernels/fill_pattern.ptx), loaded once per device's primary context with
// cuModuleLoadData and launched with one cuLaunchKernel per fill.
//
// When the driver lacks the entry points, refuses the module, or
// ANYDEV_CUDA_FILL_KERNEL=0 turns it off, the log says why once per device
// and fills of an 8- or 16-byte period run the fill plan (gpu_fill_plan.h).
#include <cstring>
#include <string>

#include "cuda_api.h"
#include "cuda_fill_ptx.h"

namespace anydev::cuda {
namespace {

constexpr const char* kSwitch = "ANYDEV_CUDA_FILL_KERNEL";

// Why the kernel cannot be used before asking the driver, or empty.
std::string unavailable_before_loading(const CudaDriver& drv) {
  if (const char* value = gpu::services<CudaApi>.get_env(kSwitch);
      value != nullptr && std::strcmp(value, "0") == 0) {
    return cat(kSwitch, "=0");
  }
  if (drv.ModuleLoadData == nullptr) return "the driver lacks cuModuleLoadData";
  if (drv.ModuleGetFunction == nullptr) return "the driver lacks cuModuleGetFunction";
  if (drv.LaunchKernel == nullptr) return "the driver lacks cuLaunchKernel";
  return {};
}

// Loads the module into the device's primary context; on failure says why
// in *why and leaves k->function null.
// *refused: the driver was asked and said no (worth a warning).
void load_module(int device, CudaFillKernel* k, std::string* why, bool* refused) {
  const CudaDriver& drv = driver();
  *why = unavailable_before_loading(drv);
  if (!why->empty()) return;
  *refused = true;
  ScopedContext scope;
  if (scope.enter(device, "fill") != ANYDEV_SUCCESS) {
    *why = "its primary context could not be made current";
    return;
  }
  CUmodule module = nullptr;
  CUresult r = drv.ModuleLoadData(&module, kFillPtx);
  if (r != CUDA_SUCCESS) {
    *why = cat("cuModuleLoadData failed: ", CudaApi::describe(r));
    return;
  }
  CUfunction function = nullptr;
  r = drv.ModuleGetFunction(&function, module, gpu::kWideFillKernel);
  if (r != CUDA_SUCCESS) {
    *why =
        cat("cuModuleGetFunction(\"", gpu::kWideFillKernel, "\") failed: ", CudaApi::describe(r));
    // The module stays loaded: the driver may lack cuModuleUnload, and a
    // context's modules go with it.
    return;
  }
  int units = 0;
  if (drv.DeviceGetAttribute(&units, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                             gpu::device_state<CudaApi>(device).device) != CUDA_SUCCESS ||
      units <= 0) {
    units = 1;
  }
  k->module = module;
  k->units = static_cast<unsigned>(units);
  k->function = function;
}

// The device's fill kernel, loaded at the first call; null when it cannot
// be used (said once in the log).
const CudaFillKernel* loaded_fill_kernel(int device) {
  CudaFillKernel& k = gpu::device_state<CudaApi>(device).extra.fill_kernel;
  std::call_once(k.once, [device, &k] {
    try {  // nothing may leave call_once by an exception (GCC bug 66146)
      std::string why;
      bool refused = false;
      load_module(device, &k, &why, &refused);
      if (k.function == nullptr) {
        gpu::log<CudaApi>(refused ? ANYDEV_LOG_WARN : ANYDEV_LOG_INFO,
                          cat("cuda device ", device, ": anydev's fill kernel is not used (", why,
                              "); fills of 8- and 16-byte patterns use memsets and copies"));
      }
    } catch (...) {
      k.function = nullptr;  // out of memory: the plan fills
    }
  });
  return k.function != nullptr ? &k : nullptr;
}

}  // namespace

gpu::KernelFill CudaApi::fill_kernel(const gpu::Stream<CudaApi>& stream,
                                     const gpu::WideFillArgs& args, CUresult* r,
                                     const char** call) {
  const CudaFillKernel* kernel = loaded_fill_kernel(stream.device);
  if (kernel == nullptr) return gpu::KernelFill::kUnavailable;
  const CudaFillKernel& k = *kernel;

  gpu::WideFillArgs a = args;  // the driver takes pointers to non-const
  void* params[] = {&a.dst, &a.bytes, &a.lo, &a.hi};
  const unsigned blocks = gpu::wide_fill_blocks(static_cast<std::size_t>(a.bytes), k.units);
  *call = "cuLaunchKernel";
  *r = gpu::call_on_stream<CudaApi>(stream.device, names_its_device(stream.native), "fill", [&] {
    return driver().LaunchKernel(k.function, blocks, 1, 1, gpu::kWideFillThreads, 1, 1, 0,
                                 stream.native, params, nullptr);
  });
  return *r == CUDA_SUCCESS ? gpu::KernelFill::kLaunched : gpu::KernelFill::kFailed;
}

gpu::KernelFill CudaApi::graph_add_fill_kernel(CUgraphNode* out, CUgraph graph,
                                               const CUgraphNode* deps, std::size_t count,
                                               int device, const gpu::WideFillArgs& args,
                                               CUresult* r) {
  const CudaFillKernel* k = loaded_fill_kernel(device);
  if (k == nullptr || driver().GraphAddKernelNode == nullptr) return gpu::KernelFill::kUnavailable;
  gpu::WideFillArgs a = args;  // the driver copies the values when the node is added
  void* params[] = {&a.dst, &a.bytes, &a.lo, &a.hi};
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = k->function;
  p.gridDimX = gpu::wide_fill_blocks(static_cast<std::size_t>(a.bytes), k->units);
  p.gridDimY = 1;
  p.gridDimZ = 1;
  p.blockDimX = gpu::kWideFillThreads;
  p.blockDimY = 1;
  p.blockDimZ = 1;
  p.kernelParams = params;
  *r = driver().GraphAddKernelNode(out, graph, deps, count, &p);
  return *r == CUDA_SUCCESS ? gpu::KernelFill::kLaunched : gpu::KernelFill::kFailed;
}

}  // namespace anydev::cuda
