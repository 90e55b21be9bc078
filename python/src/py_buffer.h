// SPDX-License-Identifier: Apache-2.0
// The Python HostBuffer and DeviceBuffer: one reference to a C buffer of a
// run-time dtype (the C++ API's HostBuffer<T> fixes T at compile time).
// Shared by copy like the C++ types; thread-safe as the C ABI. Element
// access of a HostBuffer is plain memory access (no synchronization, as in
// C++); element access of a DeviceBuffer copies synchronously. After
// take_ptr the object keeps its handle but every operation that needs the
// memory raises InvalidStateError naming take_ptr (len() is 0).
#ifndef ANYDEV_PYTHON_PY_BUFFER_H_
#define ANYDEV_PYTHON_PY_BUFFER_H_

#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

#include "anydev/anydev.hpp"

namespace anydev::python {

struct Buffer {
  anydev::detail::BufferHandle handle;
  anydev_memory_kind_t kind = ANYDEV_MEMORY_HOST;
  anydev_dtype_t dtype = ANYDEV_DTYPE_FLOAT32;
  std::size_t count = 0;
  bool taken = false;  // take_ptr handed the memory to the caller

  // The handle, or InvalidStateError naming `method` (and take_ptr when the
  // memory was taken).
  anydev_buffer_t get(const char* method) const;
  anydev_buffer_info_t info(const char* method) const;
  bool is_host() const { return kind == ANYDEV_MEMORY_HOST; }
  const char* type_name() const { return is_host() ? "HostBuffer" : "DeviceBuffer"; }
};
struct HostBuffer : Buffer {};
struct DeviceBuffer : Buffer {};

// A view of a Python object's memory through the buffer protocol (bytes,
// bytearray, memoryview, a NumPy array), released on destruction. `flags`
// are PyBUF_* request flags; an object that cannot give such a view is a
// TypeError "<expected>, not <type name>". Call with the GIL held.
class PyView {
 public:
  PyView(pybind11::handle object, int flags, const std::string& expected);
  ~PyView() { PyBuffer_Release(&view_); }
  PyView(const PyView&) = delete;
  PyView& operator=(const PyView&) = delete;
  void* data() const { return view_.buf; }
  std::size_t bytes() const { return static_cast<std::size_t>(view_.len); }
  const char* format() const { return view_.format; }
  std::size_t itemsize() const { return static_cast<std::size_t>(view_.itemsize); }

 private:
  Py_buffer view_{};
};

// A HostBuffer or DeviceBuffer object for a C buffer, taking over the
// caller's reference.
pybind11::object wrap_buffer(anydev_buffer_t owned);

void bind_buffers(pybind11::module_& m);
// __dlpack__, __dlpack_device__, anydev.from_dlpack (py_dlpack.cpp).
void bind_dlpack(pybind11::module_& m, pybind11::class_<Buffer>& buffer);

}  // namespace anydev::python

#endif  // ANYDEV_PYTHON_PY_BUFFER_H_
