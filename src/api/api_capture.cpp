// SPDX-License-Identifier: Apache-2.0
// Stream capture (api/capture.h): the C entry points that begin and end a
// capture, and the recording of captured copies and fills. A captured node
// is added through the graph's own checks (graph_add_copy/_fill), so it
// obeys the graph's rules and keeps its buffers' memory alive.
#include <thread>
#include <vector>

#include "anydev/anydev.h"
#include "api/capture.h"
#include "api/graph.h"

using namespace anydev::core;

namespace {

// The running capture of one stream. Owns one reference to its graph; its
// destruction (end_capture, or the stream going away) ends the capture.
// Reached only under the stream's slot mutex.
class GraphCapture final : public CaptureSession {
 public:
  GraphCapture(anydev_graph_s& graph, std::vector<anydev_graph_node_t> first_deps)
      : graph(graph), owner(std::this_thread::get_id()), next_deps(std::move(first_deps)) {
    next_deps.reserve(1);  // so that moving on to the next node never allocates
    graph.refs.fetch_add(1, std::memory_order_relaxed);
  }
  ~GraphCapture() override {
    {
      std::lock_guard lock(graph.mutex);
      graph.capturing = false;
    }
    static_cast<void>(anydev_graph_release(&graph));
  }
  GraphCapture(const GraphCapture&) = delete;
  GraphCapture& operator=(const GraphCapture&) = delete;

  anydev_graph_s& graph;
  const std::thread::id owner;
  // The dependencies of the next captured node: the previous captured node,
  // or, at the start, the nodes the graph already had that nothing follows.
  std::vector<anydev_graph_node_t> next_deps;
};

GraphCapture* session_of(Stream& stream) {
  return static_cast<GraphCapture*>(stream.capture.session());
}

[[gnu::cold]] anydev_status_t other_thread(const char* op) {
  return fail(ANYDEV_ERROR_INVALID_STATE, op,
              "the context's stream is capturing into a graph on another thread; only the thread "
              "that called anydev_context_begin_capture may enqueue on it or end the capture");
}

// Adds one node through `add(graph, deps, dep_count, &node)` after the
// previous captured node.
template <class Add>
Captured record(const char* op, Stream& stream, Add&& add) {
  std::lock_guard lock(stream.capture.mutex);
  GraphCapture* session = session_of(stream);
  if (session == nullptr) return {false, ANYDEV_SUCCESS};
  if (session->owner != std::this_thread::get_id()) return {true, other_thread(op)};
  anydev_graph_node_t node = 0;
  const anydev_status_t status = guarded(op, [&] {
    return add(session->graph, session->next_deps.data(), session->next_deps.size(), &node);
  });
  if (status == ANYDEV_SUCCESS) session->next_deps.assign(1, node);
  return {true, status};
}

// A view of a buffer whose handle the caller holds locked.
BufferView view_of(const HeldBuffer& held) {
  return BufferView{held.handle->context, held.handle->allocation, held.handle};
}

// The nodes of `graph` that no other node depends on (graph mutex held).
std::vector<anydev_graph_node_t> sinks(const anydev_graph_s& graph) {
  std::vector<bool> followed(graph.nodes.size(), false);
  for (const anydev::core::GraphNode& node : graph.nodes) {
    for (std::size_t dep : node.dep_indices) followed[dep] = true;
  }
  std::vector<anydev_graph_node_t> out;
  for (std::size_t i = 0; i < followed.size(); ++i) {
    if (!followed[i]) out.push_back((std::uint64_t{graph.serial} << 32) | (i + 1));
  }
  return out;
}

anydev_status_t check_context(const char* op, anydev_context_t ctx) {
  ANYDEV_REQUIRE_ARG(op, ctx);
  return check_fork(op, ctx, "context");
}

}  // namespace

namespace anydev::core {

Captured capture_copy(const char* op, Stream& stream, const HeldBuffer& dst,
                      const HeldBuffer& src) {
  return record(op, stream,
                [&](anydev_graph_s& graph, const anydev_graph_node_t* deps, std::size_t count,
                    anydev_graph_node_t* out) {
                  return graph_add_copy(op, graph, view_of(dst), view_of(src), deps, count, out);
                });
}

Captured capture_fill(const char* op, Stream& stream, const HeldBuffer& buf, const void* pattern,
                      std::size_t pattern_size) {
  return record(op, stream,
                [&](anydev_graph_s& graph, const anydev_graph_node_t* deps, std::size_t count,
                    anydev_graph_node_t* out) {
                  return graph_add_fill(op, graph, view_of(buf), pattern, pattern_size, deps, count,
                                        out);
                });
}

Captured capture_host_copy(const char* op, Stream& stream) {
  std::lock_guard lock(stream.capture.mutex);
  if (session_of(stream) == nullptr) return {false, ANYDEV_SUCCESS};
  return {true, fail(ANYDEV_ERROR_INVALID_STATE, op,
                     "the context's stream is capturing into a graph, and a copy to or from a "
                     "host pointer cannot be captured (the graph could not keep that memory "
                     "alive): use a host buffer, or register the memory "
                     "(anydev_context_register_host_memory)")};
}

anydev_status_t refuse_capturing(const char* op, Stream& stream, const char* what) {
  std::lock_guard lock(stream.capture.mutex);
  if (session_of(stream) == nullptr) return ANYDEV_SUCCESS;
  return fail(ANYDEV_ERROR_INVALID_STATE, op,
              "the stream is capturing into a graph (anydev_context_begin_capture), and ", what,
              " cannot be captured; end the capture first (anydev_context_end_capture)");
}

}  // namespace anydev::core

extern "C" {

anydev_status_t anydev_context_begin_capture(anydev_context_t ctx, anydev_graph_t graph) {
  static constexpr const char* op = "anydev_context_begin_capture";
  if (anydev_status_t s = check_context(op, ctx); s != ANYDEV_SUCCESS) return s;
  ANYDEV_REQUIRE_ARG(op, graph);
  if (graph->fork_generation != fork_generation()) {
    return fail(ANYDEV_ERROR_INVALID_STATE, op,
                "the graph was created before fork(); a forked child must create its own");
  }
  const ContextState& mine = *graph->context;
  const ContextState& theirs = *ctx->state;
  if (theirs.backend != mine.backend || theirs.device != mine.device) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the graph belongs to ",
                describe_device(mine.backend, mine.device), ", not to the context's ",
                describe_device(theirs.backend, theirs.device));
  }
  Stream& stream = *ctx->stream;
  return guarded(op, [&] {
    std::lock_guard slot_lock(stream.capture.mutex);
    if (GraphCapture* running = session_of(stream); running != nullptr) {
      return fail(ANYDEV_ERROR_INVALID_STATE, op,
                  "the context's stream is already capturing (into ",
                  &running->graph == graph ? "this graph" : "another graph",
                  "); end that capture first (anydev_context_end_capture)");
    }
    std::unique_ptr<GraphCapture> session;
    {
      std::lock_guard graph_lock(graph->mutex);
      if (graph->state.load(std::memory_order_relaxed) != GraphState::building) {
        return fail(ANYDEV_ERROR_INVALID_STATE, op,
                    "the graph was already instantiated (by anydev_graph_instantiate or its first "
                    "replay); nodes can only be captured into a graph still being built");
      }
      if (graph->capturing) {
        return fail(ANYDEV_ERROR_INVALID_STATE, op,
                    "another stream is already capturing into the graph");
      }
      session = std::make_unique<GraphCapture>(*graph, sinks(*graph));
      graph->capturing = true;
    }
    stream.capture.start(std::move(session));
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_end_capture(anydev_context_t ctx) {
  static constexpr const char* op = "anydev_context_end_capture";
  if (anydev_status_t s = check_context(op, ctx); s != ANYDEV_SUCCESS) return s;
  Stream& stream = *ctx->stream;
  std::unique_ptr<CaptureSession> ended;
  {
    std::lock_guard lock(stream.capture.mutex);
    GraphCapture* session = session_of(stream);
    if (session == nullptr) {
      return fail(ANYDEV_ERROR_INVALID_STATE, op,
                  "the context's stream is not capturing (no anydev_context_begin_capture on it, "
                  "or its capture already ended)");
    }
    if (session->owner != std::this_thread::get_id()) return other_thread(op);
    ended = stream.capture.stop();
  }
  return ANYDEV_SUCCESS;  // `ended` goes here, outside the slot's mutex
}

anydev_status_t anydev_context_is_capturing(anydev_context_t ctx, int* out) {
  static constexpr const char* op = "anydev_context_is_capturing";
  if (anydev_status_t s = check_context(op, ctx); s != ANYDEV_SUCCESS) return s;
  ANYDEV_REQUIRE_ARG(op, out);
  Stream& stream = *ctx->stream;
  std::lock_guard lock(stream.capture.mutex);
  *out = session_of(stream) != nullptr ? 1 : 0;
  return ANYDEV_SUCCESS;
}

}  // extern "C"
