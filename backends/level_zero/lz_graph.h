// SPDX-License-Identifier: Apache-2.0
// The objects of a native graph on level_zero (lz_graph.cpp says how a graph
// is recorded and launched): the commands planned from the nodes, the
// recorded instances and the graph that owns them, and the functions that
// plan and record them (lz_graph_record.cpp).
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_GRAPH_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_GRAPH_H_

#include <level_zero/ze_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "anydev/backend.h"
#include "lz_event_slots.h"

namespace anydev::level_zero {

// One command of the recorded list: a copy, a fill (of patterns[pattern]), a
// launch of anydev's fill kernel (a fill wider than the queue group fills,
// of patterns[pattern] with period pattern_size) or the barrier between two
// levels. Planned once, never changed.
struct Command {
  enum class Kind { kCopy, kFill, kKernelFill, kBarrier } kind = Kind::kBarrier;
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  std::size_t pattern = 0;
  std::size_t pattern_size = 0;
};

// A recorded list with its start and done events, in a pool of their own.
// `finished`: the slot its latest launch's stream signaled after the resets
// (null: never launched, or given up at graph_destroy). Owned by its
// NativeGraph and guarded by the graph's mutex.
struct Instance {
  ze_command_list_handle_t list = nullptr;
  ze_event_pool_handle_t pool = nullptr;
  ze_event_handle_t start = nullptr;
  ze_event_handle_t done = nullptr;
  SlotRef finished;
  std::uint64_t launched = 0;  // the graph's launch count at its latest launch
  bool broken = false;         // a launch failed half-way: never reused
};

// Owned by the graph_create token and by every launch in flight (the stream
// holds it until its signal after the launch, lz_objects.h); the last owner
// frees the driver objects. `commands` and `patterns` never change; the rest
// is guarded by `mutex`, which a launch holds throughout (before the
// stream's mutex).
struct NativeGraph {
  int device = 0;
  std::vector<Command> commands;
  std::vector<std::array<unsigned char, 16>> patterns;  // read when fills run
  ze_command_queue_handle_t queue = nullptr;
  std::mutex mutex;
  std::vector<std::unique_ptr<Instance>> instances;
  std::uint64_t launches = 0;

  NativeGraph() = default;
  NativeGraph(const NativeGraph&) = delete;
  NativeGraph& operator=(const NativeGraph&) = delete;
  ~NativeGraph();
};

// Plans `count` nodes of device `g.device` into g.commands and g.patterns:
// levels separated by barriers. ANYDEV_BK_DECLINED for a node the list
// cannot express (see lz_graph.cpp).
anydev_status_t plan_graph(NativeGraph& g, const anydev_bk_graph_node_t* nodes, std::size_t count);
// Records a new instance of the planned graph (its events and closed list);
// on failure, what was made is left in *out for destroy_instance.
anydev_status_t record_instance(const NativeGraph& g, const char* operation, Instance* out);
// Destroys what an instance holds (its list, events and pool).
void destroy_instance(const Instance& in);

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_GRAPH_H_
