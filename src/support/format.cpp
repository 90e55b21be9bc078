// SPDX-License-Identifier: Apache-2.0
#include "support/format.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace anydev::core {
namespace {

template <class T>
T load(const void* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// Mojo prints floats with a decimal point or an exponent: "1.0", "1e+20".
std::string finish_float(std::string text) {
  if (text.find("nan") != std::string::npos) return "nan";
  if (text.find_first_of(".ein") == std::string::npos) text += ".0";
  return text;
}

template <class F>
std::string shortest(F value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return finish_float(std::string(buffer, result.ptr));
}

std::uint16_t float_to_half_bits(float value) noexcept {
  const auto f = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // subnormal half (or zero)
    if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);
    const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);  // 14..24
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = ((abs - 0x38000000u) >> 13);
  const std::uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

std::uint16_t float_to_bfloat16_bits(float value) noexcept {
  const auto f = std::bit_cast<std::uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((f >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
  return static_cast<std::uint16_t>((f + rounding) >> 16);
}

// The shortest decimal that reads back (through float) as the same 16-bit
// pattern, so that float16(0.1) prints "0.1", not "0.099975586".
// "(re, im)". Appended piece by piece: GCC 12 warns (-Wrestrict, falsely)
// about chains of std::string operator+ here.
std::string complex_text(const std::string& re, const std::string& im) {
  std::string out = "(";
  out.append(re).append(", ").append(im).append(")");
  return out;
}

template <class ToBits>
std::string shortest_16bit(float value, std::uint16_t bits, ToBits to_bits) {
  if (!std::isfinite(value)) return shortest(value);
  char buffer[64];
  for (int precision = 1; precision <= 9; ++precision) {
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value,
                                      std::chars_format::general, precision);
    const double candidate = std::strtod(std::string(buffer, result.ptr).c_str(), nullptr);
    // The fewest significant digits that read back as the same bits, written
    // in the shorter of fixed and exponent form ("100.0", not "1e+02").
    if (to_bits(static_cast<float>(candidate)) == bits) return shortest(candidate);
  }
  return shortest(value);
}

}  // namespace

float half_bits_to_float(unsigned short bits) noexcept {
  const std::uint32_t sign = (static_cast<std::uint32_t>(bits) & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  std::uint32_t mantissa = bits & 0x3ffu;
  std::uint32_t f;
  if (exponent == 0) {
    if (mantissa == 0) {
      f = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while ((mantissa & 0x400u) == 0);
      f = sign | static_cast<std::uint32_t>(127 - 15 - e) << 23 | (mantissa & 0x3ffu) << 13;
    }
  } else if (exponent == 0x1f) {
    f = sign | 0x7f800000u | mantissa << 13;
  } else {
    f = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
  }
  return std::bit_cast<float>(f);
}

float bfloat16_bits_to_float(unsigned short bits) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::string format_element(anydev_dtype_t dtype, const void* p) {
  switch (dtype) {
    case ANYDEV_DTYPE_BOOL:
      return load<std::uint8_t>(p) != 0 ? "True" : "False";
    case ANYDEV_DTYPE_INT8:
      return std::to_string(load<std::int8_t>(p));
    case ANYDEV_DTYPE_INT16:
      return std::to_string(load<std::int16_t>(p));
    case ANYDEV_DTYPE_INT32:
      return std::to_string(load<std::int32_t>(p));
    case ANYDEV_DTYPE_INT64:
      return std::to_string(load<std::int64_t>(p));
    case ANYDEV_DTYPE_UINT8:
      return std::to_string(load<std::uint8_t>(p));
    case ANYDEV_DTYPE_UINT16:
      return std::to_string(load<std::uint16_t>(p));
    case ANYDEV_DTYPE_UINT32:
      return std::to_string(load<std::uint32_t>(p));
    case ANYDEV_DTYPE_UINT64:
      return std::to_string(load<std::uint64_t>(p));
    case ANYDEV_DTYPE_FLOAT16: {
      const auto bits = load<std::uint16_t>(p);
      return shortest_16bit(half_bits_to_float(bits), bits, float_to_half_bits);
    }
    case ANYDEV_DTYPE_BFLOAT16: {
      const auto bits = load<std::uint16_t>(p);
      return shortest_16bit(bfloat16_bits_to_float(bits), bits, float_to_bfloat16_bits);
    }
    case ANYDEV_DTYPE_FLOAT32:
      return shortest(load<float>(p));
    case ANYDEV_DTYPE_FLOAT64:
      return shortest(load<double>(p));
    case ANYDEV_DTYPE_COMPLEX64: {
      const auto c = load<std::complex<float>>(p);
      return complex_text(shortest(c.real()), shortest(c.imag()));
    }
    case ANYDEV_DTYPE_COMPLEX128: {
      const auto c = load<std::complex<double>>(p);
      return complex_text(shortest(c.real()), shortest(c.imag()));
    }
  }
  return "?";
}

std::string format_buffer(std::string_view type_name, anydev_dtype_t dtype, const void* data,
                          std::size_t count) {
  static constexpr std::size_t kElideFrom = 1000;
  static constexpr std::size_t kEdge = 3;
  const std::size_t size = [&] {
    switch (dtype) {
      case ANYDEV_DTYPE_BOOL:
      case ANYDEV_DTYPE_INT8:
      case ANYDEV_DTYPE_UINT8:
        return std::size_t{1};
      case ANYDEV_DTYPE_INT16:
      case ANYDEV_DTYPE_UINT16:
      case ANYDEV_DTYPE_FLOAT16:
      case ANYDEV_DTYPE_BFLOAT16:
        return std::size_t{2};
      case ANYDEV_DTYPE_INT32:
      case ANYDEV_DTYPE_UINT32:
      case ANYDEV_DTYPE_FLOAT32:
        return std::size_t{4};
      case ANYDEV_DTYPE_COMPLEX128:
        return std::size_t{16};
      default:
        return std::size_t{8};
    }
  }();
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::string out(type_name);
  out += "([";
  auto append = [&](std::size_t i) {
    if (out.back() != '[') out += ", ";
    out += format_element(dtype, bytes + i * size);
  };
  if (count < kElideFrom) {
    for (std::size_t i = 0; i < count; ++i) append(i);
  } else {
    for (std::size_t i = 0; i < kEdge; ++i) append(i);
    out += ", ...";
    for (std::size_t i = count - kEdge; i < count; ++i) append(i);
  }
  out += "])";
  return out;
}

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex_byte(std::string& out, unsigned char byte) {
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 0x0Fu];
}

// The length (2 to 4) of the well-formed UTF-8 sequence of a non-ASCII
// character starting at text[i], with its code point in *code; 0 when the
// bytes there are not one: a lone continuation byte, a truncated sequence,
// an overlong encoding, a surrogate, a value past U+10FFFF, 0xC0, 0xC1 or
// 0xF5-0xFF.
std::size_t utf8_length(std::string_view text, std::size_t i, char32_t* code) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  char32_t value = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    value = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    value = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    value = lead & 0x07u;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xC0u) != 0x80u) return 0;
    value = (value << 6) | (byte(k) & 0x3Fu);
  }
  const char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < smallest[length] || value > 0x10FFFF) return 0;  // overlong or too large
  if (value >= 0xD800 && value <= 0xDFFF) return 0;            // surrogate
  *code = value;
  return length;
}

// C1 controls (U+0080-U+009F) act like ESC sequences on some terminals.
bool is_c1_control(char32_t code) { return code <= 0x9F; }

// The length of the well-formed UTF-8 sequence of a printable character
// starting at text[i] (2 to 4), or 0 when the bytes there are anything else.
std::size_t printable_utf8_length(std::string_view text, std::size_t i) {
  char32_t code = 0;
  const std::size_t length = utf8_length(text, i, &code);
  if (length == 0) return 0;
  if (is_c1_control(code)) return 0;
  if (code == 0x2028 || code == 0x2029) return 0;  // line, paragraph separator
  if (code >= 0x202A && code <= 0x202E) return 0;  // bidirectional embedding
  if (code >= 0x2066 && code <= 0x2069) return 0;  // bidirectional isolate
  return length;
}

}  // namespace

std::string escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else if (const std::size_t length = c >= 0x80 ? printable_utf8_length(text, i) : 0;
               length > 0) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    } else {
      append_hex_byte(out, c);
    }
    ++i;
  }
  return out;
}

std::string controls_escaped(std::string message) {
  const auto plain = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u >= 0x20 && u < 0x7F) || u == '\n';
  };
  if (std::all_of(message.begin(), message.end(), plain)) return message;
  std::string out;
  out.reserve(message.size() + 8);
  for (std::size_t i = 0; i < message.size();) {
    const auto u = static_cast<unsigned char>(message[i]);
    if (plain(message[i])) {
      out += message[i];
      ++i;
      continue;
    }
    char32_t code = 0;
    if (const std::size_t length = u >= 0x80 ? utf8_length(message, i, &code) : 0;
        length > 0 && !is_c1_control(code)) {
      out.append(message, i, length);
      i += length;
      continue;
    }
    append_hex_byte(out, u);
    ++i;
  }
  return out;
}

}  // namespace anydev::core
