// SPDX-License-Identifier: Apache-2.0
// The Python DeviceGraph and GraphNode (the C++ API's, graph.hpp): copies,
// fills and empty nodes recorded once and replayed. Buffers are the
// run-time-dtype Python buffers, so a copy checks that both dtypes match
// and a fill encodes its value as the buffer's dtype. Every call that enters
// anydev releases the GIL. Thread-safe as the C ABI. Stream capture:
// ctx.capture(graph) (a with-block), ctx.begin_capture / end_capture.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "py_buffer.h"
#include "py_errors.h"
#include "py_values.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

// The C ABI's dependency array from a Python sequence of GraphNode.
std::vector<anydev_graph_node_t> node_ids(const std::vector<anydev::GraphNode>& deps) {
  std::vector<anydev_graph_node_t> out;
  out.reserve(deps.size());
  for (const anydev::GraphNode& node : deps) out.push_back(node.id);
  return out;
}

anydev_graph_t get(const anydev::DeviceGraph& graph, const char* method) {
  if (graph.handle() == nullptr) detail::throw_empty("DeviceGraph", method, "graph");
  return graph.handle();
}

// `with ctx.capture(graph):` (StreamCapture in graph.hpp): begins at
// entry, ends at exit. An exit through an exception still ends the capture
// and lets the exception through. Used on one thread (captures are per
// thread).
struct PyCapture {
  anydev::DeviceContext ctx;
  anydev::DeviceGraph graph;
};

void bind_capture(py::module_& m) {
  py::class_<PyCapture>(m, "StreamCapture",
                        "ctx.capture(graph): a with-block in which ctx's copies and fills are "
                        "recorded into graph instead of run.")
      .def(
          "__enter__",
          [](py::object self) {
            auto& c = self.cast<PyCapture&>();
            const WithoutGil unlocked;
            c.graph.begin_capture(c.ctx);
            return self;
          },
          "Begins the capture: ctx's copies and fills are recorded from here.")
      .def(
          "__exit__",
          [](PyCapture& c, py::object type, py::object, py::object) {
            const anydev_context_t ctx = c.ctx.handle();
            anydev_status_t status;
            {
              const WithoutGil unlocked;
              status = anydev_context_end_capture(ctx);
            }
            if (type.is_none()) check(status);  // else the exception propagates
            return false;
          },
          "Ends the capture; raises its error unless the block already raised one.");

  auto ctx_cls = py::reinterpret_borrow<py::class_<anydev::DeviceContext>>(m.attr("DeviceContext"));
  ctx_cls
      .def(
          "capture",
          [](const anydev::DeviceContext& ctx, const anydev::DeviceGraph& graph) {
            return PyCapture{ctx, graph};
          },
          py::arg("graph"),
          "A with-block in which the copies and fills enqueued on this context's stream become "
          "nodes of graph (each after the previous one) instead of running.")
      .def(
          "begin_capture",
          [](const anydev::DeviceContext& ctx, const anydev::DeviceGraph& graph) {
            const WithoutGil unlocked;
            graph.begin_capture(ctx);
          },
          py::arg("graph"), "Starts recording this stream's copies and fills into graph.")
      .def("end_capture", &anydev::DeviceContext::end_capture, py::call_guard<WithoutGil>(),
           "Ends the capture of this context's stream (on the thread that began it).")
      .def_property_readonly("is_capturing", &anydev::DeviceContext::is_capturing,
                             "True while this context's stream is capturing into a graph.");
}

}  // namespace

void bind_graph(py::module_& m) {
  py::class_<anydev::GraphNode>(m, "GraphNode",
                                "A node of one DeviceGraph, as add_* returned it: a dependency "
                                "for later nodes of the same graph.")
      .def_property_readonly(
          "id", [](const anydev::GraphNode& n) { return n.id; },
          "The node's number (the C ABI's anydev_graph_node_t).")
      .def("__eq__", [](const anydev::GraphNode& a, const anydev::GraphNode& b) { return a == b; })
      .def("__hash__", [](const anydev::GraphNode& n) { return py::hash(py::int_(n.id)); })
      .def("__repr__", [](const anydev::GraphNode& n) {
        return "GraphNode(" + std::to_string(n.id & 0xffffffffu) + ")";
      });

  py::class_<anydev::DeviceGraph>(
      m, "DeviceGraph",
      "Copies, fills and empty nodes on one context's device, recorded once and replayed many "
      "times (one native launch where the backend has graphs). Building ends at instantiate() "
      "or the first replay(). The graph keeps every buffer it names alive.")
      .def(py::init([](const anydev::DeviceContext& ctx) {
             const WithoutGil unlocked;
             return anydev::DeviceGraph(ctx);
           }),
           py::arg("ctx"))
      .def(
          "add_copy",
          [](const anydev::DeviceGraph& g, const Buffer& dst, const Buffer& src,
             const std::vector<anydev::GraphNode>& dependencies) {
            if (dst.dtype != src.dtype) {
              throw Error(Status::invalid_argument,
                          "DeviceGraph.add_copy: a " + dtype_name(dst.dtype) +
                              " destination and a " + dtype_name(src.dtype) +
                              " source (the dtypes must match)");
            }
            const anydev_graph_t graph = get(g, "add_copy");
            const anydev_buffer_t d = dst.get("add_copy"), s = src.get("add_copy");
            const std::vector<anydev_graph_node_t> deps = node_ids(dependencies);
            anydev_graph_node_t out = 0;
            {
              const WithoutGil unlocked;
              check(anydev_graph_add_copy(graph, d, s, deps.data(), deps.size(), &out));
            }
            return anydev::GraphNode{out};
          },
          py::arg("dst"), py::arg("src"),
          py::arg("dependencies") = std::vector<anydev::GraphNode>{},
          "A copy of dst's size from the start of src, after `dependencies`.")
      .def(
          "add_memset",
          [](const anydev::DeviceGraph& g, const Buffer& buf, py::handle value,
             const std::vector<anydev::GraphNode>& dependencies) {
            const Element e = encode(buf.dtype, value);
            const anydev_graph_t graph = get(g, "add_memset");
            const anydev_buffer_t b = buf.get("add_memset");
            const std::vector<anydev_graph_node_t> deps = node_ids(dependencies);
            anydev_graph_node_t out = 0;
            {
              const WithoutGil unlocked;
              check(anydev_graph_add_fill(graph, b, e.bytes.data(), e.size, deps.data(),
                                          deps.size(), &out));
            }
            return anydev::GraphNode{out};
          },
          py::arg("buf"), py::arg("value"),
          py::arg("dependencies") = std::vector<anydev::GraphNode>{},
          "Every element of buf set to value (as buf's dtype), after `dependencies`.")
      .def(
          "add_empty",
          [](const anydev::DeviceGraph& g, const std::vector<anydev::GraphNode>& dependencies) {
            const anydev_graph_t graph = get(g, "add_empty");
            const std::vector<anydev_graph_node_t> deps = node_ids(dependencies);
            anydev_graph_node_t out = 0;
            {
              const WithoutGil unlocked;
              check(anydev_graph_add_empty(graph, deps.data(), deps.size(), &out));
            }
            return anydev::GraphNode{out};
          },
          py::arg("dependencies") = std::vector<anydev::GraphNode>{},
          "A node that only waits for `dependencies` (a join).")
      .def(
          "instantiate",
          [](const anydev::DeviceGraph& g) {
            const WithoutGil unlocked;
            g.instantiate();
          },
          "Ends building and prepares replays (optional: replay() does it).")
      .def(
          "replay",
          [](const anydev::DeviceGraph& g, const anydev::DeviceContext* ctx) {
            const WithoutGil unlocked;
            if (ctx == nullptr) {
              g.replay();
            } else {
              g.replay(*ctx);
            }
          },
          py::arg("ctx") = nullptr,
          "Runs the graph on its context's stream, or on ctx's (same device), in stream order.")
      .def_property_readonly(
          "node_count",
          [](const anydev::DeviceGraph& g) {
            const WithoutGil unlocked;
            return g.node_count();
          },
          "How many nodes the graph has.")
      .def_property_readonly(
          "native",
          [](const anydev::DeviceGraph& g) {
            const WithoutGil unlocked;
            return g.native();
          },
          "True when a replay is one native launch of the backend (instantiates the graph).");
  bind_capture(m);
}

}  // namespace anydev::python
