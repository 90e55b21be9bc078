// SPDX-License-Identifier: Apache-2.0
#include "core_graph.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "core_config.h"
#include "core_transfer.h"

namespace anydev_emu::core {
namespace {

struct Graph {
  std::vector<GraphNode> nodes;
  std::vector<std::uintptr_t> handles;  // each node's handle, in the order added
};

// An executable graph: its nodes in the order a launch queues them.
using Exec = std::shared_ptr<const std::vector<GraphNode>>;

struct Registry {
  std::mutex mutex;
  std::atomic<std::uintptr_t> next{0x6a0000};
  std::unordered_map<std::uintptr_t, Graph> graphs;
  // node handle -> (its graph's handle, its index there)
  std::unordered_map<std::uintptr_t, std::pair<std::uintptr_t, std::size_t>> nodes;
  std::unordered_map<std::uintptr_t, Exec> execs;
  // One launch's nodes are queued together.
  std::mutex launch;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: calls may come during exit
  return *r;
}

std::uintptr_t key(const void* handle) { return reinterpret_cast<std::uintptr_t>(handle); }
void* handle_of(std::uintptr_t k) { return reinterpret_cast<void*>(k); }

Status unknown(const char* api, const char* what) {
  return misuse(Status::invalid_value, std::string(api) + ": not a live " + what);
}

// The nodes in a topological order that takes the most recently readied node
// first (Kahn's algorithm with a stack), so that independent nodes run in
// another order than the one they were added in.
std::vector<GraphNode> topological(const std::vector<GraphNode>& nodes) {
  std::vector<std::size_t> waiting(nodes.size(), 0);
  std::vector<std::vector<std::size_t>> users(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    waiting[i] = nodes[i].deps.size();
    for (const std::size_t d : nodes[i].deps) users[d].push_back(i);
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (waiting[i] == 0) ready.push_back(i);
  }
  std::vector<GraphNode> order;
  order.reserve(nodes.size());
  while (!ready.empty()) {
    const std::size_t i = ready.back();
    ready.pop_back();
    order.push_back(nodes[i]);
    for (const std::size_t u : users[i]) {
      if (--waiting[u] == 0) ready.push_back(u);
    }
  }
  return order;
}

Status enqueue_node(const char* api, const GraphNode& n, const StreamRef& stream) {
  switch (n.kind) {
    case GraphNode::Kind::empty:
      return Status::success;
    case GraphNode::Kind::copy:
      return enqueue_copy(api, stream, n.dst, n.dst_access, n.src, n.src_access, n.bytes);
    case GraphNode::Kind::memset:
      return enqueue_memset(api, stream, n.dst, n.value, n.element, n.width, n.height, n.pitch);
    case GraphNode::Kind::kernel: {
      std::vector<void*> params;
      for (const std::vector<unsigned char>& p : n.params) {
        params.push_back(const_cast<unsigned char*>(p.data()));
      }
      return enqueue_kernel(api, stream, n.entry, params.data(), n.threads);
    }
  }
  return Status::invalid_value;
}

}  // namespace

Status kernel_node(const char* api, const KernelEntry& entry, void* const* params,
                   std::uint64_t threads, GraphNode* out) {
  GraphNode& n = *out;
  n.kind = GraphNode::Kind::kernel;
  n.entry = entry;
  n.threads = threads;
  n.params.clear();
  for (std::size_t i = 0; i < entry.param_sizes.size(); ++i) {
    const auto* bytes = static_cast<const unsigned char*>(params[i]);
    if (bytes == nullptr) {
      return misuse(Status::invalid_value,
                    std::string(api) + ": kernelParams[" + std::to_string(i) + "] is null");
    }
    n.params.emplace_back(bytes, bytes + entry.param_sizes[i]);
  }
  return Status::success;
}

Status memset_node(const char* api, std::uintptr_t dst, std::uint32_t value, std::size_t element,
                   std::size_t width, std::size_t height, std::size_t pitch, GraphNode* out) {
  GraphNode& n = *out;
  n.kind = GraphNode::Kind::memset;
  n.dst = dst;
  n.value = value;
  n.element = element;
  n.width = width;
  n.height = height;
  n.pitch = pitch;
  const std::string op(api);
  if (n.element != 1 && n.element != 2 && n.element != 4) {
    return misuse(Status::invalid_value,
                  op + ": elementSize " + std::to_string(n.element) + " (must be 1, 2 or 4)");
  }
  if (n.width == 0 || n.height == 0 || n.dst % n.element != 0 ||
      (n.height > 1 && (n.pitch < n.width * n.element || n.pitch % n.element != 0))) {
    return misuse(Status::invalid_value, op + ": an empty, misaligned or overlapping memset");
  }
  Span span;
  const std::size_t extent = (n.height - 1) * n.pitch + n.width * n.element;
  if (const Status s = resolve(n.dst, extent, Access::kDeviceOrPinned, api, &span);
      s != Status::success) {
    return s;
  }
  if (span.block == nullptr || span.block->device < 0) {
    return misuse(Status::invalid_value,
                  op + ": a memset node writes device memory only, not " + span.describe());
  }
  return Status::success;
}

Status check_copy_node(const char* api, const GraphNode& n) {
  if (n.bytes == 0) return misuse(Status::invalid_value, std::string(api) + ": a copy of 0 bytes");
  Span span;
  if (const Status s = resolve(n.dst, n.bytes, n.dst_access, api, &span); s != Status::success) {
    return s;
  }
  return resolve(n.src, n.bytes, n.src_access, api, &span);
}

Status graph_create(void** out) {
  Registry& reg = registry();
  const std::uintptr_t k = reg.next.fetch_add(16);
  const std::lock_guard<std::mutex> lock(reg.mutex);
  reg.graphs[k] = Graph{};
  *out = handle_of(k);
  return Status::success;
}

Status graph_add_node(const char* api, const void* graph, const void* const* deps,
                      std::size_t count, GraphNode node, void** out) {
  if (deps == nullptr && count != 0) {
    return misuse(Status::invalid_value, std::string(api) + ": null dependencies with a count");
  }
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  const auto g = reg.graphs.find(key(graph));
  if (g == reg.graphs.end()) return unknown(api, "graph");
  node.deps.clear();
  for (std::size_t i = 0; i < count; ++i) {
    const auto d = reg.nodes.find(key(deps[i]));
    if (d == reg.nodes.end() || d->second.first != key(graph)) {
      return misuse(Status::invalid_value, std::string(api) + ": dependency " + std::to_string(i) +
                                               " is not a node of this graph");
    }
    node.deps.push_back(d->second.second);
  }
  // As the drivers document: a dependency list has no duplicate entries.
  std::vector<std::size_t> sorted = node.deps;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return misuse(Status::invalid_value, std::string(api) + ": a dependency is listed twice");
  }
  const std::uintptr_t k = reg.next.fetch_add(16);
  reg.nodes[k] = {key(graph), g->second.nodes.size()};
  g->second.nodes.push_back(std::move(node));
  g->second.handles.push_back(k);
  *out = handle_of(k);
  return Status::success;
}

Status graph_destroy(const char* api, const void* graph) {
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  const auto g = reg.graphs.find(key(graph));
  if (g == reg.graphs.end()) return unknown(api, "graph");
  for (const std::uintptr_t h : g->second.handles) reg.nodes.erase(h);
  reg.graphs.erase(g);
  return Status::success;
}

Status graph_instantiate(const char* api, const void* graph, void** exec) {
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  const auto g = reg.graphs.find(key(graph));
  if (g == reg.graphs.end()) return unknown(api, "graph");
  const std::uintptr_t k = reg.next.fetch_add(16);
  reg.execs[k] = std::make_shared<const std::vector<GraphNode>>(topological(g->second.nodes));
  *exec = handle_of(k);
  return Status::success;
}

Status graph_launch(const char* api, const void* exec, const StreamRef& stream) {
  Registry& reg = registry();
  Exec nodes;
  {
    const std::lock_guard<std::mutex> lock(reg.mutex);
    const auto e = reg.execs.find(key(exec));
    if (e == reg.execs.end()) return unknown(api, "executable graph");
    nodes = e->second;
  }
  const std::lock_guard<std::mutex> together(reg.launch);
  for (const GraphNode& n : *nodes) {
    if (const Status s = enqueue_node(api, n, stream); s != Status::success) return s;
  }
  return Status::success;
}

Status graph_exec_destroy(const char* api, const void* exec) {
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  if (reg.execs.erase(key(exec)) == 0) return unknown(api, "executable graph");
  return Status::success;
}

}  // namespace anydev_emu::core
