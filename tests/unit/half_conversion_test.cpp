// SPDX-License-Identifier: Apache-2.0
// float <-> float16 / bfloat16 conversions of anydev.hpp: exact bit
// patterns, round to nearest even at every kind of tie, overflow, subnormals,
// signed zero, NaN, and exhaustive round trips.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "anydev/anydev.hpp"

namespace {

using anydev::bfloat16;
using anydev::float16;

float F(std::uint32_t bits) { return std::bit_cast<float>(bits); }
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(Float16, FromFloat) {
  EXPECT_EQ(float16(1.0f).bits, 0x3C00);
  EXPECT_EQ(float16(-2.0f).bits, 0xC000);
  EXPECT_EQ(float16(0.5f).bits, 0x3800);
  EXPECT_EQ(float16(0.0f).bits, 0x0000);
  EXPECT_EQ(float16(-0.0f).bits, 0x8000);
  EXPECT_EQ(float16(65504.0f).bits, 0x7BFF);
  EXPECT_EQ(float16(0.1f).bits, 0x2E66);
  EXPECT_EQ(float16(kInf).bits, 0x7C00);
  EXPECT_EQ(float16(-kInf).bits, 0xFC00);
}

TEST(Float16, OverflowRoundsToInfinityFrom65520) {
  EXPECT_EQ(float16(65519.996f).bits, 0x7BFF);  // just below the midpoint to 2^16
  EXPECT_EQ(float16(65520.0f).bits, 0x7C00);    // the midpoint: ties to even = infinity
  EXPECT_EQ(float16(-65520.0f).bits, 0xFC00);
  EXPECT_EQ(float16(1e10f).bits, 0x7C00);
  EXPECT_EQ(float16(std::numeric_limits<float>::max()).bits, 0x7C00);
}

TEST(Float16, Subnormals) {
  EXPECT_EQ(float16(5.9604645e-8f).bits, 0x0001);  // 2^-24, the smallest subnormal
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x0001)), 5.9604645e-8f);
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x0001)), std::ldexp(1.0f, -24));
  EXPECT_EQ(float16(std::ldexp(1023.0f, -24)).bits, 0x03FF);  // the largest subnormal
  EXPECT_EQ(float16(std::ldexp(1.0f, -14)).bits, 0x0400);     // the smallest normal
  EXPECT_EQ(float16(-std::ldexp(3.0f, -24)).bits, 0x8003);
  EXPECT_EQ(float16(1e-10f).bits, 0x0000);
  EXPECT_EQ(float16(-1e-10f).bits, 0x8000);
}

TEST(Float16, RoundsToNearestEven) {
  // Normal range: one ulp at 1.0 is 2^-10.
  EXPECT_EQ(float16(1.0f + std::ldexp(1.0f, -11)).bits, 0x3C00);  // tie, keep even 0x3C00
  EXPECT_EQ(float16(1.0f + std::ldexp(3.0f, -11)).bits, 0x3C02);  // tie, up to even 0x3C02
  EXPECT_EQ(float16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)).bits,
            0x3C01);  // just above the tie
  EXPECT_EQ(float16(1.0f + std::ldexp(1.0f, -11) - std::ldexp(1.0f, -22)).bits,
            0x3C00);  // just below the tie
  // Subnormal range: one ulp is 2^-24.
  EXPECT_EQ(float16(std::ldexp(1.0f, -25)).bits, 0x0000);  // tie between 0 and 1: even 0
  EXPECT_EQ(float16(std::ldexp(3.0f, -25)).bits, 0x0002);  // tie between 1 and 2: even 2
  EXPECT_EQ(float16(std::ldexp(5.0f, -25)).bits, 0x0002);  // tie between 2 and 3: even 2
  EXPECT_EQ(float16(std::ldexp(1.0f, -25) + std::ldexp(1.0f, -40)).bits, 0x0001);
  // The carry from the largest subnormal into the smallest normal.
  EXPECT_EQ(float16(std::ldexp(1023.5f, -24)).bits, 0x0400);
}

TEST(Float16, NaNStaysNaN) {
  const float16 h(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(h.bits & 0x7C00, 0x7C00);
  EXPECT_NE(h.bits & 0x03FF, 0) << "NaN became infinity";
  // A NaN whose payload lives only in the low float bits must not become infinity.
  const float16 low_payload(F(0x7F800001));
  EXPECT_EQ(low_payload.bits & 0x7C00, 0x7C00);
  EXPECT_NE(low_payload.bits & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(static_cast<float>(float16::from_bits(0x7E00))));
  EXPECT_TRUE(std::isnan(static_cast<float>(float16::from_bits(0xFC01))));
}

TEST(Float16, EveryNonNaNValueRoundTrips) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float16 h = float16::from_bits(static_cast<std::uint16_t>(bits));
    const float f = static_cast<float>(h);
    if ((bits & 0x7C00) == 0x7C00 && (bits & 0x03FF) != 0) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << bits;
      ASSERT_TRUE(std::isnan(static_cast<float>(float16(f)))) << std::hex << bits;
      continue;
    }
    ASSERT_EQ(float16(f).bits, bits) << "half 0x" << std::hex << bits << " -> " << f;
  }
}

TEST(Float16, EqualityComparesBits) {
  EXPECT_EQ(float16::from_bits(0x3C00), float16(1.0f));
  EXPECT_NE(float16::from_bits(0x0000), float16::from_bits(0x8000));  // +0 and -0 differ
  EXPECT_EQ(float16::from_bits(0x7E01), float16::from_bits(0x7E01));  // NaN equals itself
  EXPECT_EQ(float16().bits, 0);
}

TEST(BFloat16, FromFloat) {
  EXPECT_EQ(bfloat16(1.0f).bits, 0x3F80);
  EXPECT_EQ(bfloat16(-2.0f).bits, 0xC000);
  EXPECT_EQ(bfloat16(0.0f).bits, 0x0000);
  EXPECT_EQ(bfloat16(-0.0f).bits, 0x8000);
  EXPECT_EQ(bfloat16(kInf).bits, 0x7F80);
  EXPECT_EQ(bfloat16(-kInf).bits, 0xFF80);
  EXPECT_EQ(bfloat16(0.1f).bits, 0x3DCD);
  EXPECT_EQ(static_cast<float>(bfloat16::from_bits(0x3F80)), 1.0f);
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(bfloat16(F(0x3F808000)).bits, 0x3F80);                      // tie, lower is even: stay
  EXPECT_EQ(bfloat16(F(0x3F818000)).bits, 0x3F82);                      // tie, lower is odd: up
  EXPECT_EQ(bfloat16(F(0x3F808001)).bits, 0x3F81);                      // above the tie
  EXPECT_EQ(bfloat16(F(0x3F807FFF)).bits, 0x3F80);                      // below the tie
  EXPECT_EQ(bfloat16(F(0xBF818000)).bits, 0xBF82);                      // negative tie to even
  EXPECT_EQ(bfloat16(F(0x3FFF8000)).bits, 0x4000);                      // carry into the exponent
  EXPECT_EQ(bfloat16(F(0x00018000)).bits, 0x0002);                      // subnormal tie to even
  EXPECT_EQ(bfloat16(std::numeric_limits<float>::max()).bits, 0x7F80);  // overflow to inf
}

TEST(BFloat16, NaNStaysNaN) {
  for (std::uint32_t nan : {0x7FC00000u, 0x7F800001u, 0x7FFFFFFFu, 0xFF800001u, 0x7F80FFFFu}) {
    const bfloat16 b(F(nan));
    EXPECT_EQ(b.bits & 0x7F80, 0x7F80) << std::hex << nan;
    EXPECT_NE(b.bits & 0x007F, 0) << "NaN 0x" << std::hex << nan << " became infinity";
    EXPECT_EQ(b.bits & 0x8000, (nan >> 16) & 0x8000) << "sign of NaN 0x" << std::hex << nan;
  }
}

TEST(BFloat16, EveryNonNaNValueRoundTrips) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const bfloat16 b = bfloat16::from_bits(static_cast<std::uint16_t>(bits));
    const float f = static_cast<float>(b);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(f), bits << 16) << std::hex << bits;
    if ((bits & 0x7F80) == 0x7F80 && (bits & 0x007F) != 0) continue;
    ASSERT_EQ(bfloat16(f).bits, bits) << "bfloat16 0x" << std::hex << bits;
  }
}

}  // namespace
