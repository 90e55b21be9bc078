// SPDX-License-Identifier: Apache-2.0
// Fill and memset write the exact bits of the value into every element, for
// element sizes 1, 2, 4, 8 and 16, on host and device buffers, whole or
// through views, without touching neighbouring bytes.
#include <bit>
#include <complex>
#include <cstdint>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::bfloat16;
using anydev::float16;

class FillTest : public DeviceTest {};

// Sizes chosen to catch tails: odd counts, one element, a page and a bit.
constexpr std::size_t kCounts[] = {1, 7, 1001, 65537};

TEST_P(FillTest, EveryTypeWithSeededBitPatterns) {
  ForEachElementType([&]<class T>() {
    ForEachKind([&]<Kind K>() {
      for (std::size_t n : kCounts) {
        SCOPED_TRACE("count " + std::to_string(n));
        const Buffer<K, T> buffer = CreateWith<K>(ctx(), Pattern<T>(n, 201));
        const T value = MakeValue<T>(202 + n);
        buffer.enqueue_fill(value);
        EXPECT_TRUE(AllEqual(Contents(buffer), value)) << "value [" << HexBytes(value) << "]";
      }
    });
  });
}

// Patterns whose bytes all differ, signalling NaNs with payloads, and values
// that must not be converted on the way.
template <class T>
void CheckPatterns(const anydev::DeviceContext& ctx, std::initializer_list<T> values) {
  ForEachKind([&]<Kind K>() {
    for (const T& value : values) {
      SCOPED_TRACE("value [" + HexBytes(value) + "]");
      for (std::size_t n : {std::size_t{3}, std::size_t{4099}}) {
        const Buffer<K, T> buffer = CreateWith<K>(ctx, Pattern<T>(n, 211));
        buffer.enqueue_fill(value);
        EXPECT_TRUE(AllEqual(Contents(buffer), value)) << "count " << n;
        // enqueue_memset is the same operation, through the context.
        const Buffer<K, T> other = CreateWith<K>(ctx, Pattern<T>(n, 212));
        ctx.enqueue_memset(other, value);
        EXPECT_TRUE(AllEqual(Contents(other), value)) << "enqueue_memset, count " << n;
      }
    }
  });
}

TEST_P(FillTest, OneByteElements) {
  CheckPatterns<std::uint8_t>(ctx(), {0xA5, 0x01, 0xFF, 0x00});
  CheckPatterns<std::int8_t>(ctx(), {-1, -128, 0x5A});
  CheckPatterns<bool>(ctx(), {true, false});
}

TEST_P(FillTest, TwoByteElements) {
  CheckPatterns<std::uint16_t>(ctx(), {0x0123, 0xABCD, 0x00FF, 0xFF00});
  CheckPatterns<std::int16_t>(ctx(), {-2, 0x7ACE});
  CheckPatterns<float16>(ctx(), {float16::from_bits(0x7E01),    // quiet NaN with payload
                                 float16::from_bits(0x7C01),    // signalling NaN
                                 float16::from_bits(0x8000),    // -0
                                 float16::from_bits(0x0001)});  // smallest subnormal
  CheckPatterns<bfloat16>(ctx(), {bfloat16::from_bits(0xFF81), bfloat16::from_bits(0x3F80),
                                  bfloat16::from_bits(0x7FC1)});
}

TEST_P(FillTest, FourByteElements) {
  CheckPatterns<std::uint32_t>(ctx(), {0x01234567u, 0x89ABCDEFu, 0x000000FFu});
  CheckPatterns<std::int32_t>(ctx(), {-2, 0x12345678});
  CheckPatterns<float>(ctx(), {std::bit_cast<float>(0x7FA12345u),  // signalling NaN
                               std::bit_cast<float>(0xFFC00001u),  // negative quiet NaN
                               std::bit_cast<float>(0x00000001u),  // denormal
                               std::bit_cast<float>(0x80000000u),  // -0
                               1.5f});
}

TEST_P(FillTest, EightByteElements) {
  CheckPatterns<std::uint64_t>(ctx(), {0x0123456789ABCDEFull, 0xFEDCBA9876543210ull,
                                       0x00000000FFFFFFFFull, 0xFFFFFFFF00000000ull});
  CheckPatterns<std::int64_t>(ctx(), {-2, 0x0102030405060708ll});
  CheckPatterns<double>(ctx(), {std::bit_cast<double>(0x7FF0123456789ABCull),  // signalling NaN
                                std::bit_cast<double>(0xFFF8000000000001ull),
                                std::bit_cast<double>(0x0000000000000001ull), -0.0});
  CheckPatterns<std::complex<float>>(
      ctx(), {{std::bit_cast<float>(0x01234567u), std::bit_cast<float>(0x89ABCDEFu)},
              {std::bit_cast<float>(0x7FA00001u), -0.0f}});
}

TEST_P(FillTest, SixteenByteElements) {
  CheckPatterns<std::complex<double>>(ctx(), {{std::bit_cast<double>(0x0123456789ABCDEFull),
                                               std::bit_cast<double>(0xFEDCBA9876543210ull)},
                                              {std::bit_cast<double>(0x7FF0000000000001ull), 1.0},
                                              {0.0, std::bit_cast<double>(0x8000000000000000ull)}});
}

// A view filled in the middle of its parent: its neighbours keep their bytes.
TEST_P(FillTest, ViewFillLeavesNeighboursUntouched) {
  ForEachElementType([&]<class T>() {
    ForEachKind([&]<Kind K>() {
      const std::size_t n = 257;
      const Array<T> before = Pattern<T>(n, 221);
      const Buffer<K, T> parent = CreateWith<K>(ctx(), before);
      const Buffer<K, T> view = parent.template create_sub_buffer<T>(5, n - 11);
      const T value = MakeValue<T>(222);
      view.enqueue_fill(value);
      Array<T> expected = before;
      for (std::size_t i = 5; i < n - 6; ++i) expected[i] = value;
      EXPECT_TRUE(BytesEqual(Contents(parent), expected));
    });
  });
}

// Views whose start is aligned for their type but not to the pattern size:
// a complex64 view (alignment 4, pattern 8) at byte 4, a complex128 view
// (alignment 8, pattern 16) at byte 8, a uint64 view at byte 8 of a
// 16-byte-aligned allocation.
template <Kind K, class T>
void CheckViewAtByte(const anydev::DeviceContext& ctx, std::size_t byte_offset, T value) {
  SCOPED_TRACE("view at byte " + std::to_string(byte_offset));
  const std::size_t view_count = 37;
  const std::size_t words_count = (view_count * sizeof(T) + 3) / 4;
  const std::size_t total = byte_offset + words_count * 4 + 24;
  const Array<std::uint8_t> before = Pattern<std::uint8_t>(total, 231);
  const Buffer<K, std::uint8_t> parent = CreateWith<K>(ctx, before);
  // Reach the offset through a uint32 view so that the view's element offset
  // counts in its own type.
  const Buffer<K, std::uint32_t> words =
      parent.template create_sub_buffer<std::uint32_t>(byte_offset / 4, words_count);
  const Buffer<K, T> view = words.template create_sub_buffer<T>(0, view_count);
  view.enqueue_fill(value);
  Array<std::uint8_t> expected = before;
  for (std::size_t i = 0; i < view_count; ++i) {
    std::memcpy(expected.data() + byte_offset + i * sizeof(T), &value, sizeof(T));
  }
  EXPECT_TRUE(BytesEqual(Contents(parent), expected));
}

TEST_P(FillTest, ViewAlignedForItsTypeButNotToThePatternSize) {
  ForEachKind([&]<Kind K>() {
    CheckViewAtByte<K>(
        ctx(), 4,
        std::complex<float>(std::bit_cast<float>(0x01234567u), std::bit_cast<float>(0x89ABCDEFu)));
    CheckViewAtByte<K>(ctx(), 8,
                       std::complex<double>(std::bit_cast<double>(0x0123456789ABCDEFull),
                                            std::bit_cast<double>(0xFEDCBA9876543210ull)));
    CheckViewAtByte<K>(ctx(), 24, std::complex<double>(1.0, -2.0));
    CheckViewAtByte<K>(ctx(), 8, std::uint64_t{0x0123456789ABCDEFull});
    CheckViewAtByte<K>(ctx(), 4, anydev::float16::from_bits(0xABCD));
  });
}

// Work on one stream runs in order: the later fill wins, and a copy sees the
// fill enqueued before it.
TEST_P(FillTest, FillsAndCopiesRunInOrder) {
  ForEachKind([&]<Kind K>() {
    const std::size_t n = 1 << 20;
    const Buffer<K, std::uint32_t> a = Create<K, std::uint32_t>(ctx(), n);
    const anydev::DeviceBuffer<std::uint32_t> b = ctx().enqueue_create_buffer<std::uint32_t>(n);
    a.enqueue_fill(0x11111111u);
    a.enqueue_fill(0x22222222u);
    a.enqueue_copy_to(b);
    a.enqueue_fill(0x33333333u);
    EXPECT_TRUE(AllEqual(Contents(b), 0x22222222u));
    EXPECT_TRUE(AllEqual(Contents(a), 0x33333333u));
  });
}

ANYDEV_CONFORMANCE_SUITE(FillTest);

}  // namespace
}  // namespace anydev_conformance
