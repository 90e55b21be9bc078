// SPDX-License-Identifier: Apache-2.0
// Graphs of the emulator, as CUDA's and HIP's graph APIs have them: a graph
// collects nodes (copies, memsets, kernels, empty nodes) with dependencies on
// nodes added before; instantiating it freezes them into an executable graph;
// a launch queues every node on a stream in one topological order, chosen so
// that nodes with no path between them do not run in the order they were
// added (a missing dependency shows up as wrong bytes). Node parameters are
// checked when the node is added (invalid_value) and again when a launch
// queues it (core_transfer.h, core_kernels.h).
//
// Graphs, nodes and executable graphs live in one registry under a mutex,
// named by opaque handles from a counter, never reused. An executable graph
// is independent of its graph once instantiated, and destroying it while
// launches are queued is safe: each queued operation holds its own copy of
// the node's parameters. Thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_GRAPH_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core_kernels.h"
#include "core_memory.h"
#include "core_status.h"
#include "core_stream.h"

namespace anydev_emu::core {

// One node's work, as the face decoded it from the vendor's parameters.
struct GraphNode {
  enum class Kind { empty, copy, memset, kernel };
  Kind kind = Kind::empty;
  // copy: `bytes` from src to dst; memset: dst.
  std::uintptr_t dst = 0;
  std::uintptr_t src = 0;
  Access dst_access = Access::kAny;
  Access src_access = Access::kAny;
  std::size_t bytes = 0;
  // memset: `width` elements of `element` bytes per row, `height` rows
  // `pitch` bytes apart, of the low bytes of `value`.
  std::uint32_t value = 0;
  std::size_t element = 0;
  std::size_t width = 0;
  std::size_t height = 0;
  std::size_t pitch = 0;
  // kernel: the entry, a copy of each parameter's bytes, and the threads.
  KernelEntry entry;
  std::vector<std::vector<unsigned char>> params;
  std::uint64_t threads = 0;
  // The indices of the nodes it waits for (set by graph_add_node).
  std::vector<std::size_t> deps;
};

// A memset node: `width` elements of `element` bytes of `value` in each of
// `height` rows `pitch` bytes apart at `dst`, checked: an element of 1, 2 or
// 4 bytes, a nonempty extent, a pitch of at least a row (when more than
// one), all of it device memory (a memset node cannot write host memory,
// pinned or not). invalid_value (reported with `api`) otherwise.
Status memset_node(const char* api, std::uintptr_t dst, std::uint32_t value, std::size_t element,
                   std::size_t width, std::size_t height, std::size_t pitch, GraphNode* out);
// A kernel node of `entry` over `threads` threads, with a copy of each
// parameter's bytes (the vendors copy them when the node is added; `params`
// as a launch takes them): invalid_value (reported with `api`) for a null
// parameter.
Status kernel_node(const char* api, const KernelEntry& entry, void* const* params,
                   std::uint64_t threads, GraphNode* out);
// Checks a copy node's two ranges for their access kinds.
Status check_copy_node(const char* api, const GraphNode& node);

Status graph_create(void** out);
// Adds `node` after the `count` nodes `deps` (each a node of `graph`):
// invalid_value for an unknown graph, a node of another graph, or null deps
// with a nonzero count. *out: the new node's handle.
Status graph_add_node(const char* api, const void* graph, const void* const* deps,
                      std::size_t count, GraphNode node, void** out);
// invalid_value for an unknown graph. Its executable graphs stay valid.
Status graph_destroy(const char* api, const void* graph);
Status graph_instantiate(const char* api, const void* graph, void** exec);
// Queues every node of `exec` on `stream`, each after the ones it depends on
// (and the launch's nodes together, never interleaved with another launch's).
Status graph_launch(const char* api, const void* exec, const StreamRef& stream);
Status graph_exec_destroy(const char* api, const void* exec);

}  // namespace anydev_emu::core

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_GRAPH_H_
