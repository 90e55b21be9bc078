// SPDX-License-Identifier: Apache-2.0
// The cpu backend's native graphs (graph_create, graph_launch,
// graph_destroy): the nodes' copies and fills are built into tasks once,
// and a launch enqueues one task on the stream that runs them all, in the
// order given (a topological order; large copies and fills are still split
// across the worker threads, cpu_parallel.h).
//
// Ownership: a Graph is reference-counted: graph_create's handle holds one
// reference, each launch not yet run another, so graph_destroy never
// blocks and the last of them frees it. Thread-safe: the tasks never change
// after creation, and each run works on its own copy of them, so launches
// may run on several streams at once.
#ifndef ANYDEV_BACKENDS_CPU_CPU_GRAPH_H_
#define ANYDEV_BACKENDS_CPU_CPU_GRAPH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cpu_stream.h"
#include "cpu_task.h"

namespace anydev::cpu {

class Graph {
 public:
  // `tasks`: the copies and fills in the order to run (empty nodes left
  // out). One reference, the creator's.
  explicit Graph(std::vector<Task> tasks) : tasks_(std::move(tasks)) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Enqueues one task on `stream` that runs every node; returns its
  // sequence number. Throws std::bad_alloc (then nothing is enqueued).
  std::uint64_t launch(StreamState& stream);
  // Drops one reference; the last frees the graph.
  void release() noexcept;

  std::size_t task_count() const { return tasks_.size(); }

 private:
  ~Graph() = default;
  // The launch task's body: runs the nodes in order, stops at the first
  // failure, and drops the launch's reference.
  static std::optional<TaskFailure> run(void* graph);

  const std::vector<Task> tasks_;
  std::atomic<std::size_t> refs_{1};
};

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_GRAPH_H_
