// SPDX-License-Identifier: Apache-2.0
// Sharing between processes: ShareHandle and the members that make, export
// and import shareable buffers and events (py_share.cpp).
#ifndef ANYDEV_PYTHON_PY_SHARE_H_
#define ANYDEV_PYTHON_PY_SHARE_H_

#include <pybind11/pybind11.h>

#include "anydev/anydev.hpp"
#include "py_buffer.h"

namespace anydev::python {

// ShareHandle and the tracker hook; call before the classes below.
void bind_share_types(pybind11::module_& m);
void bind_share_context(pybind11::class_<anydev::DeviceContext>& cls);
void bind_share_buffer(pybind11::class_<Buffer>& cls);
void bind_share_event(pybind11::class_<anydev::DeviceEvent>& cls);

}  // namespace anydev::python

#endif  // ANYDEV_PYTHON_PY_SHARE_H_
