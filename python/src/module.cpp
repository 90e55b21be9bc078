// SPDX-License-Identifier: Apache-2.0
// The extension module anydev._anydev; python/anydev/__init__.py re-exports
// it. Each bind_* lives beside the types it binds.
#include <pybind11/pybind11.h>

#include "py_buffer.h"
#include "py_errors.h"
#include "py_share.h"

namespace anydev::python {
void bind_comm(pybind11::module_& m);
void bind_context(pybind11::module_& m);
void bind_graph(pybind11::module_& m);
void bind_logging(pybind11::module_& m);
void bind_timing(pybind11::module_& m);
}  // namespace anydev::python

PYBIND11_MODULE(_anydev, m) {
  m.doc() = "anydev: a hardware abstraction layer for accelerators (Python binding of the C ABI)";
  m.attr("__version__") = anydev_version_string();
  anydev::python::bind_errors(m);
  anydev::python::bind_share_types(m);
  anydev::python::bind_context(m);
  anydev::python::bind_timing(m);
  anydev::python::bind_buffers(m);
  anydev::python::bind_graph(m);
  anydev::python::bind_comm(m);
  anydev::python::bind_logging(m);
}
