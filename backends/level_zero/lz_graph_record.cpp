// SPDX-License-Identifier: Apache-2.0
// Planning and recording a native graph (lz_graph.h, lz_graph.cpp).
#include <algorithm>
#include <cstring>

#include "anydev/kit/memory_ref.h"
#include "lz_errors.h"
#include "lz_fill_kernel.h"
#include "lz_fill_period.h"
#include "lz_graph.h"
#include "lz_state.h"

namespace anydev::level_zero {
namespace {

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
      case Command::Kind::kKernelFill:
        r = append_fill_kernel(device_at(g.device), list, c.dst, g.patterns[c.pattern].data(),
                               c.pattern_size, c.bytes, call);
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

}  // namespace

void destroy_instance(const Instance& in) {
  const LoaderApi& ze = api();
  if (in.list != nullptr) (void)ze.zeCommandListDestroy(in.list);
  if (in.start != nullptr) (void)ze.zeEventDestroy(in.start);
  if (in.done != nullptr) (void)ze.zeEventDestroy(in.done);
  if (in.pool != nullptr) (void)ze.zeEventPoolDestroy(in.pool);
}

// The level of each node (levels start at 0) and, for an empty node, the
// level its dependencies are complete after (-1: none). Plans the commands.
anydev_status_t plan_graph(NativeGraph& g, const anydev_bk_graph_node_t* nodes, std::size_t count) {
  DeviceState& d = device_at(g.device);
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
      if (n.dst.kind == ANYDEV_BK_MEMORY_USER_HOST) return ANYDEV_BK_DECLINED;
      // Wider than the group fills: anydev's fill kernel, as a stream's fill
      // does, only into the graph's own device memory.
      if (shortest_period(n.pattern, n.pattern_size) > d.max_native_fill &&
          (n.dst.kind != ANYDEV_BK_MEMORY_DEVICE || n.dst.device != g.device ||
           !fill_kernel_ready(d))) {
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
        c.pattern = g.patterns.size();
        c.pattern_size = shortest_period(n.pattern, n.pattern_size);
        c.kind =
            c.pattern_size > d.max_native_fill ? Command::Kind::kKernelFill : Command::Kind::kFill;
        g.patterns.emplace_back();
        std::memcpy(g.patterns.back().data(), n.pattern, c.pattern_size);
      }
      g.commands.push_back(c);
    }
  }
  return ANYDEV_SUCCESS;
}

// A new instance of the graph: its events and its recorded list.
anydev_status_t record_instance(const NativeGraph& g, const char* operation, Instance* out) {
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

NativeGraph::~NativeGraph() {
  // Every launch is over: the last one's stream signal released this.
  for (const std::unique_ptr<Instance>& in : instances) destroy_instance(*in);
  if (queue != nullptr) {
    (void)api().zeCommandQueueSynchronize(queue, UINT64_MAX);
    (void)api().zeCommandQueueDestroy(queue);
  }
}

}  // namespace anydev::level_zero
