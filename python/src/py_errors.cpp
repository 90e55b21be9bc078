// SPDX-License-Identifier: Apache-2.0
#include "py_errors.h"

#include <array>

namespace py = pybind11;

namespace anydev::python {
namespace {

struct ErrorClass {
  anydev_status_t status;
  const char* name;
  PyObject* builtin;  // extra base, or nullptr
  const char* doc;
  PyObject* type = nullptr;
};

std::array<ErrorClass, 9>& classes() {
  static std::array<ErrorClass, 9> table{{
      {ANYDEV_ERROR_INVALID_ARGUMENT, "InvalidArgumentError", PyExc_ValueError,
       "An argument is invalid (status 'invalid_argument'); also a ValueError."},
      {ANYDEV_ERROR_OUT_OF_RANGE, "OutOfRangeError", PyExc_IndexError,
       "An index, size or offset is out of range (status 'out_of_range'); also an IndexError."},
      {ANYDEV_ERROR_OUT_OF_MEMORY, "OutOfMemoryError", PyExc_MemoryError,
       "The device or host is out of memory (status 'out_of_memory'); also a MemoryError."},
      {ANYDEV_ERROR_BACKEND_UNAVAILABLE, "BackendUnavailableError", nullptr,
       "The backend is not available here (status 'backend_unavailable'); the message says "
       "why."},
      {ANYDEV_ERROR_DEVICE, "DeviceError", nullptr,
       "The device or its driver failed (status 'device')."},
      {ANYDEV_ERROR_UNSUPPORTED, "UnsupportedError", nullptr,
       "The backend or anydev does not support the operation (status 'unsupported')."},
      {ANYDEV_ERROR_INVALID_STATE, "InvalidStateError", nullptr,
       "The object's state does not allow the operation (status 'invalid_state')."},
      {ANYDEV_ERROR_INTERNAL, "InternalError", nullptr,
       "A bug in anydev (status 'internal'); please report it."},
      {ANYDEV_ERROR_NOT_READY, "NotReadyError", nullptr,
       "The work the operation depends on has not completed yet (status 'not_ready'); ask "
       "again later."},
  }};
  return table;
}

PyObject* base_error = nullptr;

void raise(const anydev::Error& e) {
  PyObject* type = base_error;
  for (const ErrorClass& c : classes()) {
    if (static_cast<int>(c.status) == static_cast<int>(e.status())) type = c.type;
  }
  py::object message;
  try {
    message = library_text(e.what());
  } catch (py::error_already_set& error) {
    error.restore();
    return;
  }
  py::object instance =
      py::reinterpret_steal<py::object>(PyObject_CallFunctionObjArgs(type, message.ptr(), nullptr));
  if (!instance) return;  // the call set a Python error
  instance.attr("status") = py::str(to_string(e.status()));
  instance.attr("code") = py::int_(static_cast<int>(e.status()));
  PyErr_SetObject(type, instance.ptr());
}

}  // namespace

py::str library_text(std::string_view text) {
  PyObject* decoded =
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  if (decoded == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(decoded);
}

void bind_errors(py::module_& m) {
  base_error = PyErr_NewExceptionWithDoc(
      "anydev.Error",
      "An anydev operation failed. .status is the status name ('out_of_range', ...), .code its "
      "number; the message names the operation and the values.",
      PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(base_error);
  for (ErrorClass& c : classes()) {
    const std::string qualified = std::string("anydev.") + c.name;
    py::tuple bases = c.builtin != nullptr
                          ? py::make_tuple(py::handle(base_error), py::handle(c.builtin))
                          : py::make_tuple(py::handle(base_error));
    c.type = PyErr_NewExceptionWithDoc(qualified.c_str(), c.doc, bases.ptr(), nullptr);
    m.attr(c.name) = py::handle(c.type);
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const anydev::Error& e) {
      raise(e);
    }
  });
}

}  // namespace anydev::python
