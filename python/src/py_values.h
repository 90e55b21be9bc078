// SPDX-License-Identifier: Apache-2.0
// Python values <-> buffer elements of a run-time dtype: encoding a Python
// number into the element's bytes (for fills and element writes), decoding
// bytes into a Python number, dtype names and buffer-protocol format codes.
// Pure functions; call with the GIL held.
#ifndef ANYDEV_PYTHON_PY_VALUES_H_
#define ANYDEV_PYTHON_PY_VALUES_H_

#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "anydev/anydev.h"

namespace anydev::python {

struct Element {
  std::array<unsigned char, 16> bytes{};
  std::size_t size = 0;
};

// "float32" (or a numpy/torch dtype object whose str() ends in the name,
// e.g. numpy.float32, torch.float32) -> dtype; TypeError otherwise.
anydev_dtype_t dtype_from_object(pybind11::handle dtype);
std::string dtype_name(anydev_dtype_t dtype);

// TypeError/OverflowError when the value does not fit the dtype.
Element encode(anydev_dtype_t dtype, pybind11::handle value);
pybind11::object decode(anydev_dtype_t dtype, const void* bytes);

// struct-module format code for the buffer protocol (a static string);
// nullptr for bfloat16 (no standard code).
const char* buffer_format(anydev_dtype_t dtype);

// What a buffer-protocol object's elements are, read from its format code
// and item size: the anydev dtype they match (nullopt when none: a struct,
// several values per item, a byte order other than the host's), and whether
// they are plain bytes ("B", "c" or no format), which copy into a buffer of
// any dtype as its raw bytes.
struct FormatElements {
  std::optional<anydev_dtype_t> dtype;
  bool raw_bytes = false;
};
FormatElements format_elements(const char* format, std::size_t itemsize);

}  // namespace anydev::python

#endif  // ANYDEV_PYTHON_PY_VALUES_H_
