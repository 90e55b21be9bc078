// SPDX-License-Identifier: Apache-2.0
// anydev's wide fill kernel on CUDA: the PTX of kernels/fill_pattern.cu,
// embedded at build time (cuda_fill_ptx.h, generated from the committed
// kernels/fill_pattern.ptx), loaded once per device's primary context with
// cuModuleLoadData and launched with one cuLaunchKernel per fill
// (gpu_fill_launch.h).
//
// When the driver lacks the entry points, refuses the module, or
// ANYDEV_CUDA_FILL_KERNEL=0 turns it off, the log says why once per device
// and fills of an 8- or 16-byte period run the fill plan (gpu_fill_plan.h).
#include <string>

#include "cuda_api.h"
#include "cuda_fill_ptx.h"

namespace anydev::cuda {
namespace {

// Loads the module into the device's primary context; on failure says why
// in *why and leaves k->function null.
// *refused: the driver was asked and said no (worth a warning).
void load_module(int device, CudaFillKernel* k, std::string* why, bool* refused) {
  const CudaDriver& drv = driver();
  if (drv.ModuleLoadData == nullptr) {
    *why = "the driver lacks cuModuleLoadData";
    return;
  }
  if (drv.ModuleGetFunction == nullptr) {
    *why = "the driver lacks cuModuleGetFunction";
    return;
  }
  if (drv.LaunchKernel == nullptr) {
    *why = "the driver lacks cuLaunchKernel";
    return;
  }
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
  k->module = module;
  k->function = function;
}

}  // namespace

gpu::KernelFill CudaApi::fill_kernel(const gpu::Stream<CudaApi>& stream,
                                     const gpu::WideFillArgs& args, CUresult* r,
                                     const char** call) {
  return gpu::launch_fill_kernel<CudaApi>(
      stream, args, gpu::device_state<CudaApi>(stream.device).extra.fill_kernel, load_module, r,
      call);
}

gpu::KernelFill CudaApi::graph_add_fill_kernel(CUgraphNode* out, CUgraph graph,
                                               const CUgraphNode* deps, std::size_t count,
                                               int device, const gpu::WideFillArgs& args,
                                               CUresult* r) {
  CudaFillKernel* k = &gpu::device_state<CudaApi>(device).extra.fill_kernel;
  if (!gpu::fill_kernel_loaded<CudaApi>(device, *k, load_module) ||
      driver().GraphAddKernelNode == nullptr) {
    return gpu::KernelFill::kUnavailable;
  }
  gpu::WideFillLaunch launch(args, k->units);  // the driver copies the values
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = k->function;
  p.gridDimX = launch.blocks;
  p.gridDimY = 1;
  p.gridDimZ = 1;
  p.blockDimX = gpu::kWideFillThreads;
  p.blockDimY = 1;
  p.blockDimZ = 1;
  p.kernelParams = launch.params;
  *r = driver().GraphAddKernelNode(out, graph, deps, count, &p);
  return *r == CUDA_SUCCESS ? gpu::KernelFill::kLaunched : gpu::KernelFill::kFailed;
}

}  // namespace anydev::cuda
