// SPDX-License-Identifier: Apache-2.0
// Creating buffers: sizes, zero size, element access, sharing by copy, empty
// handles, allocations that overflow or cannot be satisfied.
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceBuffer;
using anydev::HostBuffer;
using anydev::Status;

class BufferTest : public DeviceTest {};

constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();

TEST_P(BufferTest, CreateEveryTypeAndSize) {
  ForEachElementType([&]<class T>() {
    ForEachKind([&]<Kind K>() {
      for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
        SCOPED_TRACE("size " + std::to_string(n));
        const Buffer<K, T> buffer = Create<K, T>(ctx(), n);
        EXPECT_EQ(buffer.size(), n);
        EXPECT_EQ(buffer.size_bytes(), n * sizeof(T));
        ASSERT_NE(buffer.unsafe_ptr(), nullptr);
        EXPECT_NE(buffer.handle(), nullptr);
        EXPECT_EQ(buffer.context().api(), api());
        EXPECT_EQ(buffer.context().id(), GetParam().device);
        if constexpr (K == Kind::host) {
          EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.unsafe_ptr()) % alignof(T), 0u);
          EXPECT_EQ(buffer.as_span().data(), buffer.unsafe_ptr());
          EXPECT_EQ(buffer.as_span().size(), n);
        }
      }
    });
  });
}

TEST_P(BufferTest, ContextIsTheCreatingContext) {
  ForEachKind([&]<Kind K>() {
    const Buffer<K, std::int16_t> buffer = Create<K, std::int16_t>(ctx(), 10);
    EXPECT_TRUE(SharesStream(buffer.context(), ctx()));
    EXPECT_TRUE(SharesStream(ctx(), buffer.context()));
  });
}

TEST_P(BufferTest, CreateBufferSyncIsUsable) {
  const DeviceBuffer<std::uint64_t> device = ctx().create_buffer_sync<std::uint64_t>(4096);
  EXPECT_EQ(device.size(), 4096u);
  device.enqueue_fill(0x0123456789ABCDEFull);
  EXPECT_TRUE(AllEqual(Contents(device), std::uint64_t{0x0123456789ABCDEFull}));
}

TEST_P(BufferTest, HostBufferIsUsableAtOnceByTheHost) {
  ForEachElementType([&]<class T>() {
    const Array<T> values = Pattern<T>(777, 1);
    const HostBuffer<T> buffer = ctx().enqueue_create_host_buffer<T>(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) buffer[i] = values[i];
    for (std::size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(std::memcmp(&buffer.at(i), &values[i], sizeof(T)), 0) << "index " << i;
    }
    buffer.at(5) = values[0];
    EXPECT_EQ(std::memcmp(&buffer[5], &values[0], sizeof(T)), 0) << "at() returns a reference";
  });
}

TEST_P(BufferTest, AtOutsideIsOutOfRangeNamingIndexAndSize) {
  ForEachElementType([&]<class T>() {
    const HostBuffer<T> buffer = ctx().enqueue_create_host_buffer<T>(3);
    EXPECT_TRUE(Fails(Status::out_of_range, [&] { (void)buffer.at(3); }, {"3"}));
    EXPECT_TRUE(Fails(Status::out_of_range, [&] { (void)buffer.at(12345); }, {"12345", "3"}));
    EXPECT_TRUE(Fails(Status::out_of_range, [&] { (void)buffer.at(kSizeMax); }));
  });
}

TEST_P(BufferTest, ZeroSizeBuffers) {
  ForEachElementType([&]<class T>() {
    ForEachKind([&]<Kind K>() {
      const Buffer<K, T> empty = Create<K, T>(ctx(), 0);
      const Buffer<K, T> other = Create<K, T>(ctx(), 0);
      EXPECT_EQ(empty.size(), 0u);
      EXPECT_EQ(empty.size_bytes(), 0u);
      EXPECT_EQ(empty.unsafe_ptr(), nullptr);
      EXPECT_NE(empty.handle(), nullptr) << "a zero-size buffer is a real, usable buffer";
      // Copies and fills of nothing are no-ops, never errors.
      empty.enqueue_fill(MakeValue<T>(3));
      empty.enqueue_copy_to(other);
      empty.enqueue_copy_from(other);
      Array<T> none(0);
      empty.enqueue_copy_to(none.span());
      empty.enqueue_copy_from(none.cspan());
      ctx().enqueue_copy(other, empty);
      const Buffer<K, T> view = empty.template create_sub_buffer<T>(0, 0);
      EXPECT_EQ(view.size(), 0u);
      std::ostringstream text;
      text << empty;
      EXPECT_EQ(text.str(), std::string(KindName<K>()) + "([])");
      if constexpr (K == Kind::host) {
        EXPECT_TRUE(empty.as_span().empty());
        EXPECT_TRUE(Fails(Status::out_of_range, [&] { (void)empty.at(0); }));
      }
      ctx().synchronize();
    });
  });
}

// An empty std::span (data() == nullptr, as from an empty std::vector) is a
// valid range of zero elements: copying an empty buffer to or from it is a
// no-op like any other zero-size copy.
TEST_P(BufferTest, ZeroSizeCopiesWithEmptySpans) {
  ForEachKind([&]<Kind K>() {
    const Buffer<K, double> empty = Create<K, double>(ctx(), 0);
    empty.enqueue_copy_to(std::span<double>());
    empty.enqueue_copy_from(std::span<const double>());
    ctx().enqueue_copy(std::span<double>(), empty);
    ctx().enqueue_copy(empty, std::span<const double>());
    ctx().synchronize();
  });
}

TEST_P(BufferTest, CopiesShareTheBuffer) {
  const HostBuffer<std::int32_t> a = ctx().enqueue_create_host_buffer<std::int32_t>(16);
  const HostBuffer<std::int32_t> b = a;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(b.handle(), a.handle());
  EXPECT_EQ(b.unsafe_ptr(), a.unsafe_ptr());
  a[7] = -12345;
  EXPECT_EQ(b[7], -12345);
  b.enqueue_fill(99);
  EXPECT_TRUE(AllEqual(Contents(a), 99));
}

TEST_P(BufferTest, MovedFromAndDefaultBuffersAreInvalidState) {
  ForEachKind([&]<Kind K>() {
    Buffer<K, float> moved = Create<K, float>(ctx(), 8);
    const Buffer<K, float> target = std::move(moved);
    EXPECT_EQ(target.size(), 8u);
    const Buffer<K, float> defaulted;
    for (const Buffer<K, float>* empty :
         {static_cast<const Buffer<K, float>*>(&moved), &defaulted}) {
      EXPECT_EQ(empty->size(), 0u);
      EXPECT_EQ(empty->unsafe_ptr(), nullptr);
      EXPECT_EQ(empty->handle(), nullptr);
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { empty->enqueue_fill(1.0f); }));
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)empty->context(); }));
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { empty->enqueue_copy_to(target); }));
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { target.enqueue_copy_to(*empty); }));
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { ctx().enqueue_copy(target, *empty); }));
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { ctx().enqueue_memset(*empty, 2.0f); }));
      EXPECT_TRUE(Fails(Status::invalid_state,
                        [&] { (void)empty->template create_sub_buffer<float>(0, 0); }));
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { empty->reassign_ownership_to(ctx()); }));
      EXPECT_TRUE(Fails(Status::invalid_state, [&] {
        std::ostringstream text;
        text << *empty;
      }));
      if constexpr (K == Kind::host) {
        EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)empty->at(0); }));
        EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)empty->as_span(); }));
      } else {
        EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)empty->map_to_host(); }));
      }
    }
  });
}

TEST_P(BufferTest, ByteCountOverflowIsOutOfRange) {
  ForEachKind([&]<Kind K>() {
    EXPECT_TRUE(
        Fails(Status::out_of_range, [&] { (void)Create<K, std::uint64_t>(ctx(), kSizeMax / 4); }));
    EXPECT_TRUE(Fails(Status::out_of_range,
                      [&] { (void)Create<K, std::complex<double>>(ctx(), kSizeMax / 16 + 1); }));
  });
}

TEST_P(BufferTest, AllocationBeyondTheDeviceIsOutOfMemory) {
  // 2^62 bytes: more than any device or host has (and than the address space).
  ForEachKind([&]<Kind K>() {
    EXPECT_TRUE(Fails(Status::out_of_memory,
                      [&] { (void)Create<K, std::uint8_t>(ctx(), std::size_t{1} << 62); }));
    // The context stays usable.
    const Buffer<K, std::uint8_t> small = Create<K, std::uint8_t>(ctx(), 64);
    small.enqueue_fill(std::uint8_t{0x5A});
    EXPECT_TRUE(AllEqual(Contents(small), std::uint8_t{0x5A}));
  });
}

ANYDEV_CONFORMANCE_SUITE(BufferTest);

}  // namespace
}  // namespace anydev_conformance
