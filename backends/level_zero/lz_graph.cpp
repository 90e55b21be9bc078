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
#include "lz_graph.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "lz_entries.h"
#include "lz_errors.h"
#include "lz_objects.h"
#include "lz_state.h"

namespace anydev::level_zero {
namespace {

constexpr std::size_t kMaxInstances = 4;

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
    if (const anydev_status_t s = record_instance(g, operation, fresh.get()); s != ANYDEV_SUCCESS) {
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
  if (const anydev_status_t s = plan_graph(g, nodes, count); s != ANYDEV_SUCCESS) return s;
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
