// SPDX-License-Identifier: Apache-2.0
// anydev C++ API: the 16-bit floating-point element types float16 (IEEE 754
// binary16) and bfloat16, with exact constexpr conversions to and from float.
// Part of anydev.hpp (include that); usable alone. Plain value types: no
// ownership, safe to copy between threads.
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_FLOAT16_HPP_
#define ANYDEV_FLOAT16_HPP_

#include <bit>
#include <cstdint>
#include <limits>

namespace anydev {

static_assert(std::numeric_limits<float>::is_iec559 && sizeof(float) == 4,
              "anydev needs IEEE 754 binary32 float");

namespace detail {

// IEEE 754 binary32 -> binary16, round to nearest even. Overflow gives
// infinity; NaN stays NaN (quiet, sign and top payload bits kept).
constexpr std::uint16_t float_to_half_bits(float value) noexcept {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
  const std::uint32_t magnitude = f & 0x7FFFFFFFu;
  if (magnitude >= 0x7F800000u) {  // infinity or NaN
    if (magnitude == 0x7F800000u) return sign | 0x7C00u;
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x03FFu));
  }
  if (magnitude >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520 rounds to infinity
  if (magnitude >= 0x38800000u) {                       // normal half: >= 2^-14
    const std::uint32_t rebiased = magnitude - (112u << 23);
    const std::uint32_t rounded = rebiased + 0x0FFFu + ((rebiased >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | (rounded >> 13));
  }
  if (magnitude <= 0x33000000u) return sign;  // <= 2^-25 rounds (to even) to zero
  // Subnormal half: the value in units of 2^-24, rounded to nearest even.
  const std::uint32_t mantissa = (magnitude & 0x007FFFFFu) | 0x00800000u;
  const std::uint32_t shift = 126u - (magnitude >> 23);  // 14..24
  std::uint32_t units = mantissa >> shift;
  const std::uint32_t remainder = mantissa & ((1u << shift) - 1u);
  const std::uint32_t half_unit = 1u << (shift - 1u);
  if (remainder > half_unit || (remainder == half_unit && (units & 1u) != 0)) ++units;
  return static_cast<std::uint16_t>(sign | units);
}

// IEEE 754 binary16 -> binary32, exact.
constexpr float half_bits_to_float(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  std::uint32_t mantissa = bits & 0x03FFu;
  std::uint32_t f = 0;
  if (exponent == 0x1Fu) {
    f = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    f = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    f = sign;
  } else {  // subnormal: normalize
    std::uint32_t float_exponent = 113;
    while ((mantissa & 0x0400u) == 0) {
      mantissa <<= 1;
      --float_exponent;
    }
    f = sign | (float_exponent << 23) | ((mantissa & 0x03FFu) << 13);
  }
  return std::bit_cast<float>(f);
}

// binary32 -> bfloat16, round to nearest even; NaN stays NaN (made quiet).
constexpr std::uint16_t float_to_bfloat16_bits(float value) noexcept {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  if ((f & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((f >> 16) | 0x0040u);
  const std::uint32_t rounded = f + 0x7FFFu + ((f >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

constexpr float bfloat16_bits_to_float(std::uint16_t bits) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

}  // namespace detail

// IEEE 754 half precision, as 16-bit storage: convert to and from float
// (round to nearest even; overflow gives infinity). == compares bits. A plain
// value type.
struct float16 {
  std::uint16_t bits = 0;

  float16() = default;
  constexpr explicit float16(float value) noexcept : bits(detail::float_to_half_bits(value)) {}
  constexpr explicit operator float() const noexcept { return detail::half_bits_to_float(bits); }
  static constexpr float16 from_bits(std::uint16_t raw) noexcept {
    float16 h;
    h.bits = raw;
    return h;
  }
  friend constexpr bool operator==(float16, float16) = default;
};

// bfloat16 (the top half of a binary32), as 16-bit storage: convert to and
// from float (round to nearest even; NaN stays NaN). == compares bits. A
// plain value type.
struct bfloat16 {
  std::uint16_t bits = 0;

  bfloat16() = default;
  constexpr explicit bfloat16(float value) noexcept : bits(detail::float_to_bfloat16_bits(value)) {}
  constexpr explicit operator float() const noexcept {
    return detail::bfloat16_bits_to_float(bits);
  }
  static constexpr bfloat16 from_bits(std::uint16_t raw) noexcept {
    bfloat16 b;
    b.bits = raw;
    return b;
  }
  friend constexpr bool operator==(bfloat16, bfloat16) = default;
};

static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2,
              "anydev element types must have the C ABI's sizes");

}  // namespace anydev

#endif  // ANYDEV_FLOAT16_HPP_
