// SPDX-License-Identifier: Apache-2.0
// Mojo's printing of buffers (src/support/format.h): every dtype, special float
// values, shortest round-trip digits in the element's own precision, and the
// elision from 1000 elements on.
#include "support/format.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"

namespace anydev::core {
namespace {

template <class T>
std::string Element(anydev_dtype_t dtype, T value) {
  return format_element(dtype, &value);
}

template <class T>
std::string Buffer(anydev_dtype_t dtype, const std::vector<T>& values,
                   std::string_view name = "HostBuffer") {
  return format_buffer(name, dtype, values.data(), values.size());
}

std::uint16_t H(std::uint16_t bits) { return bits; }

TEST(FormatElement, Booleans) {
  EXPECT_EQ(Element(ANYDEV_DTYPE_BOOL, true), "True");
  EXPECT_EQ(Element(ANYDEV_DTYPE_BOOL, false), "False");
}

TEST(FormatElement, SignedIntegersPrintAsNumbers) {
  EXPECT_EQ(Element<std::int8_t>(ANYDEV_DTYPE_INT8, -128), "-128");
  EXPECT_EQ(Element<std::int8_t>(ANYDEV_DTYPE_INT8, 65), "65");  // not 'A'
  EXPECT_EQ(Element<std::int8_t>(ANYDEV_DTYPE_INT8, 127), "127");
  EXPECT_EQ(Element<std::int16_t>(ANYDEV_DTYPE_INT16, -32768), "-32768");
  EXPECT_EQ(Element<std::int32_t>(ANYDEV_DTYPE_INT32, -1), "-1");
  EXPECT_EQ(Element<std::int32_t>(ANYDEV_DTYPE_INT32, std::numeric_limits<std::int32_t>::min()),
            "-2147483648");
  EXPECT_EQ(Element<std::int64_t>(ANYDEV_DTYPE_INT64, std::numeric_limits<std::int64_t>::min()),
            "-9223372036854775808");
  EXPECT_EQ(Element<std::int64_t>(ANYDEV_DTYPE_INT64, std::numeric_limits<std::int64_t>::max()),
            "9223372036854775807");
}

TEST(FormatElement, UnsignedIntegersPrintAsNumbers) {
  EXPECT_EQ(Element<std::uint8_t>(ANYDEV_DTYPE_UINT8, 0), "0");
  EXPECT_EQ(Element<std::uint8_t>(ANYDEV_DTYPE_UINT8, 65), "65");
  EXPECT_EQ(Element<std::uint8_t>(ANYDEV_DTYPE_UINT8, 255), "255");
  EXPECT_EQ(Element<std::uint16_t>(ANYDEV_DTYPE_UINT16, 65535), "65535");
  EXPECT_EQ(Element<std::uint32_t>(ANYDEV_DTYPE_UINT32, 4294967295u), "4294967295");
  EXPECT_EQ(Element<std::uint64_t>(ANYDEV_DTYPE_UINT64, 18446744073709551615ull),
            "18446744073709551615");
}

TEST(FormatElement, Float32) {
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT32, 1.0f), "1.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT32, 0.5f), "0.5");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT32, 0.0f), "0.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT32, -0.0f), "-0.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT32, -2.5f), "-2.5");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT32, 100.0f), "100.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT32, 1e20f), "1e+20");
  // Shortest digits that round-trip in float, not in double.
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT32, 0.1f), "0.1");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT32, 1.0f / 3.0f), "0.33333334");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT32, std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT32, -std::numeric_limits<float>::infinity()), "-inf");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT32, std::numeric_limits<float>::quiet_NaN()), "nan");
}

TEST(FormatElement, Float64) {
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT64, 1.0), "1.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT64, 0.5), "0.5");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT64, -1.5), "-1.5");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT64, 1e20), "1e+20");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT64, 0.1), "0.1");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT64, 1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT64, 1234.5), "1234.5");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT64, std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT64, -std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT64, std::numeric_limits<double>::quiet_NaN()), "nan");
}

TEST(FormatElement, Float16ShortestInHalfPrecision) {
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0x3C00)), "1.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0x3800)), "0.5");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0xC000)), "-2.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0x2E66)), "0.1");  // 0.0999755859375 exactly
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0x3555)), "0.3333");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0x0001)), "6e-08");  // 2^-24: 1 digit suffices
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0x0002)), "1e-07");  // 2^-23
  // The same notation as float32 ("100.0", not "1e+02"): only the digits
  // come from the element's precision.
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0x5640)), "100.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0x6800)), "2048.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0x7BFF)), "65500.0");  // 65504: "655" suffices
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0x8000)), "-0.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0x7C00)), "inf");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0xFC00)), "-inf");
  EXPECT_EQ(Element(ANYDEV_DTYPE_FLOAT16, H(0x7E00)), "nan");
}

TEST(FormatElement, BFloat16ShortestInItsPrecision) {
  EXPECT_EQ(Element(ANYDEV_DTYPE_BFLOAT16, H(0x3F80)), "1.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_BFLOAT16, H(0x3F00)), "0.5");
  EXPECT_EQ(Element(ANYDEV_DTYPE_BFLOAT16, H(0x3DCD)), "0.1");  // 0.10009765625 exactly
  EXPECT_EQ(Element(ANYDEV_DTYPE_BFLOAT16, H(0xC040)), "-3.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_BFLOAT16, H(0x42C8)), "100.0");
  EXPECT_EQ(Element(ANYDEV_DTYPE_BFLOAT16, H(0x7F80)), "inf");
  EXPECT_EQ(Element(ANYDEV_DTYPE_BFLOAT16, H(0xFF80)), "-inf");
  EXPECT_EQ(Element(ANYDEV_DTYPE_BFLOAT16, H(0x7FC0)), "nan");
}

TEST(FormatElement, Complex) {
  EXPECT_EQ(Element(ANYDEV_DTYPE_COMPLEX64, std::complex<float>(1.0f, 2.0f)), "(1.0, 2.0)");
  EXPECT_EQ(Element(ANYDEV_DTYPE_COMPLEX64, std::complex<float>(0.1f, -0.5f)), "(0.1, -0.5)");
  EXPECT_EQ(Element(ANYDEV_DTYPE_COMPLEX128, std::complex<double>(-0.5, 1e20)), "(-0.5, 1e+20)");
  EXPECT_EQ(Element(ANYDEV_DTYPE_COMPLEX128, std::complex<double>(0.1, 3.0)), "(0.1, 3.0)");
}

TEST(FormatBuffer, Empty) {
  EXPECT_EQ(format_buffer("HostBuffer", ANYDEV_DTYPE_FLOAT32, nullptr, 0), "HostBuffer([])");
  EXPECT_EQ(format_buffer("DeviceBuffer", ANYDEV_DTYPE_INT8, nullptr, 0), "DeviceBuffer([])");
}

TEST(FormatBuffer, EveryDtypeInBrackets) {
  EXPECT_EQ(Buffer<std::int32_t>(ANYDEV_DTYPE_INT32, {0, 1, 2}), "HostBuffer([0, 1, 2])");
  EXPECT_EQ(Buffer<std::int8_t>(ANYDEV_DTYPE_INT8, {-1, 0, 65}), "HostBuffer([-1, 0, 65])");
  EXPECT_EQ(Buffer<std::uint8_t>(ANYDEV_DTYPE_UINT8, {0, 65, 255}), "HostBuffer([0, 65, 255])");
  EXPECT_EQ(Buffer<std::int16_t>(ANYDEV_DTYPE_INT16, {-300, 300}), "HostBuffer([-300, 300])");
  EXPECT_EQ(Buffer<std::uint16_t>(ANYDEV_DTYPE_UINT16, {7}), "HostBuffer([7])");
  EXPECT_EQ(Buffer<std::uint32_t>(ANYDEV_DTYPE_UINT32, {1, 4000000000u}),
            "HostBuffer([1, 4000000000])");
  EXPECT_EQ(Buffer<std::int64_t>(ANYDEV_DTYPE_INT64, {-5, 5}), "HostBuffer([-5, 5])");
  EXPECT_EQ(Buffer<std::uint64_t>(ANYDEV_DTYPE_UINT64, {10000000000ull}),
            "HostBuffer([10000000000])");
  EXPECT_EQ(Buffer<float>(ANYDEV_DTYPE_FLOAT32, {0.0f, 1.0f, 2.5f}), "HostBuffer([0.0, 1.0, 2.5])");
  EXPECT_EQ(Buffer<double>(ANYDEV_DTYPE_FLOAT64, {-1.0, 0.25}), "HostBuffer([-1.0, 0.25])");
  EXPECT_EQ(Buffer<std::uint16_t>(ANYDEV_DTYPE_FLOAT16, {0x3C00, 0x2E66}),
            "HostBuffer([1.0, 0.1])");
  EXPECT_EQ(Buffer<std::uint16_t>(ANYDEV_DTYPE_BFLOAT16, {0x3F80, 0x3DCD}),
            "HostBuffer([1.0, 0.1])");
  const bool flags[] = {true, false, true};
  EXPECT_EQ(format_buffer("HostBuffer", ANYDEV_DTYPE_BOOL, flags, 3),
            "HostBuffer([True, False, True])");
  EXPECT_EQ(Buffer<std::complex<float>>(ANYDEV_DTYPE_COMPLEX64, {{1.0f, 2.0f}, {-0.5f, 0.0f}}),
            "HostBuffer([(1.0, 2.0), (-0.5, 0.0)])");
  EXPECT_EQ(Buffer<std::complex<double>>(ANYDEV_DTYPE_COMPLEX128, {{0.5, -1.0}}),
            "HostBuffer([(0.5, -1.0)])");
  EXPECT_EQ(Buffer<std::int32_t>(ANYDEV_DTYPE_INT32, {3, 4}, "DeviceBuffer"),
            "DeviceBuffer([3, 4])");
}

TEST(FormatBuffer, NineHundredNinetyNineElementsPrintInFull) {
  std::vector<std::int32_t> values(999);
  std::string expected = "HostBuffer([";
  for (int i = 0; i < 999; ++i) {
    values[i] = i;
    if (i > 0) expected += ", ";
    expected += std::to_string(i);
  }
  expected += "])";
  EXPECT_EQ(Buffer(ANYDEV_DTYPE_INT32, values), expected);
}

TEST(FormatBuffer, ThousandElementsAreElided) {
  std::vector<float> values(1000);
  for (int i = 0; i < 1000; ++i) values[i] = static_cast<float>(i);
  EXPECT_EQ(Buffer(ANYDEV_DTYPE_FLOAT32, values),
            "HostBuffer([0.0, 1.0, 2.0, ..., 997.0, 998.0, 999.0])");
}

TEST(FormatBuffer, MoreThanThousandElementsAreElided) {
  std::vector<std::int64_t> values(1001);
  for (int i = 0; i < 1001; ++i) values[i] = i;
  EXPECT_EQ(Buffer(ANYDEV_DTYPE_INT64, values, "DeviceBuffer"),
            "DeviceBuffer([0, 1, 2, ..., 998, 999, 1000])");
  std::vector<std::uint8_t> bytes(1 << 20, 7);
  bytes.front() = 1;
  bytes.back() = 9;
  EXPECT_EQ(Buffer(ANYDEV_DTYPE_UINT8, bytes), "HostBuffer([1, 7, 7, ..., 7, 7, 9])");
}

// Significant decimal digits of a printed number ("65500.0" -> 3, "6e-08" -> 1).
int SignificantDigits(const std::string& text) {
  std::string digits;
  for (char c : text.substr(0, text.find('e'))) {
    if (c >= '0' && c <= '9') digits += c;
  }
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return 1;
  const std::size_t last = digits.find_last_not_of('0');
  return static_cast<int>(last - first + 1);
}

// Every finite 16-bit float prints with a decimal point or exponent, reads
// back as the same bits, and uses no more digits than its precision needs:
// 5 significant digits for float16, 4 for bfloat16 (float32 would need 9).
template <class To16>
void CheckEvery16BitValue(anydev_dtype_t dtype, float (*to_float)(unsigned short), To16 to_bits,
                          int max_digits) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto b = static_cast<std::uint16_t>(bits);
    if (!std::isfinite(to_float(b))) continue;
    const std::string text = format_element(dtype, &b);
    ASSERT_NE(text.find_first_of(".e"), std::string::npos) << std::hex << bits << ": " << text;
    ASSERT_EQ(to_bits(std::strtof(text.c_str(), nullptr)), b)
        << "0x" << std::hex << bits << " printed as " << text << " does not read back";
    ASSERT_LE(SignificantDigits(text), max_digits)
        << "0x" << std::hex << bits << " printed as " << text << ": not the shortest form";
  }
}

TEST(FormatElement, EveryFloat16RoundTripsInShortestForm) {
  CheckEvery16BitValue(
      ANYDEV_DTYPE_FLOAT16, half_bits_to_float, [](float f) { return anydev::float16(f).bits; }, 5);
}

TEST(FormatElement, EveryBFloat16RoundTripsInShortestForm) {
  CheckEvery16BitValue(
      ANYDEV_DTYPE_BFLOAT16, bfloat16_bits_to_float,
      [](float f) { return anydev::bfloat16(f).bits; }, 4);
}

TEST(HalfBits, KnownValuesConvertExactly) {
  EXPECT_EQ(half_bits_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_bits_to_float(0xC000), -2.0f);
  EXPECT_EQ(half_bits_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_bits_to_float(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(half_bits_to_float(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(std::bit_cast<std::uint32_t>(half_bits_to_float(0x8000)), 0x80000000u);
  EXPECT_EQ(half_bits_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(half_bits_to_float(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(half_bits_to_float(0x7E00)));
  EXPECT_TRUE(std::isnan(half_bits_to_float(0x7C01)));
}

// Every finite half value, against an independent computation.
TEST(HalfBits, EveryFiniteValueIsExact) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const std::uint32_t exponent = (bits >> 10) & 0x1F;
    if (exponent == 0x1F) continue;
    const std::uint32_t mantissa = bits & 0x3FF;
    float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                                    : std::ldexp(static_cast<float>(mantissa | 0x400),
                                                 static_cast<int>(exponent) - 25);
    const float expected = (bits & 0x8000) != 0 ? -magnitude : magnitude;
    const float actual = half_bits_to_float(static_cast<unsigned short>(bits));
    ASSERT_EQ(std::bit_cast<std::uint32_t>(actual), std::bit_cast<std::uint32_t>(expected))
        << "half bits 0x" << std::hex << bits;
  }
}

TEST(BFloat16Bits, EveryValueIsTheTopHalfOfAFloat) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float actual = bfloat16_bits_to_float(static_cast<unsigned short>(bits));
    ASSERT_EQ(std::bit_cast<std::uint32_t>(actual), bits << 16)
        << "bfloat16 bits 0x" << std::hex << bits;
  }
}

}  // namespace
}  // namespace anydev::core
