// SPDX-License-Identifier: Apache-2.0
// Instantiating and replaying graphs (api/graph.h). A replay locks every
// allocation the graph names (in address order, the order every enqueue
// locks allocations in), orders its stream after their last users once per
// distinct stream, enqueues the whole graph (one native launch, or each
// node in the order it was added), and makes the stream their last user.
#include <algorithm>
#include <cstring>

#include "api/api_common.h"
#include "api/graph.h"
#include "support/backend_calls.h"

namespace anydev::core {
namespace {

// The allocations' mutexes, locked in the order given, unlocked on exit.
class AllocationLocks {
 public:
  explicit AllocationLocks(const std::vector<Allocation*>& allocations)
      : allocations_(allocations) {
    for (Allocation* a : allocations_) a->mutex.lock();
  }
  ~AllocationLocks() {
    for (Allocation* a : allocations_) a->mutex.unlock();
  }
  AllocationLocks(const AllocationLocks&) = delete;
  AllocationLocks& operator=(const AllocationLocks&) = delete;

 private:
  const std::vector<Allocation*>& allocations_;
};

// Makes `stream` wait for the last users of the locked allocations, each
// distinct stream once (the first few are remembered; past them a stream
// may be waited for twice, which is correct, only slower).
anydev_status_t order_after_last_users(Stream& stream, const std::vector<Allocation*>& allocs) {
  Stream* done[8];
  std::size_t done_count = 0;
  for (Allocation* a : allocs) {
    Stream* const last = a->last_stream.get();
    if (last == nullptr || last == &stream) continue;
    if (std::find(done, done + done_count, last) != done + done_count) continue;
    if (anydev_status_t st = order_after(stream, *last); st != ANYDEV_SUCCESS) return st;
    if (done_count < std::size(done)) done[done_count++] = last;
  }
  return ANYDEV_SUCCESS;
}

[[gnu::cold]] anydev_status_t node_failed(anydev_status_t status, const char* op, std::size_t index,
                                          const anydev_bk_graph_node_t& node,
                                          const Stream& stream) {
  const std::string detail = last_error_message();
  if (node.kind == ANYDEV_BK_GRAPH_COPY) {
    return fail(status, op, "node ", index + 1, " (copying ", node.bytes, " bytes) on ",
                describe_device(stream.backend, stream.device), ": ", detail);
  }
  return fail(status, op, "node ", index + 1, " (filling ", node.bytes, " bytes with a ",
              node.pattern_size, "-byte pattern) on ",
              describe_device(stream.backend, stream.device), ": ", detail);
}

// The core's replay: every node, in the order added (a topological order),
// on one in-order stream.
anydev_status_t enqueue_nodes(const char* op, const anydev_graph_s& graph, Stream& stream) {
  const BackendCalls calls = bk(stream.table);
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const anydev_bk_graph_node_t& node = graph.nodes[i].op;
    anydev_status_t st = ANYDEV_SUCCESS;
    if (node.kind == ANYDEV_BK_GRAPH_COPY) {
      st = calls.copy(stream.native, node.dst, node.src, node.bytes);
    } else if (node.kind == ANYDEV_BK_GRAPH_FILL) {
      st = calls.fill(stream.native, node.dst, node.pattern, node.pattern_size, node.bytes);
    }
    if (st != ANYDEV_SUCCESS) [[unlikely]]
      return node_failed(st, op, i, node, stream);
  }
  return ANYDEV_SUCCESS;
}

}  // namespace

anydev_status_t instantiate_graph(const char* op, anydev_graph_s& graph) {
  std::lock_guard lock(graph.mutex);
  if (graph.state.load(std::memory_order_relaxed) == GraphState::instantiated) {
    return ANYDEV_SUCCESS;
  }
  if (graph.capturing) {
    return fail(ANYDEV_ERROR_INVALID_STATE, op,
                "a stream is capturing into the graph (anydev_context_begin_capture): end the "
                "capture (anydev_context_end_capture) before instantiating or replaying it");
  }
  std::vector<Allocation*> allocations;
  std::vector<anydev_bk_graph_node_t> ops;
  ops.reserve(graph.nodes.size());
  for (GraphNode& node : graph.nodes) {
    node.op.deps = node.dep_indices.empty() ? nullptr : node.dep_indices.data();
    node.op.dep_count = node.dep_indices.size();
    ops.push_back(node.op);
    if (node.dst) allocations.push_back(node.dst.get());
    if (node.src) allocations.push_back(node.src.get());
  }
  std::sort(allocations.begin(), allocations.end());
  allocations.erase(std::unique(allocations.begin(), allocations.end()), allocations.end());

  const ContextState& ctx = *graph.context;
  const anydev_backend_table_t* table = ctx.backend->table;
  anydev_bk_graph_t native = nullptr;
  if (!ops.empty() && table->graph_create != nullptr && table->graph_launch != nullptr &&
      table->graph_destroy != nullptr) {
    const anydev_status_t st = bk(table).graph_create(ctx.device, ops.data(), ops.size(), &native);
    if (st == ANYDEV_BK_DECLINED) {
      native = nullptr;  // the core replays it
    } else if (st != ANYDEV_SUCCESS) {
      return fail(st, op, "making a native graph of ", ops.size(), " nodes on ",
                  describe_device(ctx.backend, ctx.device), ": ", last_error_message());
    }
  }
  graph.allocations = std::move(allocations);
  graph.native = native;
  graph.state.store(GraphState::instantiated, std::memory_order_release);
  return ANYDEV_SUCCESS;
}

anydev_status_t replay_graph(const char* op, anydev_graph_s& graph, const StreamUse& use) {
  Stream& stream = *use.stream;
  if (graph.nodes.empty()) return ANYDEV_SUCCESS;
  AllocationLocks locks(graph.allocations);
  if (anydev_status_t st = order_after_last_users(stream, graph.allocations);
      st != ANYDEV_SUCCESS) {
    return st;
  }
  anydev_status_t status;
  if (graph.native != nullptr) {
    status = bk(stream.table).graph_launch(graph.native, stream.native);
    if (status != ANYDEV_SUCCESS) {
      status = fail(status, op, "launching the native graph of ", graph.nodes.size(), " nodes on ",
                    describe_device(stream.backend, stream.device), ": ", last_error_message());
    }
  } else {
    status = enqueue_nodes(op, graph, stream);
  }
  // Even after a failure part of the graph may be enqueued: the stream is
  // the allocations' last user either way (waiting for it is always safe).
  for (Allocation* a : graph.allocations) {
    note_use(*a, stream, *use.shared);
  }
  return status;
}

}  // namespace anydev::core
