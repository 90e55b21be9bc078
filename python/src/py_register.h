// SPDX-License-Identifier: Apache-2.0
// Registered host memory in Python (py_register.cpp).
#ifndef ANYDEV_PYTHON_PY_REGISTER_H_
#define ANYDEV_PYTHON_PY_REGISTER_H_

#include <pybind11/pybind11.h>

#include "anydev/anydev.hpp"
#include "py_buffer.h"

namespace anydev::python {

// DeviceContext.register_host_memory and register_host_pointer.
void bind_register_context(pybind11::class_<anydev::DeviceContext>& cls);
// DeviceContext.get_attribute, attributes, uuid, pci_bus_id, get_api_version
// (py_attributes.cpp).
void bind_attributes_context(pybind11::class_<anydev::DeviceContext>& cls);
// Buffer.is_registered.
void bind_register_buffer(pybind11::class_<Buffer>& cls);

}  // namespace anydev::python

#endif  // ANYDEV_PYTHON_PY_REGISTER_H_
