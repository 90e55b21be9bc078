// SPDX-License-Identifier: Apache-2.0
// Native graphs (docs/graphs.md): the nodes recorded once into a regular
// command list, which each launch executes on a command queue of the graph.
//
// A stream is an immediate list (lz_streams.cpp), and an immediate list
// cannot execute a regular one before Level Zero 1.9's
// zeCommandListImmediateAppendCommandListsExp, so a launch joins the stream
// and the graph's queue with two events of the graph: the stream signals
// `start` once its earlier work ran, the list begins with a barrier waiting
// for `start` and ends with a barrier signalling `done`, and the stream waits
// for `done` before its later work, then resets both. Dependencies within the
// list are levels separated by barriers: a node runs after the barrier that
// follows the last level among its dependencies (more order than the graph
// asks for, never less), so copies and fills carry no events.
//
// The driver may patch a list while it executes it, so a list is executed
// again only once its previous launch is over, and the two events serve one
// launch at a time: a launch takes an idle instance (a list and its events),
// recording another when every instance is busy (launches that overlap, on
// one stream or several), up to kMaxInstances; past that it waits on the
// host for the oldest launch. An instance is idle once the slot that its
// launch's stream signals after the resets has signaled.
//
// Declined: fills wider than the queue group fills natively (the stream's
// fill plan needs its own ordering), fills of imported host memory (the host
// writes those) and a loader without the queue and regular-list entries.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "anydev/kit/memory_ref.h"
#include "lz_entries.h"
#include "lz_errors.h"
#include "lz_fill_period.h"
#include "lz_objects.h"
#include "lz_state.h"

namespace anydev::level_zero {
namespace {

constexpr std::size_t kMaxInstances = 4;

// One command of the recorded list: a copy, a fill (of patterns[pattern]) or
// the barrier between two levels.
struct Command {
  enum class Kind { kCopy, kFill, kBarrier } kind = Kind::kBarrier;
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  std::size_t pattern = 0;
  std::size_t pattern_size = 0;
};

// A recorded list with its start and done events, in a pool of their own.
// `finished`: the slot its latest launch's stream signaled after the resets
// (null: never launched, or given up at graph_destroy).
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

// The token the core holds.
struct GraphToken {
  std::shared_ptr<NativeGraph> graph;
};

bool has_graph_entry_points() {
  const LoaderApi& ze = api();
  return ze.zeCommandQueueCreate != nullptr && ze.zeCommandQueueDestroy != nullptr &&
         ze.zeCommandQueueExecuteCommandLists != nullptr &&
         ze.zeCommandQueueSynchronize != nullptr && ze.zeCommandListCreate != nullptr &&
         ze.zeCommandListClose != nullptr && ze.zeCommandListAppendEventReset != nullptr &&
         ze.zeEventDestroy != nullptr && ze.zeEventPoolDestroy != nullptr;
}

void destroy_instance(const Instance& in) {
  const LoaderApi& ze = api();
  if (in.list != nullptr) (void)ze.zeCommandListDestroy(in.list);
  if (in.start != nullptr) (void)ze.zeEventDestroy(in.start);
  if (in.done != nullptr) (void)ze.zeEventDestroy(in.done);
  if (in.pool != nullptr) (void)ze.zeEventPoolDestroy(in.pool);
}

// The level of each node (levels start at 0) and, for an empty node, the
// level its dependencies are complete after (-1: none). Plans the commands.
anydev_status_t plan(NativeGraph& g, const anydev_bk_graph_node_t* nodes, std::size_t count) {
  const DeviceState& d = device_at(g.device);
  std::vector<long> done_after(count, -1);  // the level after which node i is complete
  std::vector<long> level(count, -1);       // -1: an empty node, no command
  long top = -1;
  std::size_t fills = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const anydev_bk_graph_node_t& n = nodes[i];
    long after = -1;
    for (std::size_t k = 0; k < n.dep_count; ++k) {
      if (n.deps[k] >= i) {
        return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                            cat("graph_create: node ", i, " depends on node ", n.deps[k],
                                ", which does not come before it"));
      }
      after = std::max(after, done_after[n.deps[k]]);
    }
    if (n.kind == ANYDEV_BK_GRAPH_EMPTY) {
      done_after[i] = after;
      continue;
    }
    if (n.kind == ANYDEV_BK_GRAPH_FILL) {
      const auto* p = n.pattern;
      if (n.dst.kind == ANYDEV_BK_MEMORY_USER_HOST ||
          shortest_period(p, n.pattern_size) > d.max_native_fill) {
        return ANYDEV_BK_DECLINED;
      }
      ++fills;
    } else if (n.kind != ANYDEV_BK_GRAPH_COPY) {
      return report_error(
          ANYDEV_ERROR_INVALID_ARGUMENT,
          cat("graph_create: node ", i, " has the unknown kind ", static_cast<int>(n.kind)));
    }
    level[i] = done_after[i] = after + 1;
    top = std::max(top, level[i]);
  }
  g.patterns.reserve(fills);
  for (long l = 0; l <= top; ++l) {
    if (l > 0) g.commands.push_back(Command{});
    for (std::size_t i = 0; i < count; ++i) {
      if (level[i] != l) continue;
      const anydev_bk_graph_node_t& n = nodes[i];
      Command c;
      c.dst = kit::address_of(n.dst);
      c.bytes = n.bytes;
      if (n.kind == ANYDEV_BK_GRAPH_COPY) {
        c.kind = Command::Kind::kCopy;
        c.src = kit::address_of(n.src);
      } else {
        c.kind = Command::Kind::kFill;
        c.pattern = g.patterns.size();
        c.pattern_size = shortest_period(n.pattern, n.pattern_size);
        g.patterns.emplace_back();
        std::memcpy(g.patterns.back().data(), n.pattern, c.pattern_size);
      }
      g.commands.push_back(c);
    }
  }
  return ANYDEV_SUCCESS;
}

// Appends the graph's commands to `list`, between the barrier that waits for
// `start` and the one that signals `done`, and closes it.
ze_result_t append_commands(const NativeGraph& g, ze_command_list_handle_t list,
                            ze_event_handle_t start, ze_event_handle_t done, const char** call) {
  const LoaderApi& ze = api();
  *call = "zeCommandListAppendBarrier";
  ze_result_t r = ze.zeCommandListAppendBarrier(list, nullptr, 1, &start);
  for (std::size_t i = 0; i < g.commands.size() && r == ZE_RESULT_SUCCESS; ++i) {
    const Command& c = g.commands[i];
    switch (c.kind) {
      case Command::Kind::kCopy:
        *call = "zeCommandListAppendMemoryCopy";
        r = ze.zeCommandListAppendMemoryCopy(list, c.dst, c.src, c.bytes, nullptr, 0, nullptr);
        break;
      case Command::Kind::kFill:
        *call = "zeCommandListAppendMemoryFill";
        r = ze.zeCommandListAppendMemoryFill(list, c.dst, g.patterns[c.pattern].data(),
                                             c.pattern_size, c.bytes, nullptr, 0, nullptr);
        break;
      case Command::Kind::kBarrier:
        *call = "zeCommandListAppendBarrier";
        r = ze.zeCommandListAppendBarrier(list, nullptr, 0, nullptr);
        break;
    }
  }
  if (r != ZE_RESULT_SUCCESS) return r;
  *call = "zeCommandListAppendBarrier";
  if ((r = ze.zeCommandListAppendBarrier(list, done, 0, nullptr)) != ZE_RESULT_SUCCESS) return r;
  *call = "zeCommandListClose";
  return ze.zeCommandListClose(list);
}

// A new instance of the graph: its events and its recorded list.
anydev_status_t record(const NativeGraph& g, const char* operation, Instance* out) {
  const LoaderApi& ze = api();
  const DeviceState& d = device_at(g.device);
  auto where = [&] {
    return cat(operation, ": a graph of ", g.commands.size(), " commands on level_zero device ",
               g.device);
  };
  ze_event_pool_desc_t pool_desc = {};
  pool_desc.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
  pool_desc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
  pool_desc.count = 2;
  ze_result_t r = ze.zeEventPoolCreate(d.driver->context, &pool_desc, 0, nullptr, &out->pool);
  if (r != ZE_RESULT_SUCCESS) return report_failure(r, "zeEventPoolCreate", where());
  for (std::uint32_t i = 0; i < 2; ++i) {
    ze_event_desc_t desc = {};
    desc.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
    desc.index = i;
    desc.signal = ZE_EVENT_SCOPE_FLAG_HOST;
    desc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
    r = ze.zeEventCreate(out->pool, &desc, i == 0 ? &out->start : &out->done);
    if (r != ZE_RESULT_SUCCESS) return report_failure(r, "zeEventCreate", where());
  }
  ze_command_list_desc_t list_desc = {};
  list_desc.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
  list_desc.commandQueueGroupOrdinal = d.queue_ordinal;
  r = ze.zeCommandListCreate(d.driver->context, d.device, &list_desc, &out->list);
  if (r != ZE_RESULT_SUCCESS) return report_failure(r, "zeCommandListCreate", where());
  const char* call = "";
  if ((r = append_commands(g, out->list, out->start, out->done, &call)) != ZE_RESULT_SUCCESS) {
    return report_failure(r, call, where());
  }
  return ANYDEV_SUCCESS;
}

// With the graph's mutex held: an instance no launch uses (recorded if none
// is idle and fewer than kMaxInstances exist; otherwise the oldest launch's,
// once the host saw it end).
anydev_status_t idle_instance(NativeGraph& g, const char* operation, Instance** out) {
  Instance* oldest = nullptr;
  for (const std::unique_ptr<Instance>& in : g.instances) {
    if (in->broken) continue;
    if (in->finished == nullptr ||
        api().zeEventQueryStatus(in->finished->event) == ZE_RESULT_SUCCESS) {
      *out = in.get();
      return ANYDEV_SUCCESS;
    }
    if (oldest == nullptr || in->launched < oldest->launched) oldest = in.get();
  }
  if (g.instances.size() < kMaxInstances || oldest == nullptr) {
    auto fresh = std::make_unique<Instance>();
    if (const anydev_status_t s = record(g, operation, fresh.get()); s != ANYDEV_SUCCESS) {
      destroy_instance(*fresh);
      return s;
    }
    g.instances.push_back(std::move(fresh));
    *out = g.instances.back().get();
    return ANYDEV_SUCCESS;
  }
  const ze_result_t r = api().zeEventHostSynchronize(oldest->finished->event, UINT64_MAX);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeEventHostSynchronize",
                          cat(operation,
                              ": waiting for an earlier launch of the graph on "
                              "level_zero device ",
                              g.device));
  }
  *out = oldest;
  return ANYDEV_SUCCESS;
}

// With both mutexes held: the stream's side of a launch of `in`.
anydev_status_t launch_locked(NativeGraph& g, Instance& in, LzStream& stream) {
  const LoaderApi& ze = api();
  const auto where = [&] {
    return cat("graph_launch of a graph of ", g.commands.size(), " commands on level_zero device ",
               stream.device);
  };
  ze_result_t r = ze.zeCommandListAppendBarrier(stream.list, in.start, 0, nullptr);
  if (r != ZE_RESULT_SUCCESS) return report_failure(r, "zeCommandListAppendBarrier", where());
  // From here a failure leaves the instance's events in an unknown state.
  in.broken = true;
  if ((r = ze.zeCommandQueueExecuteCommandLists(g.queue, 1, &in.list, nullptr)) !=
      ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeCommandQueueExecuteCommandLists", where());
  }
  if ((r = ze.zeCommandListAppendWaitOnEvents(stream.list, 1, &in.done)) != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeCommandListAppendWaitOnEvents", where());
  }
  for (ze_event_handle_t e : {in.start, in.done}) {
    if ((r = ze.zeCommandListAppendEventReset(stream.list, e)) != ZE_RESULT_SUCCESS) {
      return report_failure(r, "zeCommandListAppendEventReset", where());
    }
  }
  SlotRef finished;
  if (const anydev_status_t s = signal_locked(stream, "graph_launch", &finished);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  in.finished = std::move(finished);
  in.launched = ++g.launches;
  in.broken = false;
  return ANYDEV_SUCCESS;
}

NativeGraph::~NativeGraph() {
  // Every launch is over: the last one's stream signal released this.
  for (const std::unique_ptr<Instance>& in : instances) destroy_instance(*in);
  if (queue != nullptr) {
    (void)api().zeCommandQueueSynchronize(queue, UINT64_MAX);
    (void)api().zeCommandQueueDestroy(queue);
  }
}

}  // namespace

anydev_status_t graph_create(int device, const anydev_bk_graph_node_t* nodes, std::size_t count,
                             anydev_bk_graph_t* out) {
  if (out == nullptr || (nodes == nullptr && count > 0)) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "graph_create: null nodes or out");
  }
  if (const anydev_status_t s = check_device(device, "graph_create"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (!has_graph_entry_points()) return ANYDEV_BK_DECLINED;
  auto token = std::make_unique<GraphToken>();
  token->graph = std::make_shared<NativeGraph>();
  NativeGraph& g = *token->graph;
  g.device = device;
  if (const anydev_status_t s = plan(g, nodes, count); s != ANYDEV_SUCCESS) return s;
  const DeviceState& d = device_at(device);
  ze_command_queue_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  desc.ordinal = d.queue_ordinal;
  desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  desc.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
  const ze_result_t r = api().zeCommandQueueCreate(d.driver->context, d.device, &desc, &g.queue);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(
        r, "zeCommandQueueCreate",
        cat("graph_create on level_zero device ", device, " (queue group ", d.queue_ordinal, ")"));
  }
  // The first instance now, so that a replay records nothing unless replays overlap.
  Instance* first = nullptr;
  if (const anydev_status_t s = idle_instance(g, "graph_create", &first); s != ANYDEV_SUCCESS) {
    return s;
  }
  *out = reinterpret_cast<anydev_bk_graph_t>(token.release());
  return ANYDEV_SUCCESS;
}

anydev_status_t graph_launch(anydev_bk_graph_t graph, anydev_bk_stream_t stream_token) {
  auto* token = reinterpret_cast<GraphToken*>(graph);
  LzStream* stream = as_stream(stream_token);
  if (token == nullptr || stream == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "graph_launch: null graph or stream");
  }
  NativeGraph& g = *token->graph;
  if (stream->device != g.device) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("graph_launch: a graph of level_zero device ", g.device,
                            " on a stream of device ", stream->device));
  }
  const std::lock_guard<std::mutex> graph_lock(g.mutex);
  Instance* in = nullptr;
  if (const anydev_status_t s = idle_instance(g, "graph_launch", &in); s != ANYDEV_SUCCESS) {
    return s;
  }
  const std::lock_guard<std::mutex> stream_lock(stream->mutex);
  // The graph outlives what the stream appends now: it goes with the
  // stream's next signal, which is the launch's own unless it failed (not
  // hold_locked, which may signal before the launch is appended).
  stream->held.push_back(token->graph);
  return launch_locked(g, *in, *stream);
}

anydev_status_t graph_destroy(anydev_bk_graph_t graph) {
  auto* token = reinterpret_cast<GraphToken*>(graph);
  if (token == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "graph_destroy: null graph");
  }
  {
    // Each launch's slot holds the graph: letting the slots go lets the last
    // of them free it once it has signaled and is recycled (lz_event_slots.h).
    const std::lock_guard<std::mutex> lock(token->graph->mutex);
    for (const std::unique_ptr<Instance>& in : token->graph->instances) in->finished.reset();
  }
  delete token;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::level_zero
