// SPDX-License-Identifier: Apache-2.0
// DeviceContext.register_host_memory and HostBuffer.is_registered
// (docs/registered-memory.md, docs/python.md): host memory that Python
// already owns (a NumPy array or anything with the writable buffer
// protocol, a CPU torch tensor, or an address and a size) registered as a
// HostBuffer. The buffer keeps the object (and, for the buffer protocol, its
// exported view) until anydev has undone the
// registration: then the core's callback drops them, taking the GIL, on
// whichever thread runs it. At interpreter exit they are left alone.
#include "py_register.h"

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "anydev/anydev.hpp"
#include "py_buffer.h"
#include "py_errors.h"
#include "py_values.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

// What a registration keeps alive; deleted by `unregistered`.
struct Keep {
  PyObject* object = nullptr;  // a strong reference
  Py_buffer view{};            // valid when has_view
  bool has_view = false;
};

void unregistered(void* user_data) {
  auto* keep = static_cast<Keep*>(user_data);
  if (!Py_IsInitialized() || _Py_IsFinalizing()) return;  // nothing may touch Python now
  const PyGILState_STATE state = PyGILState_Ensure();
  if (keep->has_view) PyBuffer_Release(&keep->view);
  Py_XDECREF(keep->object);
  delete keep;
  PyGILState_Release(state);
}

// The memory of `object`: its address, byte size and (when `dtype` is None)
// element type; fills `keep` with what must stay alive.
void describe(py::handle object, py::handle dtype, Keep* keep, void** pointer, std::size_t* bytes,
              anydev_dtype_t* type) {
  if (PyObject_CheckBuffer(object.ptr()) != 0) {
    if (PyObject_GetBuffer(object.ptr(), &keep->view,
                           PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
      throw py::error_already_set();
    }
    keep->has_view = true;
    *pointer = keep->view.buf;
    *bytes = static_cast<std::size_t>(keep->view.len);
    if (dtype.is_none()) {
      *type = py::hasattr(object, "dtype") ? dtype_from_object(object.attr("dtype"))
                                           : ANYDEV_DTYPE_UINT8;
    }
  } else if (py::hasattr(object, "data_ptr") && py::hasattr(object, "is_contiguous")) {
    // A torch tensor: its storage on the CPU, contiguous.
    const std::string device = py::str(object.attr("device").attr("type"));
    if (device != "cpu") {
      throw Error(Status::invalid_argument,
                  "DeviceContext.register_host_memory: the tensor is on " + device +
                      ", not in host memory");
    }
    if (!object.attr("is_contiguous")().cast<bool>()) {
      throw Error(Status::invalid_argument,
                  "DeviceContext.register_host_memory: the tensor is not contiguous");
    }
    *pointer = reinterpret_cast<void*>(object.attr("data_ptr")().cast<std::uintptr_t>());
    *bytes = object.attr("element_size")().cast<std::size_t>() *
             object.attr("numel")().cast<std::size_t>();
    if (dtype.is_none()) *type = dtype_from_object(object.attr("dtype"));
  } else {
    throw py::type_error(
        "DeviceContext.register_host_memory: expected a NumPy array (or another writable, "
        "C-contiguous object with the buffer protocol) or a CPU torch tensor, got " +
        std::string(py::repr(object.get_type())));
  }
  if (!dtype.is_none()) *type = dtype_from_object(dtype);
  keep->object = object.ptr();
  Py_INCREF(keep->object);
}

py::object register_host(const DeviceContext& c, void* pointer, std::size_t bytes,
                         anydev_dtype_t type, Keep* keep) {
  const anydev_context_t ctx = c.handle();
  if (ctx == nullptr)
    anydev::detail::throw_empty("DeviceContext", "register_host_memory", "context");
  anydev_buffer_t out = nullptr;
  anydev_status_t status = ANYDEV_SUCCESS;
  {
    const WithoutGil unlocked;
    status = anydev_context_register_host_memory(
        ctx, pointer, bytes, type, keep != nullptr ? &unregistered : nullptr, keep, &out);
  }
  if (status != ANYDEV_SUCCESS) {
    if (keep != nullptr) {
      if (keep->has_view) PyBuffer_Release(&keep->view);
      Py_XDECREF(keep->object);
      delete keep;
    }
    check(status);
  }
  return wrap_buffer(out);
}

}  // namespace

void bind_register_context(py::class_<DeviceContext>& cls) {
  cls.def(
         "register_host_memory",
         [](const DeviceContext& c, py::object memory, py::object dtype) {
           auto* keep = new Keep;
           void* pointer = nullptr;
           std::size_t bytes = 0;
           anydev_dtype_t type = ANYDEV_DTYPE_UINT8;
           try {
             describe(memory, dtype, keep, &pointer, &bytes, &type);
           } catch (...) {
             if (keep->has_view) PyBuffer_Release(&keep->view);
             delete keep;
             throw;
           }
           return register_host(c, pointer, bytes, type, keep);
         },
         py::arg("memory"), py::arg("dtype") = py::none(),
         "Registers memory Python owns (a NumPy array, a writable C-contiguous buffer, a CPU "
         "torch tensor) with the device and returns a HostBuffer over it (its dtype, or `dtype`) "
         "whose copies run as from pinned memory. The buffer keeps the object alive; the "
         "registration is undone once the last buffer and view over it are gone and their work "
         "is done. Errors as the C API (anydev_context_register_host_memory).")
      .def(
          "register_host_pointer",
          [](const DeviceContext& c, std::uintptr_t address, std::size_t bytes, py::object dtype) {
            const anydev_dtype_t type =
                dtype.is_none() ? ANYDEV_DTYPE_UINT8 : dtype_from_object(dtype);
            return register_host(c, reinterpret_cast<void*>(address), bytes, type, nullptr);
          },
          py::arg("address"), py::arg("bytes"), py::arg("dtype") = py::none(),
          "register_host_memory for a raw address (an int) of `bytes` bytes: nothing is kept "
          "alive, so the caller keeps the memory valid until the buffer and its work are gone.");
}

void bind_register_buffer(py::class_<Buffer>& cls) {
  cls.def_property_readonly(
      "is_registered",
      [](const Buffer& b) {
        int out = 0;
        check(anydev_buffer_is_registered(b.get("is_registered"), &out));
        return out != 0;
      },
      "True when the buffer is host memory registered with register_host_memory.");
}

}  // namespace anydev::python
