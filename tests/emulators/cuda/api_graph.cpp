// SPDX-License-Identifier: Apache-2.0
// Graphs (the core's core_graph.h) through CUDA's graph calls: cuGraphCreate,
// the memcpy (1-D only: one row of one slice, no arrays), memset, kernel
// (a function of a loaded module, as cuLaunchKernel takes it) and empty
// nodes, cuGraphInstantiateWithFlags, cuGraphLaunch, cuGraphExecDestroy and
// cuGraphDestroy, with the driver's CUDA_ERROR_INVALID_VALUE for bad
// parameters and handles. Thread-safe.
#include <cuda.h>

#include <cstdint>
#include <string>
#include <utility>

#include "core_config.h"
#include "core_graph.h"
#include "emu_state.h"

using anydev_emu::cu;
using anydev_emu::core::Access;
using anydev_emu::core::GraphNode;
namespace core = anydev_emu::core;

namespace {

const void* const* as_deps(const CUgraphNode* deps) {
  return reinterpret_cast<const void* const*>(deps);
}

CUresult add_node(const char* api, CUgraphNode* out, CUgraph graph, const CUgraphNode* deps,
                  size_t count, GraphNode node) {
  if (out == nullptr) {
    core::report_misuse(std::string(api) + ": null phGraphNode");
    return CUDA_ERROR_INVALID_VALUE;
  }
  void* made = nullptr;
  const CUresult r =
      cu(core::graph_add_node(api, graph, as_deps(deps), count, std::move(node), &made));
  if (r == CUDA_SUCCESS) *out = static_cast<CUgraphNode>(made);
  return r;
}

// One side of a 1-D copy: its address and the access its memory type allows.
CUresult copy_side(const char* api, CUmemorytype type, const void* host, CUdeviceptr device,
                   std::size_t x, std::uintptr_t* address, Access* access) {
  switch (type) {
    case CU_MEMORYTYPE_HOST:
      *address = reinterpret_cast<std::uintptr_t>(host) + x;
      *access = Access::kHost;
      return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE:
      *address = static_cast<std::uintptr_t>(device) + x;
      *access = Access::kDeviceOrPinned;
      return CUDA_SUCCESS;
    case CU_MEMORYTYPE_UNIFIED:
      *address = static_cast<std::uintptr_t>(device) + x;
      *access = Access::kAny;
      return CUDA_SUCCESS;
    default:
      core::report_misuse(std::string(api) + ": arrays are not emulated (memory type " +
                          std::to_string(static_cast<int>(type)) + ")");
      return CUDA_ERROR_INVALID_VALUE;
  }
}

}  // namespace

extern "C" {

CUresult cuGraphCreate(CUgraph* graph, unsigned int flags) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (graph == nullptr || flags != 0) {
    core::report_misuse("cuGraphCreate: null phGraph or nonzero flags");
    return CUDA_ERROR_INVALID_VALUE;
  }
  void* made = nullptr;
  const CUresult r = cu(core::graph_create(&made));
  if (r == CUDA_SUCCESS) *graph = static_cast<CUgraph>(made);
  return r;
}

CUresult cuGraphAddEmptyNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                             size_t count) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  return add_node("cuGraphAddEmptyNode", node, graph, deps, count, GraphNode{});
}

CUresult cuGraphAddMemcpyNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                              size_t count, const CUDA_MEMCPY3D* p, CUcontext ctx) {
  const char* api = "cuGraphAddMemcpyNode";
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (p == nullptr || anydev_emu::as_context(ctx) == nullptr) {
    core::report_misuse(std::string(api) + ": null copyParams or not a context");
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (p->Height != 1 || p->Depth != 1 || p->srcY != 0 || p->srcZ != 0 || p->dstY != 0 ||
      p->dstZ != 0 || p->srcLOD != 0 || p->dstLOD != 0) {
    core::report_misuse(std::string(api) + ": the emulator copies one row of one slice only");
    return CUDA_ERROR_INVALID_VALUE;
  }
  GraphNode n;
  n.kind = GraphNode::Kind::copy;
  n.bytes = p->WidthInBytes;
  if (const CUresult r = copy_side(api, p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes,
                                   &n.dst, &n.dst_access);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (const CUresult r = copy_side(api, p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes,
                                   &n.src, &n.src_access);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (const CUresult r = cu(core::check_copy_node(api, n)); r != CUDA_SUCCESS) return r;
  return add_node(api, node, graph, deps, count, std::move(n));
}

CUresult cuGraphAddMemsetNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                              size_t count, const CUDA_MEMSET_NODE_PARAMS* p, CUcontext ctx) {
  const char* api = "cuGraphAddMemsetNode";
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (p == nullptr || anydev_emu::as_context(ctx) == nullptr) {
    core::report_misuse(std::string(api) + ": null memsetParams or not a context");
    return CUDA_ERROR_INVALID_VALUE;
  }
  GraphNode n;
  if (const CUresult r = cu(core::memset_node(api, static_cast<std::uintptr_t>(p->dst), p->value,
                                              p->elementSize, p->width, p->height, p->pitch, &n));
      r != CUDA_SUCCESS) {
    return r;
  }
  return add_node(api, node, graph, deps, count, std::move(n));
}

CUresult cuGraphAddKernelNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                              size_t count, const CUDA_KERNEL_NODE_PARAMS* p) {
  const char* api = "cuGraphAddKernelNode";
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (p == nullptr || p->kernelParams == nullptr) {
    core::report_misuse(std::string(api) + ": null nodeParams or kernelParams");
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::uint64_t block = std::uint64_t{p->blockDimX} * p->blockDimY * p->blockDimZ;
  const std::uint64_t grid = std::uint64_t{p->gridDimX} * p->gridDimY * p->gridDimZ;
  if (const CUresult r =
          anydev_emu::check_launch_shape(api, grid, block, p->sharedMemBytes, p->extra);
      r != CUDA_SUCCESS) {
    return r;
  }
  core::KernelEntry entry;
  anydev_emu::Context* context = nullptr;
  if (const CUresult r = anydev_emu::function_entry(p->func, api, &entry, &context);
      r != CUDA_SUCCESS) {
    return r;
  }
  GraphNode n;
  if (const CUresult r = cu(core::kernel_node(api, entry, p->kernelParams, grid * block, &n));
      r != CUDA_SUCCESS) {
    return r;
  }
  return add_node(api, node, graph, deps, count, std::move(n));
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  const char* api = "cuGraphInstantiateWithFlags";
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  if (exec == nullptr || flags != 0) {
    core::report_misuse(std::string(api) + ": null phGraphExec or flags the emulator lacks");
    return CUDA_ERROR_INVALID_VALUE;
  }
  void* made = nullptr;
  const CUresult r = cu(core::graph_instantiate(api, graph, &made));
  if (r == CUDA_SUCCESS) *exec = static_cast<CUgraphExec>(made);
  return r;
}

CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  const char* api = "cuGraphLaunch";
  core::StreamRef s;
  if (const CUresult r = anydev_emu::lookup_stream(stream, api, &s); r != CUDA_SUCCESS) return r;
  return cu(core::graph_launch(api, exec, s));
}

CUresult cuGraphExecDestroy(CUgraphExec exec) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  return cu(core::graph_exec_destroy("cuGraphExecDestroy", exec));
}

CUresult cuGraphDestroy(CUgraph graph) {
  if (const CUresult r = anydev_emu::check_initialized(); r != CUDA_SUCCESS) return r;
  return cu(core::graph_destroy("cuGraphDestroy", graph));
}

}  // extern "C"
