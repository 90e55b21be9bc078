// SPDX-License-Identifier: Apache-2.0
// Timed events and stream priorities in Python (docs/python.md, "Timing and
// priorities"): DeviceEvent.elapsed_time / timing / blocking_sync,
// DeviceStream.priority, DeviceContext.stream_priority_range,
// execution_time and execution_time_iter. create_event(timing=...,
// blocking_sync=...) and create_stream(priority) are in py_context.cpp.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>

#include "anydev/anydev.hpp"
#include "py_errors.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

using anydev::DeviceContext;
using anydev::DeviceEvent;
using anydev::DeviceStream;

// Calls fn iterations times under the C++ execution_time, with the GIL
// released except while fn runs (the wait for the end event needs none).
std::int64_t timed(const py::object& self, const py::function& fn, std::size_t iterations,
                   bool with_index) {
  const auto& ctx = self.cast<const DeviceContext&>();
  const WithoutGil unlocked;
  return ctx.execution_time_iter(
      [&](const DeviceContext&, std::size_t i) {
        const py::gil_scoped_acquire locked;
        if (with_index) {
          fn(self, i);
        } else {
          fn(self);
        }
      },
      iterations);
}

}  // namespace

void bind_timing(py::module_& m) {
  auto event = py::reinterpret_borrow<py::class_<DeviceEvent>>(m.attr("DeviceEvent"));
  event
      .def(
          "elapsed_time",
          [](const DeviceEvent& start, const DeviceEvent& end) { return start.elapsed_time(end); },
          py::arg("end"), py::call_guard<WithoutGil>(),
          "Milliseconds (float) from this event's work to `end`'s, as CUDA's "
          "cuEventElapsedTime. Both need timing=True and must be recorded: InvalidArgumentError "
          "for an event without timing, InvalidStateError for one never recorded, "
          "NotReadyError while the work is not complete.")
      .def_property_readonly("timing", &DeviceEvent::timing,
                             "Whether it was created with timing=True.")
      .def_property_readonly("blocking_sync", &DeviceEvent::blocking_sync,
                             "Whether it was created with blocking_sync=True.");
  auto stream = py::reinterpret_borrow<py::class_<DeviceStream>>(m.attr("DeviceStream"));
  stream.def_property_readonly("priority", &DeviceStream::priority,
                               "The priority it was created with (after clamping).");
  auto ctx = py::reinterpret_borrow<py::class_<DeviceContext>>(m.attr("DeviceContext"));
  ctx.def(
         "stream_priority_range",
         [](const DeviceContext& c) {
           const anydev::StreamPriorityRange r = c.stream_priority_range();
           return py::make_tuple(r.least, r.greatest);
         },
         "(least, greatest) priorities, as CUDA's: least is 0, the normal priority, and "
         "greatest <= 0 the highest; (0, 0) on a device without priorities.")
      .def(
          "execution_time",
          [](const py::object& self, const py::function& fn, std::size_t iterations) {
            return timed(self, fn, iterations, false);
          },
          py::arg("fn"), py::arg("iterations") = 1,
          "Mojo's execution_time: the nanoseconds (int) the device took for the work that "
          "`iterations` calls of fn(ctx) enqueue on this context's stream.")
      .def(
          "execution_time_iter",
          [](const py::object& self, const py::function& fn, std::size_t iterations) {
            return timed(self, fn, iterations, true);
          },
          py::arg("fn"), py::arg("iterations"),
          "Mojo's execution_time_iter: as execution_time, calling fn(ctx, i) for i in "
          "range(iterations).");
}

}  // namespace anydev::python
