// SPDX-License-Identifier: Apache-2.0
// Native graphs of a GPU backend (graph_create, graph_launch, graph_destroy;
// backend_entries.h): the core's nodes become a vendor graph (cuGraph* /
// hipGraph*), instantiated once; a replay is one GraphLaunch on the stream.
//
// Nodes: a copy between device and pinned or registered host memory is a
// 1-D memcpy node (Api::graph_add_copy); a fill of device memory whose
// pattern has a period of 1, 2 or 4 bytes is a memset node of that element
// size (Api::graph_add_memset); an 8- or 16-byte period is a kernel node of
// anydev's fill kernel where the API has one and it is loaded
// (Api::graph_add_fill_kernel, HasGraphFillKernel); an empty node is an
// empty node. Any other node (host memory the driver does not know, a fill
// of host memory, a wide fill without the kernel) makes graph_create decline,
// and the core replays that graph with copy and fill.
//
// Traits a graph-capable Api adds to gpu_api.h's: graph_t, graph_exec_t,
// graph_node_t; driver members GraphCreate, GraphAddEmptyNode,
// GraphAddMemcpyNode, GraphAddMemsetNode, GraphInstantiateWithFlags,
// GraphLaunch, GraphExecDestroy, GraphDestroy (with the same arguments in
// both APIs where the core calls them itself); graph_add_copy and
// graph_add_memset.
//
// A NativeGraph is owned by the core from graph_create to graph_destroy.
// Launches from any thread may share it: its mutex serializes them, since
// the drivers' graph objects are not thread-safe (CUDA's docs say so).
#ifndef ANYDEV_BACKENDS_GPU_GPU_GRAPH_H_
#define ANYDEV_BACKENDS_GPU_GPU_GRAPH_H_

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "anydev/backend.h"
#include "gpu_fill_kernel.h"
#include "gpu_fill_plan.h"
#include "gpu_objects.h"
#include "gpu_state.h"

namespace anydev::gpu {

template <class Api>
struct NativeGraph {
  int device;
  typename Api::graph_exec_t exec;
  std::mutex launch;  // held around each GraphLaunch
};

// A traits type may add wide fills to a graph as one kernel node:
//   static KernelFill graph_add_fill_kernel(graph_node_t* out, graph_t,
//       const graph_node_t* deps, size_t count, int device,
//       const WideFillArgs&, status_t* r)
// kUnavailable: nothing added, the graph is declined.
template <class Api>
concept HasGraphFillKernel = requires(typename Api::graph_node_t* out, typename Api::graph_t g,
                                      const typename Api::graph_node_t* deps, std::size_t n,
                                      const WideFillArgs& a, typename Api::status_t* r) {
  { Api::graph_add_fill_kernel(out, g, deps, n, 0, a, r) } -> std::same_as<KernelFill>;
};

// Whether the driver has every graph entry point the backend calls.
template <class Api>
bool graph_entry_points_present(const typename Api::driver_t& drv) {
  return drv.GraphCreate != nullptr && drv.GraphAddEmptyNode != nullptr &&
         drv.GraphAddMemcpyNode != nullptr && drv.GraphAddMemsetNode != nullptr &&
         drv.GraphInstantiateWithFlags != nullptr && drv.GraphLaunch != nullptr &&
         drv.GraphExecDestroy != nullptr && drv.GraphDestroy != nullptr;
}

// What adding one node did: added, declined (the graph is the core's), or a
// driver failure (*r, *call).
enum class NodeAdd { kAdded, kDeclined, kFailed };

template <class Api>
NodeAdd add_graph_node(int device, typename Api::graph_t graph, const anydev_bk_graph_node_t& node,
                       const std::vector<typename Api::graph_node_t>& deps,
                       typename Api::graph_node_t* out, typename Api::status_t* r,
                       const char** call) {
  using names = typename Api::driver_t::names;
  const auto& drv = driver<Api>();
  const typename Api::graph_node_t* d = deps.empty() ? nullptr : deps.data();
  if (node.kind == ANYDEV_BK_GRAPH_EMPTY || node.bytes == 0) {
    *call = names::GraphAddEmptyNode;
    *r = drv.GraphAddEmptyNode(out, graph, d, deps.size());
  } else if (node.kind == ANYDEV_BK_GRAPH_COPY) {
    // Host memory the driver does not know cannot be a memcpy node's side.
    if (node.dst.kind == ANYDEV_BK_MEMORY_USER_HOST ||
        node.src.kind == ANYDEV_BK_MEMORY_USER_HOST ||
        (node.dst.kind == ANYDEV_BK_MEMORY_DEVICE && node.dst.device != device) ||
        (node.src.kind == ANYDEV_BK_MEMORY_DEVICE && node.src.device != device)) {
      return NodeAdd::kDeclined;
    }
    *call = names::GraphAddMemcpyNode;
    *r = Api::graph_add_copy(
        out, graph, d, deps.size(), device_address<Api>(node.dst.handle, node.dst.offset),
        device_address<Api>(node.src.handle, node.src.offset), node.bytes, device);
  } else if (node.kind == ANYDEV_BK_GRAPH_FILL) {
    // A memset node writes only device memory.
    if (node.dst.kind != ANYDEV_BK_MEMORY_DEVICE || node.dst.device != device) {
      return NodeAdd::kDeclined;
    }
    const std::size_t period = fill_period(node.pattern, node.pattern_size);
    const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(node.dst.handle) + node.dst.offset;
    if (period <= 4) {
      std::uint32_t value = 0;
      std::memcpy(&value, node.pattern, period);
      *call = names::GraphAddMemsetNode;
      *r = Api::graph_add_memset(out, graph, d, deps.size(), device_address<Api>(nullptr, base),
                                 value, static_cast<unsigned>(period), node.bytes / period, device);
    } else if constexpr (HasGraphFillKernel<Api>) {
      *call = "a kernel node of anydev's fill kernel";
      switch (Api::graph_add_fill_kernel(out, graph, d, deps.size(), device,
                                         wide_fill_args(base, node.pattern, period, node.bytes),
                                         r)) {
        case KernelFill::kLaunched:
          return NodeAdd::kAdded;
        case KernelFill::kFailed:
          return NodeAdd::kFailed;
        case KernelFill::kUnavailable:
          return NodeAdd::kDeclined;
      }
    } else {
      return NodeAdd::kDeclined;
    }
  } else {
    return NodeAdd::kDeclined;
  }
  return *r == Api::kSuccess ? NodeAdd::kAdded : NodeAdd::kFailed;
}

// Adds every node to `graph` and instantiates it into *exec. DECLINED (no
// error set) when a node cannot be native.
template <class Api>
anydev_status_t build_graph(int device, typename Api::graph_t graph,
                            const anydev_bk_graph_node_t* nodes, std::size_t count,
                            typename Api::graph_exec_t* exec) {
  using names = typename Api::driver_t::names;
  std::vector<typename Api::graph_node_t> added(count);
  std::vector<typename Api::graph_node_t> deps;
  for (std::size_t i = 0; i < count; ++i) {
    const anydev_bk_graph_node_t& node = nodes[i];
    deps.clear();
    for (std::size_t k = 0; k < node.dep_count; ++k) {
      if (node.deps[k] >= i) {
        return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                                 cat("graph_create: node ", i, " depends on node ", node.deps[k],
                                     ", which is not an earlier node"));
      }
      deps.push_back(added[node.deps[k]]);
    }
    typename Api::status_t r = Api::kSuccess;
    const char* call = "";
    switch (add_graph_node<Api>(device, graph, node, deps, &added[i], &r, &call)) {
      case NodeAdd::kAdded:
        break;
      case NodeAdd::kDeclined:
        return ANYDEV_BK_DECLINED;
      case NodeAdd::kFailed:
        return report_failure<Api>(r, call,
                                   cat("graph_create: node ", i, " of ", count, " (", node.bytes,
                                       " bytes) on ", Api::kName, " device ", device));
    }
  }
  const auto r = driver<Api>().GraphInstantiateWithFlags(exec, graph, 0);
  if (r != Api::kSuccess) {
    return report_failure<Api>(
        r, names::GraphInstantiateWithFlags,
        cat("graph_create of ", count, " nodes on ", Api::kName, " device ", device));
  }
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t graph_create(int device, const anydev_bk_graph_node_t* nodes, std::size_t count,
                             anydev_bk_graph_t* out) {
  using names = typename Api::driver_t::names;
  if (out == nullptr || (nodes == nullptr && count != 0)) {
    return null_argument<Api>("graph_create", "nodes or out");
  }
  if (const anydev_status_t s = check_device<Api>(device, "graph_create"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const auto& drv = driver<Api>();
  if (!graph_entry_points_present<Api>(drv)) return ANYDEV_BK_DECLINED;
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "graph_create"); s != ANYDEV_SUCCESS) return s;
  typename Api::graph_t graph{};
  if (const auto r = drv.GraphCreate(&graph, 0); r != Api::kSuccess) {
    return report_failure<Api>(r, names::GraphCreate,
                               cat("graph_create on ", Api::kName, " device ", device));
  }
  typename Api::graph_exec_t exec{};
  const anydev_status_t built = build_graph<Api>(device, graph, nodes, count, &exec);
  // The executable graph does not need the graph it was made from.
  static_cast<void>(drv.GraphDestroy(graph));
  if (built != ANYDEV_SUCCESS) return built;
  auto* native = new (std::nothrow) NativeGraph<Api>{device, exec, {}};
  if (native == nullptr) {
    static_cast<void>(drv.GraphExecDestroy(exec));
    return report_error<Api>(ANYDEV_ERROR_OUT_OF_MEMORY, "graph_create: out of host memory");
  }
  *out = reinterpret_cast<anydev_bk_graph_t>(native);
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t graph_launch(anydev_bk_graph_t graph, anydev_bk_stream_t stream_token) {
  auto* native = reinterpret_cast<NativeGraph<Api>*>(graph);
  const Stream<Api>* stream = as_stream<Api>(stream_token);
  if (native == nullptr || stream == nullptr) {
    return null_argument<Api>("graph_launch", "graph or stream");
  }
  const auto r = call_on_stream<Api>(
      stream->device, Api::names_its_device(stream->native), "graph_launch", [&] {
        const std::lock_guard<std::mutex> lock(native->launch);
        return driver<Api>().GraphLaunch(native->exec, stream->native);
      });
  if (r != Api::kSuccess) {
    return report_failure<Api>(
        r, Api::driver_t::names::GraphLaunch,
        cat("graph_launch on a stream of ", Api::kName, " device ", stream->device));
  }
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t graph_destroy(anydev_bk_graph_t graph) {
  auto* native = reinterpret_cast<NativeGraph<Api>*>(graph);
  if (native == nullptr) return null_argument<Api>("graph_destroy", "graph");
  // Relied on: cuGraphExecDestroy frees an executable graph still in flight
  // once its launches complete (CUDA driver API docs). HIP's docs state no
  // such rule; its runtime's queued work holds its own commands
  // (docs/graphs.md says what is unverified).
  const auto r = driver<Api>().GraphExecDestroy(native->exec);
  const int device = native->device;
  delete native;
  if (r != Api::kSuccess) {
    return report_failure<Api>(r, Api::driver_t::names::GraphExecDestroy,
                               cat("graph_destroy on ", Api::kName, " device ", device));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_GRAPH_H_
