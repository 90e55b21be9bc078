// SPDX-License-Identifier: Apache-2.0
// Native graphs through cl_khr_command_buffer (docs/graphs.md): the nodes
// recorded once into a command buffer, finalized, and each launch one
// clEnqueueCommandBufferKHR on the stream's in-order queue, which orders it
// after the stream's earlier work and before its later work. Dependencies
// are the extension's sync points (an empty node is a command-buffer barrier
// on its dependencies' sync points).
//
// The command buffer is recorded on a queue of the graph's own with the
// properties of a stream's queue, and is created with
// CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, so launches on several streams may
// be pending at once. A stream whose queue the platform finds incompatible
// (CL_INCOMPATIBLE_COMMAND_QUEUE_KHR: a queue wrapped from the user with
// other properties) gets the nodes enqueued one by one instead, as the
// core's replay does. Releasing a command buffer defers its deletion until
// its pending launches ran, so graph_destroy never blocks.
//
// Declined (the core replays those graphs): a device without the extension
// at a version whose entry points match the headers this backend is built
// with (0.9.0 to 0.9.4; 0.9.5 added a properties parameter to the command
// calls) or without simultaneous use; any node with a host side (pinned host
// buffers stay mapped, and commands must not touch a mapped buffer). A fill
// at an offset that is not a multiple of its pattern size is its pieces
// (opencl_fill_pieces.h), joined by a barrier that is the node's sync point.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "opencl_entries.h"
#include "opencl_errors.h"
#include "opencl_fill_pieces.h"
#include "opencl_services.h"
#include "opencl_stream.h"

namespace anydev::opencl {
namespace {

// The extension's entry points on one platform.
struct CommandBufferCalls {
  clCreateCommandBufferKHR_fn create = nullptr;
  clCommandCopyBufferKHR_fn copy = nullptr;
  clCommandFillBufferKHR_fn fill = nullptr;
  clCommandBarrierWithWaitListKHR_fn barrier = nullptr;
  clFinalizeCommandBufferKHR_fn finalize = nullptr;
  clEnqueueCommandBufferKHR_fn enqueue = nullptr;
  clReleaseCommandBufferKHR_fn release = nullptr;
};

// Owned by the core from graph_create to graph_destroy; never changes after
// graph_create, so launches on any threads read it concurrently (OpenCL
// calls are thread-safe).
struct ClGraph {
  Device* device = nullptr;
  CommandBufferCalls calls;
  cl_command_queue recording_queue = nullptr;  // owned
  cl_command_buffer_khr buffer = nullptr;      // owned
  std::vector<anydev_bk_graph_node_t> nodes;   // for an incompatible queue (deps dropped)
  std::size_t bytes = 0;                       // written per launch, for messages
};

template <class Fn>
bool resolve_into(cl_platform_id platform, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(cl().clGetExtensionFunctionAddressForPlatform(platform, name));
  return *out != nullptr;
}

bool resolve_calls(cl_platform_id p, CommandBufferCalls* c) {
  return resolve_into(p, "clCreateCommandBufferKHR", &c->create) &&
         resolve_into(p, "clCommandCopyBufferKHR", &c->copy) &&
         resolve_into(p, "clCommandFillBufferKHR", &c->fill) &&
         resolve_into(p, "clCommandBarrierWithWaitListKHR", &c->barrier) &&
         resolve_into(p, "clFinalizeCommandBufferKHR", &c->finalize) &&
         resolve_into(p, "clEnqueueCommandBufferKHR", &c->enqueue) &&
         resolve_into(p, "clReleaseCommandBufferKHR", &c->release);
}

// Whether the device offers cl_khr_command_buffer at 0.9.0 to 0.9.4 with
// simultaneous use (OpenCL 3.0's versioned extension list).
bool device_has_command_buffers(const Device& d) {
  if (d.version_major < 3 || cl().clGetExtensionFunctionAddressForPlatform == nullptr) {
    return false;
  }
  std::size_t size = 0;
  if (cl().clGetDeviceInfo(d.id, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, nullptr, &size) !=
      CL_SUCCESS) {
    return false;
  }
  std::vector<cl_name_version> list(size / sizeof(cl_name_version));
  if (list.empty() || cl().clGetDeviceInfo(d.id, CL_DEVICE_EXTENSIONS_WITH_VERSION,
                                           list.size() * sizeof(cl_name_version), list.data(),
                                           nullptr) != CL_SUCCESS) {
    return false;
  }
  const auto it = std::find_if(list.begin(), list.end(), [](const cl_name_version& e) {
    return std::strcmp(e.name, CL_KHR_COMMAND_BUFFER_EXTENSION_NAME) == 0;
  });
  if (it == list.end() || CL_VERSION_MAJOR(it->version) != 0 ||
      CL_VERSION_MINOR(it->version) != 9 || CL_VERSION_PATCH(it->version) > 4) {
    return false;
  }
  cl_device_command_buffer_capabilities_khr caps = 0;
  if (cl().clGetDeviceInfo(d.id, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof(caps), &caps,
                           nullptr) != CL_SUCCESS) {
    return false;
  }
  return (caps & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) != 0;
}

// Whether every node can be a command of the buffer (see the top).
bool expressible(const anydev_bk_graph_node_t* nodes, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const anydev_bk_graph_node_t& n = nodes[i];
    if (n.kind == ANYDEV_BK_GRAPH_EMPTY) continue;
    if (n.dst.kind != ANYDEV_BK_MEMORY_DEVICE) return false;
    if (n.kind == ANYDEV_BK_GRAPH_COPY && n.src.kind != ANYDEV_BK_MEMORY_DEVICE) return false;
    if (n.kind == ANYDEV_BK_GRAPH_FILL &&
        (n.pattern_size == 0 || n.pattern_size > 16 || n.bytes % n.pattern_size != 0)) {
      return false;
    }
  }
  return true;
}

void release(ClGraph& g) {
  if (g.buffer != nullptr) (void)g.calls.release(g.buffer);
  if (g.recording_queue != nullptr) (void)cl().clReleaseCommandQueue(g.recording_queue);
}

// Records node i, whose dependencies' sync points are in `points`.
cl_int record_node(ClGraph& g, const anydev_bk_graph_node_t& n,
                   std::vector<cl_sync_point_khr>& points, std::size_t i, const char** call) {
  std::vector<cl_sync_point_khr> waits;
  for (std::size_t k = 0; k < n.dep_count; ++k) waits.push_back(points[n.deps[k]]);
  std::sort(waits.begin(), waits.end());
  waits.erase(std::unique(waits.begin(), waits.end()), waits.end());
  const auto count = static_cast<cl_uint>(waits.size());
  const cl_sync_point_khr* wait_list = waits.empty() ? nullptr : waits.data();
  switch (n.kind) {
    case ANYDEV_BK_GRAPH_COPY:
      *call = "clCommandCopyBufferKHR";
      return g.calls.copy(g.buffer, nullptr, static_cast<cl_mem>(n.src.handle),
                          static_cast<cl_mem>(n.dst.handle), n.src.offset, n.dst.offset, n.bytes,
                          count, wait_list, &points[i], nullptr);
    case ANYDEV_BK_GRAPH_FILL: {
      const FillPieces pieces = fill_pieces(n.pattern, n.pattern_size, n.dst.offset, n.bytes);
      std::array<cl_sync_point_khr, std::tuple_size_v<decltype(pieces.piece)>> done{};
      for (std::size_t k = 0; k < pieces.count; ++k) {
        const FillPiece& p = pieces.piece[k];
        *call = "clCommandFillBufferKHR";
        cl_sync_point_khr* point = pieces.count == 1 ? &points[i] : &done[k];
        if (const cl_int err =
                g.calls.fill(g.buffer, nullptr, static_cast<cl_mem>(n.dst.handle), p.pattern.data(),
                             p.size, p.offset, p.bytes, count, wait_list, point, nullptr);
            err != CL_SUCCESS) {
          return err;
        }
      }
      if (pieces.count == 1) return CL_SUCCESS;
      *call = "clCommandBarrierWithWaitListKHR";
      return g.calls.barrier(g.buffer, nullptr, static_cast<cl_uint>(pieces.count), done.data(),
                             &points[i], nullptr);
    }
    default:
      *call = "clCommandBarrierWithWaitListKHR";
      return g.calls.barrier(g.buffer, nullptr, count, wait_list, &points[i], nullptr);
  }
}

anydev_status_t record(ClGraph& g, const anydev_bk_graph_node_t* nodes, std::size_t count) {
  const auto where = [&](std::size_t i) {
    return cat("graph_create: node ", i, " of ", count, " on OpenCL device ", g.device->index, " (",
               g.device->name, ")");
  };
  if (anydev_status_t s = create_queue(*g.device, &g.recording_queue); s != ANYDEV_SUCCESS) {
    return s;
  }
  const cl_command_buffer_properties_khr properties[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                                         CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
  cl_int err = CL_SUCCESS;
  g.buffer = g.calls.create(1, &g.recording_queue, properties, &err);
  if (err != CL_SUCCESS || g.buffer == nullptr) {
    g.buffer = nullptr;
    return report_cl("clCreateCommandBufferKHR", err, where(0));
  }
  std::vector<cl_sync_point_khr> points(count, 0);
  for (std::size_t i = 0; i < count; ++i) {
    const char* call = "";
    if ((err = record_node(g, nodes[i], points, i, &call)) != CL_SUCCESS) {
      return report_cl(call, err, where(i));
    }
  }
  if ((err = g.calls.finalize(g.buffer)) != CL_SUCCESS) {
    return report_cl("clFinalizeCommandBufferKHR", err, where(count));
  }
  return ANYDEV_SUCCESS;
}

// The nodes one by one with this backend's copy and fill, on a queue the
// command buffer cannot run on.
anydev_status_t enqueue_nodes(const ClGraph& g, anydev_bk_stream_t stream) {
  for (const anydev_bk_graph_node_t& n : g.nodes) {
    anydev_status_t s = ANYDEV_SUCCESS;
    if (n.kind == ANYDEV_BK_GRAPH_COPY) {
      s = copy(stream, n.dst, n.src, n.bytes);
    } else if (n.kind == ANYDEV_BK_GRAPH_FILL) {
      s = fill(stream, n.dst, n.pattern, n.pattern_size, n.bytes);
    }
    if (s != ANYDEV_SUCCESS) return s;
  }
  return ANYDEV_SUCCESS;
}

}  // namespace

anydev_status_t graph_create(int device, const anydev_bk_graph_node_t* nodes, std::size_t count,
                             anydev_bk_graph_t* out) {
  if (out == nullptr || (nodes == nullptr && count > 0)) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "graph_create: null nodes or out");
  }
  Device* d = nullptr;
  if (anydev_status_t s = find_device(device, "graph_create", &d); s != ANYDEV_SUCCESS) return s;
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t k = 0; k < nodes[i].dep_count; ++k) {
      if (nodes[i].deps[k] >= i) {
        return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                         cat("graph_create: node ", i, " depends on node ", nodes[i].deps[k],
                             ", which does not come before it"));
      }
    }
  }
  if (!expressible(nodes, count) || !device_has_command_buffers(*d)) return ANYDEV_BK_DECLINED;
  auto g = std::make_unique<ClGraph>();
  g->device = d;
  if (!resolve_calls(d->platform, &g->calls)) return ANYDEV_BK_DECLINED;
  if (anydev_status_t s = record(*g, nodes, count); s != ANYDEV_SUCCESS) {
    release(*g);
    return s;
  }
  g->nodes.assign(nodes, nodes + count);
  for (anydev_bk_graph_node_t& n : g->nodes) {
    n.deps = nullptr;
    n.dep_count = 0;
    g->bytes += n.bytes;
  }
  *out = reinterpret_cast<anydev_bk_graph_t>(g.release());
  return ANYDEV_SUCCESS;
}

anydev_status_t graph_launch(anydev_bk_graph_t graph, anydev_bk_stream_t stream_handle) {
  auto* g = reinterpret_cast<ClGraph*>(graph);
  Stream* stream = as_stream(stream_handle);
  if (g == nullptr || stream == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "graph_launch: null graph or stream");
  }
  admit_command(*stream);
  cl_event event = nullptr;
  cl_command_queue queue = stream->queue;
  const cl_int err = g->calls.enqueue(1, &queue, g->buffer, 0, nullptr, &event);
  if (err == CL_INCOMPATIBLE_COMMAND_QUEUE_KHR) return enqueue_nodes(*g, stream_handle);
  if (err != CL_SUCCESS) {
    return report_cl(
        "clEnqueueCommandBufferKHR", err,
        describe(*stream, "graph launch", g->bytes) + cat(" (", g->nodes.size(), " nodes)"));
  }
  track_command(*stream, event, "clEnqueueCommandBufferKHR", "graph launch", g->bytes);
  return ANYDEV_SUCCESS;
}

anydev_status_t graph_destroy(anydev_bk_graph_t graph) {
  auto* g = reinterpret_cast<ClGraph*>(graph);
  if (g == nullptr) return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "graph_destroy: null graph");
  release(*g);  // the command buffer goes once its pending launches ran
  delete g;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::opencl
