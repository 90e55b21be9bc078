// SPDX-License-Identifier: Apache-2.0
// Sub-buffers: views that share memory, reinterpret the dtype, nest, count
// their offset in their own elements, must lie inside and be aligned, and
// keep their parent's memory alive.
#include <cstdint>
#include <limits>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceBuffer;
using anydev::HostBuffer;
using anydev::Status;

class SubBufferTest : public DeviceTest {};

constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();

Array<std::uint8_t> Iota(std::size_t n) {
  Array<std::uint8_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(i * 7 + 3);
  return out;
}

TEST_P(SubBufferTest, HostViewSharesMemory) {
  const HostBuffer<std::uint32_t> parent = HostWith(ctx(), Pattern<std::uint32_t>(16, 301));
  const HostBuffer<std::uint32_t> view = parent.create_sub_buffer<std::uint32_t>(4, 8);
  EXPECT_EQ(view.size(), 8u);
  EXPECT_EQ(view.size_bytes(), 32u);
  EXPECT_EQ(view.unsafe_ptr(), parent.unsafe_ptr() + 4);
  EXPECT_TRUE(SharesStream(view.context(), ctx()));
  view[0] = 0xDEADBEEFu;
  EXPECT_EQ(parent[4], 0xDEADBEEFu);
  parent[11] = 0x0BADF00Du;
  EXPECT_EQ(view[7], 0x0BADF00Du);
}

TEST_P(SubBufferTest, ViewReinterpretsTheDtype) {
  ForEachKind([&]<Kind K>() {
    const Array<std::uint8_t> bytes = Iota(64);
    const Buffer<K, std::uint8_t> parent = CreateWith<K>(ctx(), bytes);
    const Buffer<K, std::uint32_t> words = parent.template create_sub_buffer<std::uint32_t>(2, 3);
    EXPECT_EQ(words.size(), 3u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(words.unsafe_ptr()),
              reinterpret_cast<std::uintptr_t>(parent.unsafe_ptr()) + 8);
    Array<std::uint32_t> expected(3);
    std::memcpy(expected.data(), bytes.data() + 8, 12);
    EXPECT_TRUE(BytesEqual(Contents(words), expected));

    const Buffer<K, double> doubles = parent.template create_sub_buffer<double>(3, 2);
    Array<double> expected_doubles(2);
    std::memcpy(expected_doubles.data(), bytes.data() + 24, 16);
    EXPECT_TRUE(BytesEqual(Contents(doubles), expected_doubles));
  });
}

TEST_P(SubBufferTest, OffsetCountsInElementsOfTheViewType) {
  ForEachKind([&]<Kind K>() {
    const Buffer<K, std::uint8_t> parent = CreateWith<K>(ctx(), Iota(64));
    const Buffer<K, std::uint64_t> view = parent.template create_sub_buffer<std::uint64_t>(2, 3);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(view.unsafe_ptr()),
              reinterpret_cast<std::uintptr_t>(parent.unsafe_ptr()) + 16);
    view.enqueue_fill(0x0102030405060708ull);
    Array<std::uint8_t> expected = Iota(64);
    for (std::size_t i = 0; i < 3; ++i) {
      const std::uint64_t v = 0x0102030405060708ull;
      std::memcpy(expected.data() + 16 + 8 * i, &v, 8);
    }
    EXPECT_TRUE(BytesEqual(Contents(parent), expected));
  });
}

TEST_P(SubBufferTest, ViewsNest) {
  ForEachKind([&]<Kind K>() {
    const Array<std::uint8_t> bytes = Iota(200);
    const Buffer<K, std::uint8_t> parent = CreateWith<K>(ctx(), bytes);
    const Buffer<K, std::uint16_t> v1 = parent.template create_sub_buffer<std::uint16_t>(10, 50);
    const Buffer<K, std::uint32_t> v2 = v1.template create_sub_buffer<std::uint32_t>(3, 10);
    const Buffer<K, std::uint8_t> v3 = v2.template create_sub_buffer<std::uint8_t>(5, 4);
    // v1 at byte 20, v2 at 20 + 12 = 32, v3 at 32 + 5 = 37.
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v2.unsafe_ptr()),
              reinterpret_cast<std::uintptr_t>(parent.unsafe_ptr()) + 32);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v3.unsafe_ptr()),
              reinterpret_cast<std::uintptr_t>(parent.unsafe_ptr()) + 37);
    Array<std::uint32_t> expected(10);
    std::memcpy(expected.data(), bytes.data() + 32, 40);
    EXPECT_TRUE(BytesEqual(Contents(v2), expected));
    EXPECT_TRUE(BytesEqual(Contents(v3), Array<std::uint8_t>(bytes.cspan().subspan(37, 4))));
    // Outside the nested parent even though inside the allocation.
    EXPECT_TRUE(Fails(Status::out_of_range,
                      [&] { (void)v2.template create_sub_buffer<std::uint32_t>(8, 3); }));
  });
}

TEST_P(SubBufferTest, InsideAtTheEndAndOutside) {
  ForEachElementType([&]<class T>() {
    ForEachKind([&]<Kind K>() {
      const Buffer<K, T> parent = Create<K, T>(ctx(), 16);
      EXPECT_EQ(parent.template create_sub_buffer<T>(0, 16).size(), 16u);
      EXPECT_EQ(parent.template create_sub_buffer<T>(15, 1).size(), 1u);
      EXPECT_EQ(parent.template create_sub_buffer<T>(16, 0).size(), 0u);  // empty, at the end
      auto view = [&](std::size_t offset, std::size_t size) {
        (void)parent.template create_sub_buffer<T>(offset, size);
      };
      EXPECT_TRUE(Fails(Status::out_of_range, [&] { view(0, 17); }, {"17"}));
      EXPECT_TRUE(Fails(Status::out_of_range, [&] { view(16, 1); }, {"16"}));
      EXPECT_TRUE(Fails(Status::out_of_range, [&] { view(17, 0); }, {"17"}));
      EXPECT_TRUE(Fails(Status::out_of_range, [&] { view(kSizeMax, 1); }));
      EXPECT_TRUE(Fails(Status::out_of_range, [&] { view(1, kSizeMax); }));
      // offset * sizeof(T) and offset + size that wrap around size_t.
      if constexpr (sizeof(T) > 1) {
        EXPECT_TRUE(Fails(Status::out_of_range, [&] { view(kSizeMax / sizeof(T) + 1, 0); }));
      }
      EXPECT_TRUE(Fails(Status::out_of_range, [&] { view(2, kSizeMax / sizeof(T)); }));
    });
  });
}

TEST_P(SubBufferTest, LargerViewTypeOutsideIsOutOfRange) {
  ForEachKind([&]<Kind K>() {
    const Buffer<K, std::uint8_t> parent = Create<K, std::uint8_t>(ctx(), 16);
    EXPECT_EQ(parent.template create_sub_buffer<std::uint64_t>(0, 2).size(), 2u);
    EXPECT_TRUE(Fails(Status::out_of_range,
                      [&] { (void)parent.template create_sub_buffer<std::uint64_t>(1, 2); }));
    EXPECT_TRUE(Fails(Status::out_of_range, [&] {
      (void)parent.template create_sub_buffer<std::complex<double>>(0, 2);
    }));
  });
}

TEST_P(SubBufferTest, MisalignedStartIsInvalidArgument) {
  ForEachKind([&]<Kind K>() {
    const Buffer<K, std::uint8_t> parent = Create<K, std::uint8_t>(ctx(), 64);
    const Buffer<K, std::uint8_t> at2 = parent.template create_sub_buffer<std::uint8_t>(2, 32);
    const Buffer<K, std::uint8_t> at1 = parent.template create_sub_buffer<std::uint8_t>(1, 32);
    // A float view at byte 2, a uint16 view at byte 1, a double view at byte 2.
    EXPECT_TRUE(Fails(Status::invalid_argument,
                      [&] { (void)at2.template create_sub_buffer<float>(0, 4); }));
    EXPECT_TRUE(Fails(Status::invalid_argument,
                      [&] { (void)at1.template create_sub_buffer<std::uint16_t>(0, 1); }));
    EXPECT_TRUE(Fails(Status::invalid_argument,
                      [&] { (void)at2.template create_sub_buffer<double>(1, 1); }));
    // Aligned views of the same parents are fine.
    EXPECT_EQ(at2.template create_sub_buffer<std::uint16_t>(0, 4).size(), 4u);
    EXPECT_EQ(at1.template create_sub_buffer<std::uint8_t>(1, 4).size(), 4u);
  });
}

// The view keeps its parent's memory alive after the parent's handle is
// gone; fresh allocations of the same size must not get that memory.
TEST_P(SubBufferTest, ViewKeepsParentAlive) {
  ForEachKind([&]<Kind K>() {
    const std::size_t n = 1 << 20;
    const Array<std::uint8_t> values = Pattern<std::uint8_t>(n, 311);
    Buffer<K, std::uint8_t> view;
    {
      const Buffer<K, std::uint8_t> parent = CreateWith<K>(ctx(), values);
      view = parent.template create_sub_buffer<std::uint8_t>(1000, 5000);
    }
    for (int i = 0; i < 4; ++i) {
      const Buffer<K, std::uint8_t> other = Create<K, std::uint8_t>(ctx(), n);
      other.enqueue_fill(std::uint8_t{0xEE});
    }
    ctx().synchronize();
    EXPECT_TRUE(
        BytesEqual(Contents(view), Array<std::uint8_t>(values.cspan().subspan(1000, 5000))));
    view.enqueue_fill(std::uint8_t{0x42});
    EXPECT_TRUE(AllEqual(Contents(view), std::uint8_t{0x42}));
  });
}

ANYDEV_CONFORMANCE_SUITE(SubBufferTest);

}  // namespace
}  // namespace anydev_conformance
