// SPDX-License-Identifier: Apache-2.0
// The object behind anydev_graph_t: a DAG of copies, fills and empty nodes
// recorded once (api_graph.cpp) and replayed on streams (graph_replay.cpp).
//
// Ownership: the graph holds a shared_ptr to the context it was made on (so
// its stream and device stay) and to the Allocation of every buffer a node
// names, so the memory outlives the caller's buffer handles; the memory is
// released, stream-ordered after the graph's last replay, when the graph
// goes. The native graph (backend graph_create), when there is one, is the
// graph's and is destroyed with it (graph_destroy may run while launches are
// in flight: the backend defers).
//
// Thread safety: `mutex` guards the nodes and `state` while the graph is
// being built. Instantiation sets `state` to instantiated under the mutex;
// from then on the nodes, `allocations` and `native` never change, so
// replays read them without the mutex (after an acquire load of `state`).
#ifndef ANYDEV_SRC_API_GRAPH_H_
#define ANYDEV_SRC_API_GRAPH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "api/buffer_access.h"
#include "api/objects.h"

namespace anydev::core {

// One node: what the backend gets (`op`, with `deps` pointing into
// `dep_indices` once the graph is instantiated) plus the allocations it
// names, which it keeps alive.
struct GraphNode {
  anydev_bk_graph_node_t op{};
  std::vector<std::size_t> dep_indices;
  std::shared_ptr<Allocation> dst;  // null for empty nodes
  std::shared_ptr<Allocation> src;  // copies only
};

enum class GraphState : int { building = 0, instantiated = 1 };

}  // namespace anydev::core

struct anydev_graph_s {
  std::atomic<std::int64_t> refs{1};
  std::uint64_t fork_generation;
  // Distinguishes this graph's node values from another graph's (the high
  // 32 bits of an anydev_graph_node_t).
  std::uint32_t serial;
  std::shared_ptr<const anydev::core::ContextState> context;

  std::mutex mutex;
  std::atomic<anydev::core::GraphState> state{anydev::core::GraphState::building};
  std::vector<anydev::core::GraphNode> nodes;
  // A stream is capturing into the graph (api/capture.h): instantiating
  // waits for the capture's end. Guarded by mutex.
  bool capturing = false;
  // Set at instantiation: each distinct allocation once, in address order
  // (the order replays lock them in), and the backend's graph or null.
  std::vector<anydev::core::Allocation*> allocations;
  anydev_bk_graph_t native = nullptr;

  ~anydev_graph_s();
};

namespace anydev::core {

// The checks and the node of anydev_graph_add_copy and _add_fill, on
// buffers already accessed (`op` names the caller in messages). A stream
// capture records through them (api/capture.cpp).
anydev_status_t graph_add_copy(const char* op, anydev_graph_s& graph, BufferView d, BufferView s,
                               const anydev_graph_node_t* deps, std::size_t dep_count,
                               anydev_graph_node_t* out);
anydev_status_t graph_add_fill(const char* op, anydev_graph_s& graph, BufferView b,
                               const void* pattern, std::size_t pattern_size,
                               const anydev_graph_node_t* deps, std::size_t dep_count,
                               anydev_graph_node_t* out);

// Ends building: collects the allocations and asks the backend for a native
// graph (a backend that declines, or has no graph entries, is replayed by
// the core). Idempotent and thread-safe.
anydev_status_t instantiate_graph(const char* op, anydev_graph_s& graph);

// Enqueues one replay of an instantiated graph on `use`'s stream, after the
// last users of its allocations.
anydev_status_t replay_graph(const char* op, anydev_graph_s& graph, const StreamUse& use);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_API_GRAPH_H_
