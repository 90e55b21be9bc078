// SPDX-License-Identifier: Apache-2.0
#include "cpu_graph.h"

namespace anydev::cpu {

std::uint64_t Graph::launch(StreamState& stream) {
  refs_.fetch_add(1, std::memory_order_relaxed);
  try {
    return stream.enqueue(Task{HostFunctionTask{&Graph::run, this}});
  } catch (...) {
    release();
    throw;
  }
}

void Graph::release() noexcept {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

std::optional<TaskFailure> Graph::run(void* user) {
  auto* graph = static_cast<Graph*>(user);
  std::optional<TaskFailure> failure;
  for (const Task& prebuilt : graph->tasks_) {
    Task task = prebuilt;  // run_task may change its argument; launches share the graph
    failure = run_task(task);
    if (failure) break;
  }
  graph->release();
  return failure;
}

}  // namespace anydev::cpu
