// SPDX-License-Identifier: Apache-2.0
#include "py_values.h"

#include <bit>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "anydev/anydev.hpp"

namespace py = pybind11;

namespace anydev::python {
namespace {

template <class T>
Element pack(T value) {
  Element e;
  static_assert(sizeof(T) <= sizeof(e.bytes));
  std::memcpy(e.bytes.data(), &value, sizeof(T));
  e.size = sizeof(T);
  return e;
}

template <class T>
T unpack(const void* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

template <class T>
Element pack_integer(py::handle value, anydev_dtype_t dtype) {
  if (!PyLong_Check(value.ptr()) && !PyIndex_Check(value.ptr())) {
    throw py::type_error("a " + dtype_name(dtype) + " element needs an int, not " +
                         std::string(py::str(value.get_type().attr("__name__"))));
  }
  py::int_ number = py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
  if (!number) throw py::error_already_set();
  const bool in_range = py::bool_(number >= py::int_(std::numeric_limits<T>::min()) &&
                                  number <= py::int_(std::numeric_limits<T>::max()));
  if (!in_range) {
    throw py::value_error(std::string(py::str(number)) + " does not fit in " + dtype_name(dtype));
  }
  if constexpr (std::is_signed_v<T>) {
    return pack(static_cast<T>(number.cast<long long>()));
  } else {
    return pack(static_cast<T>(number.cast<unsigned long long>()));
  }
}

double as_double(py::handle value, anydev_dtype_t dtype) {
  if (PyComplex_Check(value.ptr())) {
    throw py::type_error("a " + dtype_name(dtype) + " element cannot hold a complex value");
  }
  const double d = PyFloat_AsDouble(value.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::type_error("a " + dtype_name(dtype) + " element needs a real number, not " +
                         std::string(py::str(value.get_type().attr("__name__"))));
  }
  return d;
}

std::complex<double> as_complex(py::handle value, anydev_dtype_t dtype) {
  const Py_complex c = PyComplex_AsCComplex(value.ptr());
  if (c.real == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::type_error("a " + dtype_name(dtype) + " element needs a number, not " +
                         std::string(py::str(value.get_type().attr("__name__"))));
  }
  return {c.real, c.imag};
}

}  // namespace

std::string dtype_name(anydev_dtype_t dtype) {
  const char* name = anydev_dtype_name(dtype);
  return name != nullptr ? name : "dtype " + std::to_string(static_cast<int>(dtype));
}

anydev_dtype_t dtype_from_object(py::handle dtype) {
  std::string text = py::str(dtype);
  // numpy.float32 -> "<class 'numpy.float32'>", torch.float32 -> "torch.float32",
  // numpy.dtype('float32') -> "float32".
  if (const auto quote = text.rfind('\''); text.rfind("<class '", 0) == 0 && quote > 8) {
    text = text.substr(8, quote - 8);
  }
  if (const auto dot = text.rfind('.'); dot != std::string::npos) text = text.substr(dot + 1);
  if (text == "bool_") text = "bool";
  anydev_dtype_t out{};
  if (anydev_dtype_from_name(text.c_str(), &out) != ANYDEV_SUCCESS) {
    throw py::type_error("unknown dtype " + std::string(py::repr(dtype)) +
                         " (anydev has bool, int8, int16, int32, int64, uint8, uint16, uint32, "
                         "uint64, float16, bfloat16, float32, float64, complex64, complex128)");
  }
  return out;
}

Element encode(anydev_dtype_t dtype, py::handle value) {
  switch (dtype) {
    case ANYDEV_DTYPE_BOOL:
      return pack<bool>(py::bool_(py::reinterpret_borrow<py::object>(value)));
    case ANYDEV_DTYPE_INT8:
      return pack_integer<std::int8_t>(value, dtype);
    case ANYDEV_DTYPE_INT16:
      return pack_integer<std::int16_t>(value, dtype);
    case ANYDEV_DTYPE_INT32:
      return pack_integer<std::int32_t>(value, dtype);
    case ANYDEV_DTYPE_INT64:
      return pack_integer<std::int64_t>(value, dtype);
    case ANYDEV_DTYPE_UINT8:
      return pack_integer<std::uint8_t>(value, dtype);
    case ANYDEV_DTYPE_UINT16:
      return pack_integer<std::uint16_t>(value, dtype);
    case ANYDEV_DTYPE_UINT32:
      return pack_integer<std::uint32_t>(value, dtype);
    case ANYDEV_DTYPE_UINT64:
      return pack_integer<std::uint64_t>(value, dtype);
    case ANYDEV_DTYPE_FLOAT16:
      return pack(anydev::float16(static_cast<float>(as_double(value, dtype))));
    case ANYDEV_DTYPE_BFLOAT16:
      return pack(anydev::bfloat16(static_cast<float>(as_double(value, dtype))));
    case ANYDEV_DTYPE_FLOAT32:
      return pack(static_cast<float>(as_double(value, dtype)));
    case ANYDEV_DTYPE_FLOAT64:
      return pack(as_double(value, dtype));
    case ANYDEV_DTYPE_COMPLEX64: {
      const std::complex<double> c = as_complex(value, dtype);
      return pack(std::complex<float>(static_cast<float>(c.real()), static_cast<float>(c.imag())));
    }
    case ANYDEV_DTYPE_COMPLEX128:
      return pack(as_complex(value, dtype));
  }
  throw py::type_error("unknown dtype " + dtype_name(dtype));
}

py::object decode(anydev_dtype_t dtype, const void* bytes) {
  switch (dtype) {
    case ANYDEV_DTYPE_BOOL:
      return py::bool_(unpack<unsigned char>(bytes) != 0);
    case ANYDEV_DTYPE_INT8:
      return py::int_(unpack<std::int8_t>(bytes));
    case ANYDEV_DTYPE_INT16:
      return py::int_(unpack<std::int16_t>(bytes));
    case ANYDEV_DTYPE_INT32:
      return py::int_(unpack<std::int32_t>(bytes));
    case ANYDEV_DTYPE_INT64:
      return py::int_(unpack<std::int64_t>(bytes));
    case ANYDEV_DTYPE_UINT8:
      return py::int_(unpack<std::uint8_t>(bytes));
    case ANYDEV_DTYPE_UINT16:
      return py::int_(unpack<std::uint16_t>(bytes));
    case ANYDEV_DTYPE_UINT32:
      return py::int_(unpack<std::uint32_t>(bytes));
    case ANYDEV_DTYPE_UINT64:
      return py::int_(unpack<std::uint64_t>(bytes));
    case ANYDEV_DTYPE_FLOAT16:
      return py::float_(static_cast<float>(unpack<anydev::float16>(bytes)));
    case ANYDEV_DTYPE_BFLOAT16:
      return py::float_(static_cast<float>(unpack<anydev::bfloat16>(bytes)));
    case ANYDEV_DTYPE_FLOAT32:
      return py::float_(unpack<float>(bytes));
    case ANYDEV_DTYPE_FLOAT64:
      return py::float_(unpack<double>(bytes));
    case ANYDEV_DTYPE_COMPLEX64: {
      const auto c = unpack<std::complex<float>>(bytes);
      return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(c.real(), c.imag()));
    }
    case ANYDEV_DTYPE_COMPLEX128: {
      const auto c = unpack<std::complex<double>>(bytes);
      return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(c.real(), c.imag()));
    }
  }
  throw py::type_error("unknown dtype " + dtype_name(dtype));
}

const char* buffer_format(anydev_dtype_t dtype) {
  switch (dtype) {
    case ANYDEV_DTYPE_BOOL:
      return "?";
    case ANYDEV_DTYPE_INT8:
      return "b";
    case ANYDEV_DTYPE_INT16:
      return "h";
    case ANYDEV_DTYPE_INT32:
      return "i";
    case ANYDEV_DTYPE_INT64:
      return "q";
    case ANYDEV_DTYPE_UINT8:
      return "B";
    case ANYDEV_DTYPE_UINT16:
      return "H";
    case ANYDEV_DTYPE_UINT32:
      return "I";
    case ANYDEV_DTYPE_UINT64:
      return "Q";
    case ANYDEV_DTYPE_FLOAT16:
      return "e";
    case ANYDEV_DTYPE_FLOAT32:
      return "f";
    case ANYDEV_DTYPE_FLOAT64:
      return "d";
    case ANYDEV_DTYPE_COMPLEX64:
      return "Zf";
    case ANYDEV_DTYPE_COMPLEX128:
      return "Zd";
    default:
      return nullptr;
  }
}

namespace {

// An integer dtype of `itemsize` bytes.
std::optional<anydev_dtype_t> integer_of(std::size_t itemsize, bool is_signed) {
  switch (itemsize) {
    case 1:
      return is_signed ? ANYDEV_DTYPE_INT8 : ANYDEV_DTYPE_UINT8;
    case 2:
      return is_signed ? ANYDEV_DTYPE_INT16 : ANYDEV_DTYPE_UINT16;
    case 4:
      return is_signed ? ANYDEV_DTYPE_INT32 : ANYDEV_DTYPE_UINT32;
    case 8:
      return is_signed ? ANYDEV_DTYPE_INT64 : ANYDEV_DTYPE_UINT64;
    default:
      return std::nullopt;
  }
}

std::optional<anydev_dtype_t> float_of(std::size_t itemsize) {
  switch (itemsize) {
    case 2:
      return ANYDEV_DTYPE_FLOAT16;
    case 4:
      return ANYDEV_DTYPE_FLOAT32;
    case 8:
      return ANYDEV_DTYPE_FLOAT64;
    default:
      return std::nullopt;
  }
}

std::optional<anydev_dtype_t> complex_of(std::size_t itemsize) {
  if (itemsize == 8) return ANYDEV_DTYPE_COMPLEX64;
  if (itemsize == 16) return ANYDEV_DTYPE_COMPLEX128;
  return std::nullopt;
}

}  // namespace

FormatElements format_elements(const char* format, std::size_t itemsize) {
  FormatElements out;
  if (format == nullptr || format[0] == '\0') {  // the buffer protocol's default: "B"
    out.raw_bytes = true;
    out.dtype = ANYDEV_DTYPE_UINT8;
    return out;
  }
  std::string_view code(format);
  // A byte-order prefix; only the host's own order describes these elements.
  const char order = code.front();
  if (order == '@' || order == '=' || order == '<' || order == '>' || order == '!') {
    code.remove_prefix(1);
    const bool little = order == '<';
    const bool big = order == '>' || order == '!';
    const bool host_little = std::endian::native == std::endian::little;
    if (itemsize > 1 && ((little && !host_little) || (big && host_little))) return out;
  }
  if (code == "B" || code == "c") {
    out.raw_bytes = true;
    out.dtype = ANYDEV_DTYPE_UINT8;
    return out;
  }
  if (code.size() == 1) {
    switch (code.front()) {
      case '?':
        if (itemsize == 1) out.dtype = ANYDEV_DTYPE_BOOL;
        return out;
      case 'b':
      case 'h':
      case 'i':
      case 'l':
      case 'q':
      case 'n':
        out.dtype = integer_of(itemsize, true);
        return out;
      case 'H':
      case 'I':
      case 'L':
      case 'Q':
      case 'N':
        out.dtype = integer_of(itemsize, false);
        return out;
      case 'e':
      case 'f':
      case 'd':
        out.dtype = float_of(itemsize);
        return out;
      default:
        return out;
    }
  }
  if (code == "Zf" || code == "Zd") out.dtype = complex_of(itemsize);
  return out;
}

}  // namespace anydev::python
