// SPDX-License-Identifier: Apache-2.0
// anydev C++ API: element types. DType (the C ABI's anydev_dtype_t), the C++
// types a buffer can hold (Element), and dtype_of<T>, which maps one to the
// other at compile time. Part of anydev.hpp (include that); usable alone.
// Enums, aliases and traits only: nothing owned, nothing mutable.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_DTYPE_HPP_
#define ANYDEV_DTYPE_HPP_

#include <complex>
#include <cstdint>
#include <limits>

#include "anydev/anydev.h"
#include "anydev/float16.hpp"

namespace anydev {

// Element type of a buffer; the same numeric values as anydev_dtype_t.
enum class DType {
  boolean = ANYDEV_DTYPE_BOOL,
  int8 = ANYDEV_DTYPE_INT8,
  int16 = ANYDEV_DTYPE_INT16,
  int32 = ANYDEV_DTYPE_INT32,
  int64 = ANYDEV_DTYPE_INT64,
  uint8 = ANYDEV_DTYPE_UINT8,
  uint16 = ANYDEV_DTYPE_UINT16,
  uint32 = ANYDEV_DTYPE_UINT32,
  uint64 = ANYDEV_DTYPE_UINT64,
  float16 = ANYDEV_DTYPE_FLOAT16,
  bfloat16 = ANYDEV_DTYPE_BFLOAT16,
  float32 = ANYDEV_DTYPE_FLOAT32,
  float64 = ANYDEV_DTYPE_FLOAT64,
  complex64 = ANYDEV_DTYPE_COMPLEX64,
  complex128 = ANYDEV_DTYPE_COMPLEX128,
};

// "bool", "int8", ..., "complex128" (the C ABI's names); "unknown" otherwise.
constexpr const char* to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::boolean:
      return "bool";
    case DType::int8:
      return "int8";
    case DType::int16:
      return "int16";
    case DType::int32:
      return "int32";
    case DType::int64:
      return "int64";
    case DType::uint8:
      return "uint8";
    case DType::uint16:
      return "uint16";
    case DType::uint32:
      return "uint32";
    case DType::uint64:
      return "uint64";
    case DType::float16:
      return "float16";
    case DType::bfloat16:
      return "bfloat16";
    case DType::float32:
      return "float32";
    case DType::float64:
      return "float64";
    case DType::complex64:
      return "complex64";
    case DType::complex128:
      return "complex128";
  }
  return "unknown";
}

static_assert(std::numeric_limits<double>::is_iec559 && sizeof(double) == 8,
              "anydev needs IEEE 754 binary64 double");

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2 && sizeof(bool) == 1 &&
                  sizeof(complex64) == 8 && sizeof(complex128) == 16,
              "anydev element types must have the C ABI's sizes");

namespace detail {

template <class T>
struct DTypeOf {
  static constexpr bool known = false;
  static constexpr DType value = DType::boolean;  // unused: dtype_of fails first
};
#define ANYDEV_DETAIL_DTYPE(type, dtype)         \
  template <>                                    \
  struct DTypeOf<type> {                         \
    static constexpr bool known = true;          \
    static constexpr DType value = DType::dtype; \
  }
ANYDEV_DETAIL_DTYPE(bool, boolean);
ANYDEV_DETAIL_DTYPE(std::int8_t, int8);
ANYDEV_DETAIL_DTYPE(std::int16_t, int16);
ANYDEV_DETAIL_DTYPE(std::int32_t, int32);
ANYDEV_DETAIL_DTYPE(std::int64_t, int64);
ANYDEV_DETAIL_DTYPE(std::uint8_t, uint8);
ANYDEV_DETAIL_DTYPE(std::uint16_t, uint16);
ANYDEV_DETAIL_DTYPE(std::uint32_t, uint32);
ANYDEV_DETAIL_DTYPE(std::uint64_t, uint64);
ANYDEV_DETAIL_DTYPE(anydev::float16, float16);
ANYDEV_DETAIL_DTYPE(anydev::bfloat16, bfloat16);
ANYDEV_DETAIL_DTYPE(float, float32);
ANYDEV_DETAIL_DTYPE(double, float64);
ANYDEV_DETAIL_DTYPE(std::complex<float>, complex64);
ANYDEV_DETAIL_DTYPE(std::complex<double>, complex128);
#undef ANYDEV_DETAIL_DTYPE

template <class T>
consteval DType dtype_or_fail() {
  static_assert(DTypeOf<T>::known,
                "anydev: T is not a buffer element type; use bool, std::int8_t ... std::uint64_t, "
                "anydev::float16, anydev::bfloat16, float, double, std::complex<float> or "
                "std::complex<double> (without const)");
  return DTypeOf<T>::value;
}

}  // namespace detail

// The DType of a C++ element type; any other type is a compile-time error.
template <class T>
inline constexpr DType dtype_of = detail::dtype_or_fail<T>();

// The element types a buffer can hold: exactly those dtype_of accepts.
template <class T>
concept Element = detail::DTypeOf<T>::known;

}  // namespace anydev

#endif  // ANYDEV_DTYPE_HPP_
