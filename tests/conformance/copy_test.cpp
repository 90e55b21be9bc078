// SPDX-License-Identifier: Apache-2.0
// Copies in every direction and through every overload, byte-exact for every
// element type.
#include <cstdint>
#include <vector>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceBuffer;
using anydev::HostBuffer;

class CopyTest : public DeviceTest {};

constexpr std::size_t kCount = 1031;  // odd, so no backend gets whole vectors only

// src.enqueue_copy_to(dst) and dst.enqueue_copy_from(src) for one pair of kinds.
template <Kind Src, Kind Dst>
void CheckBufferToBuffer(const anydev::DeviceContext& ctx) {
  ForEachElementType([&]<class T>() {
    const Array<T> values = Pattern<T>(kCount, 11);
    const Array<T> before = Pattern<T>(kCount, 12);
    {
      SCOPED_TRACE("enqueue_copy_to");
      const Buffer<Src, T> src = CreateWith<Src>(ctx, values);
      const Buffer<Dst, T> dst = CreateWith<Dst>(ctx, before);
      src.enqueue_copy_to(dst);
      EXPECT_TRUE(BytesEqual(Contents(dst), values));
      EXPECT_TRUE(BytesEqual(Contents(src), values)) << "the source changed";
    }
    {
      SCOPED_TRACE("enqueue_copy_from");
      const Buffer<Src, T> src = CreateWith<Src>(ctx, values);
      const Buffer<Dst, T> dst = CreateWith<Dst>(ctx, before);
      dst.enqueue_copy_from(src);
      EXPECT_TRUE(BytesEqual(Contents(dst), values));
    }
    {
      SCOPED_TRACE("DeviceContext::enqueue_copy");
      const Buffer<Src, T> src = CreateWith<Src>(ctx, values);
      const Buffer<Dst, T> dst = CreateWith<Dst>(ctx, before);
      ctx.enqueue_copy(dst, src);
      EXPECT_TRUE(BytesEqual(Contents(dst), values));
    }
  });
}

TEST_P(CopyTest, HostToHost) { CheckBufferToBuffer<Kind::host, Kind::host>(ctx()); }
TEST_P(CopyTest, HostToDevice) { CheckBufferToBuffer<Kind::host, Kind::device>(ctx()); }
TEST_P(CopyTest, DeviceToHost) { CheckBufferToBuffer<Kind::device, Kind::host>(ctx()); }
TEST_P(CopyTest, DeviceToDevice) { CheckBufferToBuffer<Kind::device, Kind::device>(ctx()); }

// Host -> device -> device -> host without synchronizing in between: the
// stream runs them in order.
TEST_P(CopyTest, ChainWithoutSynchronizing) {
  ForEachElementType([&]<class T>() {
    const Array<T> values = Pattern<T>(kCount, 21);
    const HostBuffer<T> src = HostWith(ctx(), values);
    const DeviceBuffer<T> d1 = ctx().enqueue_create_buffer<T>(kCount);
    const DeviceBuffer<T> d2 = ctx().enqueue_create_buffer<T>(kCount);
    const HostBuffer<T> dst = ctx().enqueue_create_host_buffer<T>(kCount);
    src.enqueue_copy_to(d1);
    d1.enqueue_copy_to(d2);
    d2.enqueue_copy_to(dst);
    ctx().synchronize();
    EXPECT_TRUE(BytesEqual(std::span<const T>(dst.as_span()), values.cspan()));
  });
}

TEST_P(CopyTest, LargeRoundTrip) {
  const std::size_t n = 4u << 20;  // 4 MiB
  const Array<std::uint8_t> values = Pattern<std::uint8_t>(n, 31);
  const HostBuffer<std::uint8_t> src = HostWith(ctx(), values);
  const DeviceBuffer<std::uint8_t> device = ctx().enqueue_create_buffer<std::uint8_t>(n);
  const HostBuffer<std::uint8_t> dst = ctx().enqueue_create_host_buffer<std::uint8_t>(n);
  src.enqueue_copy_to(device);
  device.enqueue_copy_to(dst);
  ctx().synchronize();
  EXPECT_TRUE(BytesEqual(std::span<const std::uint8_t>(dst.as_span()), values.cspan()));
}

// Buffer <-> T* and buffer <-> std::span, through the buffer's methods.
TEST_P(CopyTest, BufferToAndFromPointerAndSpan) {
  ForEachElementType([&]<class T>() {
    ForEachKind([&]<Kind K>() {
      const Array<T> values = Pattern<T>(kCount, 41);
      {
        SCOPED_TRACE("enqueue_copy_from(const T*), enqueue_copy_to(T*)");
        const Buffer<K, T> buffer = Create<K, T>(ctx(), kCount);
        buffer.enqueue_copy_from(static_cast<const T*>(values.data()));
        Array<T> out = Pattern<T>(kCount, 42);
        buffer.enqueue_copy_to(out.data());
        ctx().synchronize();
        EXPECT_TRUE(BytesEqual(out, values));
      }
      {
        SCOPED_TRACE("enqueue_copy_from(span), enqueue_copy_to(span)");
        const Buffer<K, T> buffer = Create<K, T>(ctx(), kCount);
        buffer.enqueue_copy_from(values.cspan());
        Array<T> out = Pattern<T>(kCount, 43);
        buffer.enqueue_copy_to(out.span());
        ctx().synchronize();
        EXPECT_TRUE(BytesEqual(out, values));
      }
    });
  });
}

// Every DeviceContext::enqueue_copy overload with a pointer or span side.
TEST_P(CopyTest, ContextCopyPointerAndSpanOverloads) {
  ForEachElementType([&]<class T>() {
    ForEachKind([&]<Kind K>() {
      const Array<T> values = Pattern<T>(kCount, 51);
      {
        SCOPED_TRACE("enqueue_copy(buffer, const T*), enqueue_copy(T*, buffer)");
        const Buffer<K, T> buffer = Create<K, T>(ctx(), kCount);
        ctx().enqueue_copy(buffer, static_cast<const T*>(values.data()));
        Array<T> out = Pattern<T>(kCount, 52);
        ctx().enqueue_copy(out.data(), buffer);
        ctx().synchronize();
        EXPECT_TRUE(BytesEqual(out, values));
      }
      {
        SCOPED_TRACE("enqueue_copy(buffer, span<const T>), enqueue_copy(span<T>, buffer)");
        const Buffer<K, T> buffer = Create<K, T>(ctx(), kCount);
        ctx().enqueue_copy(buffer, values.cspan());
        Array<T> out = Pattern<T>(kCount, 53);
        ctx().enqueue_copy(out.span(), buffer);
        ctx().synchronize();
        EXPECT_TRUE(BytesEqual(out, values));
      }
    });
  });
}

// A copy made through another context of the same device runs on that
// context's stream: synchronizing it is enough.
TEST_P(CopyTest, ContextCopyRunsOnThatContextsStream) {
  const anydev::DeviceContext other = ctx().with_stream(ctx().create_stream());
  const Array<std::uint32_t> values = Pattern<std::uint32_t>(1 << 18, 61);
  const HostBuffer<std::uint32_t> src = HostWith(ctx(), values);
  const DeviceBuffer<std::uint32_t> device = ctx().enqueue_create_buffer<std::uint32_t>(1 << 18);
  const HostBuffer<std::uint32_t> dst = ctx().enqueue_create_host_buffer<std::uint32_t>(1 << 18);
  ctx().synchronize();
  other.enqueue_copy(device, src);
  other.enqueue_copy(dst, device);
  other.synchronize();
  EXPECT_TRUE(BytesEqual(std::span<const std::uint32_t>(dst.as_span()), values.cspan()));
}

ANYDEV_CONFORMANCE_SUITE(CopyTest);

}  // namespace
}  // namespace anydev_conformance
