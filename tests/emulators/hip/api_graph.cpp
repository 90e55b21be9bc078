// SPDX-License-Identifier: Apache-2.0
// Graphs (the core's core_graph.h) through HIP's graph calls: hipGraphCreate,
// 1-D memcpy nodes, memset nodes, kernel nodes of a loaded module's function
// (api_module.cpp), empty nodes, hipGraphInstantiateWithFlags,
// hipGraphLaunch, hipGraphExecDestroy and hipGraphDestroy, with the
// runtime's hipErrorInvalidValue for bad parameters and handles. Each counts
// its call. Thread-safe.
//
// hipGraphAddKernelNode takes a module's function as recent ROCm runtimes do;
// the 5.2 variant answers hipErrorInvalidDeviceFunction for it, as HIP 5's
// kernel nodes take only kernels a host program registered.
// ANYDEV_HIP_EMULATOR_GRAPH_MODULE_KERNELS (0 or 1) overrides the variant.
#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>

#include "core_config.h"
#include "core_graph.h"
#include "hip_face.h"

namespace hip = anydev_emu::hip;
namespace core = anydev_emu::core;
using core::GraphNode;
using hip::Call;

namespace {

bool module_kernel_nodes_refused() {
  static const bool refused =
      core::read_setting("GRAPH_MODULE_KERNELS", hip::runtime_version() >= 60000000 ? 1 : 0, 0,
                         1) == 0;
  return refused;
}

hipError_t add_node(const char* api, hipGraphNode_t* out, hipGraph_t graph,
                    const hipGraphNode_t* deps, size_t count, GraphNode node) {
  if (out == nullptr) {
    core::report_misuse(std::string(api) + ": null pGraphNode");
    return hipErrorInvalidValue;
  }
  void* made = nullptr;
  const hipError_t e = hip::to_hip(core::graph_add_node(
      api, graph, reinterpret_cast<const void* const*>(deps), count, std::move(node), &made));
  if (e == hipSuccess) *out = static_cast<hipGraphNode_t>(made);
  return e;
}

}  // namespace

extern "C" {

hipError_t hipGraphCreate(hipGraph_t* graph, unsigned int flags) {
  hip::count(Call::hipGraphCreate);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (graph == nullptr || flags != 0) {
    core::report_misuse("hipGraphCreate: null pGraph or nonzero flags");
    return hipErrorInvalidValue;
  }
  void* made = nullptr;
  const hipError_t e = hip::to_hip(core::graph_create(&made));
  if (e == hipSuccess) *graph = static_cast<hipGraph_t>(made);
  return e;
}

hipError_t hipGraphAddEmptyNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                size_t count) {
  hip::count(Call::hipGraphAddEmptyNode);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  return add_node("hipGraphAddEmptyNode", node, graph, deps, count, GraphNode{});
}

hipError_t hipGraphAddMemcpyNode1D(hipGraphNode_t* node, hipGraph_t graph,
                                   const hipGraphNode_t* deps, size_t count, void* dst,
                                   const void* src, size_t bytes, hipMemcpyKind kind) {
  const char* api = "hipGraphAddMemcpyNode1D";
  hip::count(Call::hipGraphAddMemcpyNode1D);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  GraphNode n;
  n.kind = GraphNode::Kind::copy;
  n.dst = reinterpret_cast<std::uintptr_t>(dst);
  n.src = reinterpret_cast<std::uintptr_t>(src);
  n.bytes = bytes;
  if (!hip::copy_access(kind, &n.dst_access, &n.src_access)) {
    core::report_misuse(std::string(api) + ": unknown hipMemcpyKind " +
                        std::to_string(static_cast<int>(kind)));
    return hipErrorInvalidMemcpyDirection;
  }
  if (const hipError_t e = hip::to_hip(core::check_copy_node(api, n)); e != hipSuccess) return e;
  return add_node(api, node, graph, deps, count, std::move(n));
}

hipError_t hipGraphAddMemsetNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                 size_t count, const hipMemsetParams* p) {
  const char* api = "hipGraphAddMemsetNode";
  hip::count(Call::hipGraphAddMemsetNode);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (p == nullptr) {
    core::report_misuse(std::string(api) + ": null pMemsetParams");
    return hipErrorInvalidValue;
  }
  GraphNode n;
  if (const hipError_t e =
          hip::to_hip(core::memset_node(api, reinterpret_cast<std::uintptr_t>(p->dst), p->value,
                                        p->elementSize, p->width, p->height, p->pitch, &n));
      e != hipSuccess) {
    return e;
  }
  return add_node(api, node, graph, deps, count, std::move(n));
}

hipError_t hipGraphAddKernelNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                 size_t count, const hipKernelNodeParams* p) {
  const char* api = "hipGraphAddKernelNode";
  hip::count(Call::hipGraphAddKernelNode);
  core::Context* current = nullptr;
  if (const hipError_t e = hip::current(&current); e != hipSuccess) return e;
  if (p == nullptr || p->kernelParams == nullptr) {
    core::report_misuse(std::string(api) + ": null pNodeParams or kernelParams");
    return hipErrorInvalidValue;
  }
  const std::uint64_t block = std::uint64_t{p->blockDim.x} * p->blockDim.y * p->blockDim.z;
  const std::uint64_t grid = std::uint64_t{p->gridDim.x} * p->gridDim.y * p->gridDim.z;
  if (block == 0 || grid == 0 || block > 1024 || p->sharedMemBytes != 0 || p->extra != nullptr) {
    core::report_misuse(std::string(api) + ": an empty grid or block, more than 1024 threads " +
                        "a block, shared memory or `extra` (the emulator takes kernelParams)");
    return hipErrorInvalidValue;
  }
  // Not misuse: a runtime that takes only host-registered kernels says so.
  if (module_kernel_nodes_refused()) return hipErrorInvalidDeviceFunction;
  core::KernelEntry entry;
  core::Context* context = nullptr;
  if (const hipError_t e =
          hip::function_entry(static_cast<hipFunction_t>(p->func), api, &entry, &context);
      e != hipSuccess) {
    return e;
  }
  if (context != current) {
    core::report_misuse(std::string(api) + ": the module was loaded for another device");
    return hipErrorInvalidDevice;
  }
  GraphNode n;
  if (const hipError_t e =
          hip::to_hip(core::kernel_node(api, entry, p->kernelParams, grid * block, &n));
      e != hipSuccess) {
    return e;
  }
  return add_node(api, node, graph, deps, count, std::move(n));
}

hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* exec, hipGraph_t graph,
                                        unsigned long long flags) {
  const char* api = "hipGraphInstantiateWithFlags";
  hip::count(Call::hipGraphInstantiateWithFlags);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (exec == nullptr || flags != 0) {
    core::report_misuse(std::string(api) + ": null pGraphExec or flags the emulator lacks");
    return hipErrorInvalidValue;
  }
  void* made = nullptr;
  const hipError_t e = hip::to_hip(core::graph_instantiate(api, graph, &made));
  if (e == hipSuccess) *exec = static_cast<hipGraphExec_t>(made);
  return e;
}

hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t stream) {
  const char* api = "hipGraphLaunch";
  hip::count(Call::hipGraphLaunch);
  core::StreamRef s;
  if (const hipError_t e = hip::stream_of(stream, api, &s); e != hipSuccess) return e;
  return hip::to_hip(core::graph_launch(api, exec, s));
}

hipError_t hipGraphExecDestroy(hipGraphExec_t exec) {
  hip::count(Call::hipGraphExecDestroy);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  return hip::to_hip(core::graph_exec_destroy("hipGraphExecDestroy", exec));
}

hipError_t hipGraphDestroy(hipGraph_t graph) {
  hip::count(Call::hipGraphDestroy);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  return hip::to_hip(core::graph_destroy("hipGraphDestroy", graph));
}

}  // extern "C"
