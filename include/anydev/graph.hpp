// SPDX-License-Identifier: Apache-2.0
// anydev C++ API: DeviceGraph (Mojo's DeviceGraph), a DAG of copies, fills
// and empty nodes recorded once on a context's device and replayed many
// times, each replay one vendor launch where the backend has native graphs
// and one pass over the recorded nodes elsewhere. Part of anydev.hpp.
// Ownership and thread safety: see DeviceGraph; the rules are the C ABI's
// (anydev.h, "graphs").
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_GRAPH_HPP_
#define ANYDEV_GRAPH_HPP_

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "anydev/anydev.h"
#include "anydev/buffer.hpp"
#include "anydev/context.hpp"
#include "anydev/detail/handle.hpp"
#include "anydev/status.hpp"

namespace anydev {

// A node of one DeviceGraph, as add_* returned it: a plain value, valid as a
// dependency of later nodes of the same graph.
struct GraphNode {
  anydev_graph_node_t id = 0;
  friend bool operator==(GraphNode, GraphNode) = default;
};

// A graph of copies, fills and empty nodes on one context's device. Build it
// with add_copy, add_memset and add_empty (each after the nodes it is given
// as dependencies), then replay() it as often as wanted; building ends at
// instantiate() or the first replay. The graph keeps every buffer it names
// alive, so the buffer objects may be dropped while the graph lives.
// Copying shares the graph (reference count); a moved-from graph is empty
// and its operations throw Error(invalid_state). Thread-safe as the C ABI:
// replays of one graph may run on several threads and streams at once.
class DeviceGraph {
 public:
  explicit DeviceGraph(const DeviceContext& ctx) : handle_(create(ctx)) {}
  DeviceGraph() = default;  // empty

  // dst's size from the start of src (a sub-buffer names a range).
  template <detail::AnyBuffer Dst, detail::AnyBuffer Src>
  requires std::is_same_v<detail::element_t<Dst>, detail::element_t<Src>> GraphNode
  add_copy(const Dst& dst, const Src& src, std::span<const GraphNode> deps = {})
  const {
    anydev_graph_node_t out = 0;
    detail::check(anydev_graph_add_copy(get("add_copy"), arg(dst, "add_copy", "destination"),
                                        arg(src, "add_copy", "source"), ids(deps).data(),
                                        deps.size(), &out));
    return GraphNode{out};
  }
  template <detail::AnyBuffer Dst, detail::AnyBuffer Src>
  requires std::is_same_v<detail::element_t<Dst>, detail::element_t<Src>> GraphNode
  add_copy(const Dst& dst, const Src& src, std::initializer_list<GraphNode> deps)
  const { return add_copy(dst, src, std::span<const GraphNode>(deps.begin(), deps.size())); }

  // Every element of `buffer` set to the exact bits of `value`.
  template <detail::AnyBuffer Buffer>
  GraphNode add_memset(const Buffer& buffer, std::type_identity_t<detail::element_t<Buffer>> value,
                       std::span<const GraphNode> deps = {}) const {
    anydev_graph_node_t out = 0;
    detail::check(anydev_graph_add_fill(get("add_memset"), arg(buffer, "add_memset", "filled"),
                                        &value, sizeof(value), ids(deps).data(), deps.size(),
                                        &out));
    return GraphNode{out};
  }
  template <detail::AnyBuffer Buffer>
  GraphNode add_memset(const Buffer& buffer, std::type_identity_t<detail::element_t<Buffer>> value,
                       std::initializer_list<GraphNode> deps) const {
    return add_memset(buffer, value, std::span<const GraphNode>(deps.begin(), deps.size()));
  }

  // A node that only waits for `deps` (a join).
  GraphNode add_empty(std::span<const GraphNode> deps = {}) const {
    anydev_graph_node_t out = 0;
    detail::check(anydev_graph_add_empty(get("add_empty"), ids(deps).data(), deps.size(), &out));
    return GraphNode{out};
  }
  GraphNode add_empty(std::initializer_list<GraphNode> deps) const {
    return add_empty(std::span<const GraphNode>(deps.begin(), deps.size()));
  }

  std::size_t node_count() const {
    std::size_t out = 0;
    detail::check(anydev_graph_node_count(get("node_count"), &out));
    return out;
  }
  // Ends building and prepares replays (optional: replay() does it).
  void instantiate() const { detail::check(anydev_graph_instantiate(get("instantiate"))); }
  // Runs the graph on the context it was made on, or on `ctx` (a context of
  // the same device: its stream), in stream order.
  void replay() const { detail::check(anydev_graph_replay(get("replay"), nullptr)); }
  void replay(const DeviceContext& ctx) const {
    if (ctx.handle() == nullptr) detail::throw_empty("DeviceGraph", "replay", "context");
    detail::check(anydev_graph_replay(get("replay"), ctx.handle()));
  }
  // True when a replay is one native launch (instantiates the graph).
  bool native() const {
    int out = 0;
    detail::check(anydev_graph_is_native(get("native"), &out));
    return out != 0;
  }

  // Makes ctx's stream record its copies and fills into this graph instead
  // of running them, until ctx.end_capture() (on this thread). Rules:
  // anydev.h, anydev_context_begin_capture. StreamCapture is the scoped form.
  void begin_capture(const DeviceContext& ctx) const {
    if (ctx.handle() == nullptr) detail::throw_empty("DeviceGraph", "begin_capture", "context");
    detail::check(anydev_context_begin_capture(ctx.handle(), get("begin_capture")));
  }

  // The C handle, borrowed; NULL when empty.
  anydev_graph_t handle() const noexcept { return handle_.get(); }

 private:
  using Handle = detail::SharedHandle<anydev_graph_t, anydev_graph_retain, anydev_graph_release>;

  static anydev_graph_t create(const DeviceContext& ctx) {
    if (ctx.handle() == nullptr) detail::throw_empty("DeviceGraph", "DeviceGraph", "context");
    anydev_graph_t out = nullptr;
    detail::check(anydev_graph_create(ctx.handle(), &out));
    return out;
  }
  anydev_graph_t get(const char* method) const {
    if (handle_.get() == nullptr) detail::throw_empty("DeviceGraph", method, "graph");
    return handle_.get();
  }
  template <detail::AnyBuffer Buffer>
  static anydev_buffer_t arg(const Buffer& buffer, const char* method, const char* role) {
    if (buffer.handle() == nullptr) {
      throw Error(Status::invalid_state, std::string("DeviceGraph::") + method + ": the " + role +
                                             " buffer is empty (default-constructed or "
                                             "moved-from)");
    }
    return buffer.handle();
  }
  // The dependencies as the C ABI's array (building is not a hot path).
  static std::vector<anydev_graph_node_t> ids(std::span<const GraphNode> deps) {
    std::vector<anydev_graph_node_t> out;
    out.reserve(deps.size());
    for (GraphNode node : deps) out.push_back(node.id);
    return out;
  }

  Handle handle_;
};

// A capture of ctx's stream into a graph for the scope's lifetime:
//
//   {
//     anydev::StreamCapture capture(ctx, graph);
//     dev.enqueue_copy_from(host);   // recorded, not run
//   }                                // capture ended
//
// end() ends it early and reports errors; the destructor ends a capture
// still running and ignores errors (it cannot throw). Owns no memory; not
// copyable; used on the thread that made it (captures are per thread).
class StreamCapture {
 public:
  StreamCapture(const DeviceContext& ctx, const DeviceGraph& graph) : ctx_(ctx) {
    graph.begin_capture(ctx_);
    active_ = true;
  }
  ~StreamCapture() {
    if (active_) static_cast<void>(anydev_context_end_capture(ctx_.handle()));
  }
  StreamCapture(const StreamCapture&) = delete;
  StreamCapture& operator=(const StreamCapture&) = delete;

  void end() {
    if (!active_) return;
    active_ = false;
    ctx_.end_capture();
  }

 private:
  DeviceContext ctx_;
  bool active_ = false;
};

}  // namespace anydev

#endif  // ANYDEV_GRAPH_HPP_
