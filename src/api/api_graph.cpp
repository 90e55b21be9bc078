// SPDX-License-Identifier: Apache-2.0
// C entry points: graphs of copies, fills and empty nodes (api/graph.h).
// Every add_* checks all of its arguments, with the messages of the
// matching enqueue, before it changes the graph; a rejected call adds
// nothing.
#include <algorithm>
#include <cstring>

#include "anydev/anydev.h"
#include "anydev/kit/capabilities.h"
#include "api/buffer_access.h"
#include "api/capture.h"
#include "api/graph.h"
#include "support/range_check.h"

using namespace anydev::core;

namespace {

std::atomic<std::uint32_t> next_serial{1};

anydev_status_t check_graph(const char* op, const anydev_graph_s* graph) {
  ANYDEV_REQUIRE_ARG(op, graph);
  if (graph->fork_generation != fork_generation()) {
    return fail(ANYDEV_ERROR_INVALID_STATE, op,
                "the graph was created before fork(); a forked child must create its own");
  }
  return ANYDEV_SUCCESS;
}

// A buffer a node names: of the graph's backend and device. Foreign host
// memory (USER_HOST) is a plain pointer to every device of the backend.
anydev_status_t check_buffer_device(const char* op, const anydev_graph_s& graph,
                                    const BufferView& view, const char* what) {
  const ContextState& ctx = *graph.context;
  const Allocation& a = *view.allocation;
  const bool same_device = a.kind == ANYDEV_BK_MEMORY_USER_HOST || a.device == ctx.device;
  if (a.backend != ctx.backend || !same_device) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the ", what, " buffer is on ",
                describe_device(a.backend, a.device), ", not on the graph's ",
                describe_device(ctx.backend, ctx.device));
  }
  return ANYDEV_SUCCESS;
}

// The dependencies as node indices (duplicates dropped), or the error.
// Called with the graph's mutex held, so the node count is current.
anydev_status_t take_deps(const char* op, const anydev_graph_s& graph,
                          const anydev_graph_node_t* deps, std::size_t dep_count,
                          std::vector<std::size_t>* out) {
  if (dep_count > 0 && deps == nullptr) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "deps is NULL but dep_count is ", dep_count);
  }
  out->reserve(dep_count);
  for (std::size_t i = 0; i < dep_count; ++i) {
    const anydev_graph_node_t node = deps[i];
    const auto serial = static_cast<std::uint32_t>(node >> 32);
    const std::uint64_t number = node & 0xffffffffu;
    if (serial != graph.serial) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "dependency ", i, " (node ", node,
                  ") is not a node of this graph");
    }
    if (number == 0 || number > graph.nodes.size()) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "dependency ", i, " (node ", node,
                  ") is not a node of this graph (it has ", graph.nodes.size(), " nodes)");
    }
    out->push_back(static_cast<std::size_t>(number - 1));
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return ANYDEV_SUCCESS;
}

// Adds `node` after `deps`; the last step of every add_*.
anydev_status_t add_node(const char* op, anydev_graph_s& graph, GraphNode&& node,
                         const anydev_graph_node_t* deps, std::size_t dep_count,
                         anydev_graph_node_t* out) {
  std::lock_guard lock(graph.mutex);
  if (graph.state.load(std::memory_order_relaxed) != GraphState::building) {
    return fail(ANYDEV_ERROR_INVALID_STATE, op,
                "the graph was already instantiated (by anydev_graph_instantiate or its first "
                "replay); nodes can only be added before");
  }
  if (graph.nodes.size() >= 0xffffffffu) {
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "the graph already has ", graph.nodes.size(),
                " nodes, the most a graph can have");
  }
  if (anydev_status_t st = take_deps(op, graph, deps, dep_count, &node.dep_indices);
      st != ANYDEV_SUCCESS) {
    return st;
  }
  graph.nodes.push_back(std::move(node));
  if (out != nullptr) {
    *out = (std::uint64_t{graph.serial} << 32) | std::uint64_t{graph.nodes.size()};
  }
  return ANYDEV_SUCCESS;
}

bool overlap(std::size_t a, std::size_t b, std::size_t bytes) {
  return a < b + bytes && b < a + bytes;
}

}  // namespace

anydev_status_t anydev::core::graph_add_copy(const char* op, anydev_graph_s& graph, BufferView d,
                                             BufferView s, const anydev_graph_node_t* deps,
                                             std::size_t dep_count, anydev_graph_node_t* out) {
  const anydev_buffer_s* dst = d.handle;
  const anydev_buffer_s* src = s.handle;
  if (anydev_status_t st = check_buffer_device(op, graph, d, "destination"); st != ANYDEV_SUCCESS) {
    return st;
  }
  if (anydev_status_t st = check_buffer_device(op, graph, s, "source"); st != ANYDEV_SUCCESS) {
    return st;
  }
  const std::size_t bytes = dst->size_bytes;
  if (auto error = check_copy_size(op, "source", bytes, src->size_bytes)) {
    return set_error(error->status, error->message);
  }
  if (bytes > 0 && d.allocation == s.allocation &&
      overlap(dst->offset_bytes, src->offset_bytes, bytes)) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "source bytes ", src->offset_bytes, "..",
                src->offset_bytes + bytes, " and destination bytes ", dst->offset_bytes, "..",
                dst->offset_bytes + bytes, " of the same memory overlap");
  }
  GraphNode node;
  if (bytes > 0) {  // an empty copy is an empty node: it only orders
    node.op.kind = ANYDEV_BK_GRAPH_COPY;
    node.op.dst = d.ref();
    node.op.src = s.ref();
    node.op.bytes = bytes;
    node.dst = std::move(d.allocation);
    node.src = std::move(s.allocation);
  }
  return add_node(op, graph, std::move(node), deps, dep_count, out);
}

anydev_status_t anydev::core::graph_add_fill(const char* op, anydev_graph_s& graph, BufferView b,
                                             const void* pattern, std::size_t pattern_size,
                                             const anydev_graph_node_t* deps, std::size_t dep_count,
                                             anydev_graph_node_t* out) {
  const anydev_buffer_s* buf = b.handle;
  ANYDEV_REQUIRE_ARG(op, pattern);
  if (anydev_status_t st = check_buffer_device(op, graph, b, "filled"); st != ANYDEV_SUCCESS) {
    return st;
  }
  if (!anydev::kit::valid_fill_pattern_size(pattern_size)) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "pattern size ", pattern_size, " is not ",
                anydev::kit::kFillPatternSizes, " bytes");
  }
  const ContextState& ctx = *graph.context;
  if (const std::size_t most = ctx.backend->devices[ctx.device].max_fill_pattern;
      pattern_size > most) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "a ", pattern_size, "-byte pattern is larger than ",
                describe_device(ctx.backend, ctx.device), " fills (at most ", most, " bytes)");
  }
  const std::size_t bytes = buf->size_bytes;
  if ((bytes & (pattern_size - 1)) != 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the buffer's ", bytes,
                " bytes are not a whole number of ", pattern_size, "-byte patterns");
  }
  if ((buf->offset_bytes & (std::min<std::size_t>(pattern_size, 4) - 1)) != 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the view starts at byte ", buf->offset_bytes,
                ", not aligned for a ", pattern_size, "-byte pattern");
  }
  GraphNode node;
  if (bytes > 0) {
    node.op.kind = ANYDEV_BK_GRAPH_FILL;
    node.op.dst = b.ref();
    node.op.bytes = bytes;
    std::memcpy(node.op.pattern, pattern, pattern_size);
    node.op.pattern_size = pattern_size;
    node.dst = std::move(b.allocation);
  }
  return add_node(op, graph, std::move(node), deps, dep_count, out);
}

anydev_graph_s::~anydev_graph_s() {
  if (native != nullptr) {
    const anydev_backend_table_t* table = context->backend->table;
    // Launches may still run: graph_destroy defers what they use.
    static_cast<void>(table->graph_destroy(table->instance, native));
  }
}

extern "C" {

anydev_status_t anydev_graph_create(anydev_context_t ctx, anydev_graph_t* out) {
  static constexpr const char* op = "anydev_graph_create";
  ANYDEV_REQUIRE_ARG(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] {
    auto* graph = new anydev_graph_s;
    graph->fork_generation = fork_generation();
    graph->serial = next_serial.fetch_add(1, std::memory_order_relaxed);
    if (graph->serial == 0) graph->serial = next_serial.fetch_add(1, std::memory_order_relaxed);
    graph->context = ctx->state;
    *out = graph;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_graph_retain(anydev_graph_t graph) {
  static constexpr const char* op = "anydev_graph_retain";
  if (anydev_status_t s = check_graph(op, graph); s != ANYDEV_SUCCESS) return s;
  graph->refs.fetch_add(1, std::memory_order_relaxed);
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_graph_release(anydev_graph_t graph) {
  static constexpr const char* op = "anydev_graph_release";
  ANYDEV_REQUIRE_ARG(op, graph);
  if (graph->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete graph;
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_graph_add_copy(anydev_graph_t graph, anydev_buffer_t dst,
                                      anydev_buffer_t src, const anydev_graph_node_t* deps,
                                      size_t dep_count, anydev_graph_node_t* out) {
  static constexpr const char* op = "anydev_graph_add_copy";
  if (anydev_status_t s = check_graph(op, graph); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] {
    BufferView d, s;
    if (anydev_status_t st = access_buffer(op, dst, "dst", &d); st != ANYDEV_SUCCESS) return st;
    if (anydev_status_t st = access_buffer(op, src, "src", &s); st != ANYDEV_SUCCESS) return st;
    return graph_add_copy(op, *graph, std::move(d), std::move(s), deps, dep_count, out);
  });
}

anydev_status_t anydev_graph_add_fill(anydev_graph_t graph, anydev_buffer_t buf,
                                      const void* pattern, size_t pattern_size,
                                      const anydev_graph_node_t* deps, size_t dep_count,
                                      anydev_graph_node_t* out) {
  static constexpr const char* op = "anydev_graph_add_fill";
  if (anydev_status_t s = check_graph(op, graph); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] {
    BufferView b;
    if (anydev_status_t st = access_buffer(op, buf, "buf", &b); st != ANYDEV_SUCCESS) return st;
    return graph_add_fill(op, *graph, std::move(b), pattern, pattern_size, deps, dep_count, out);
  });
}

anydev_status_t anydev_graph_add_empty(anydev_graph_t graph, const anydev_graph_node_t* deps,
                                       size_t dep_count, anydev_graph_node_t* out) {
  static constexpr const char* op = "anydev_graph_add_empty";
  if (anydev_status_t s = check_graph(op, graph); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] { return add_node(op, *graph, GraphNode{}, deps, dep_count, out); });
}

anydev_status_t anydev_graph_node_count(anydev_graph_t graph, size_t* out) {
  static constexpr const char* op = "anydev_graph_node_count";
  if (anydev_status_t s = check_graph(op, graph); s != ANYDEV_SUCCESS) return s;
  ANYDEV_REQUIRE_ARG(op, out);
  std::lock_guard lock(graph->mutex);
  *out = graph->nodes.size();
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_graph_instantiate(anydev_graph_t graph) {
  static constexpr const char* op = "anydev_graph_instantiate";
  if (anydev_status_t s = check_graph(op, graph); s != ANYDEV_SUCCESS) return s;
  return guarded(op, [&] { return instantiate_graph(op, *graph); });
}

anydev_status_t anydev_graph_replay(anydev_graph_t graph, anydev_context_t ctx) {
  static constexpr const char* op = "anydev_graph_replay";
  if (anydev_status_t s = check_graph(op, graph); s != ANYDEV_SUCCESS) return s;
  StreamUse use;
  if (ctx == nullptr) {
    use.shared = &graph->context->stream;
  } else {
    if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
    const ContextState& mine = *graph->context;
    if (ctx->state->backend != mine.backend || ctx->state->device != mine.device) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the graph belongs to ",
                  describe_device(mine.backend, mine.device), ", not to the context's ",
                  describe_device(ctx->state->backend, ctx->state->device));
    }
    use.shared = &ctx->state->stream;
  }
  use.stream = use.shared->get();
  if (anydev_status_t s = check_not_capturing(op, *use.stream, "replaying a graph on it");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  return guarded(op, [&] {
    if (graph->state.load(std::memory_order_acquire) != GraphState::instantiated) {
      if (anydev_status_t st = instantiate_graph(op, *graph); st != ANYDEV_SUCCESS) return st;
    }
    return replay_graph(op, *graph, use);
  });
}

anydev_status_t anydev_graph_is_native(anydev_graph_t graph, int* out) {
  static constexpr const char* op = "anydev_graph_is_native";
  if (anydev_status_t s = check_graph(op, graph); s != ANYDEV_SUCCESS) return s;
  ANYDEV_REQUIRE_ARG(op, out);
  return guarded(op, [&] {
    if (anydev_status_t st = instantiate_graph(op, *graph); st != ANYDEV_SUCCESS) return st;
    *out = graph->native != nullptr ? 1 : 0;
    return ANYDEV_SUCCESS;
  });
}

}  // extern "C"
