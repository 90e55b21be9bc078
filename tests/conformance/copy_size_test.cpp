// SPDX-License-Identifier: Apache-2.0
// Copy size rules: a buffer-to-buffer copy moves the destination's size; a
// larger source is fine and bytes past the destination stay untouched; a
// shorter source or span is out_of_range and changes nothing anywhere.
#include <algorithm>
#include <cstdint>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::Status;

class CopySizeTest : public DeviceTest {};

constexpr std::size_t kCount = 100;
constexpr std::size_t kGuard = 9;  // sentinel elements after a destination view

// dst is a view of the first kCount elements of a parent of kCount + kGuard;
// src has kCount + 5 elements. Only kCount elements may move.
template <Kind Src, Kind Dst, class CopyFn>
void CheckLargerSource(const anydev::DeviceContext& ctx, CopyFn copy) {
  ForEachElementType([&]<class T>() {
    const Array<T> values = Pattern<T>(kCount + 5, 101);
    const Array<T> sentinel = Pattern<T>(kCount + kGuard, 102);
    const Buffer<Src, T> src = CreateWith<Src>(ctx, values);
    const Buffer<Dst, T> parent = CreateWith<Dst>(ctx, sentinel);
    const Buffer<Dst, T> dst = parent.template create_sub_buffer<T>(0, kCount);
    copy(src, dst);
    Array<T> expected = sentinel;
    std::copy(values.data(), values.data() + kCount, expected.data());
    EXPECT_TRUE(BytesEqual(Contents(parent), expected));
    EXPECT_TRUE(BytesEqual(Contents(src), values)) << "the source changed";
  });
}

// src has kCount - 1 elements, dst kCount: the copy must fail before
// anything is enqueued.
template <Kind Src, Kind Dst, class CopyFn>
void CheckShorterSource(const anydev::DeviceContext& ctx, CopyFn copy) {
  ForEachElementType([&]<class T>() {
    const Array<T> src_values = Pattern<T>(kCount - 1, 111);
    const Array<T> dst_values = Pattern<T>(kCount, 112);
    const Buffer<Src, T> src = CreateWith<Src>(ctx, src_values);
    const Buffer<Dst, T> dst = CreateWith<Dst>(ctx, dst_values);
    EXPECT_TRUE(Fails(Status::out_of_range, [&] { copy(src, dst); }));
    ctx.synchronize();
    EXPECT_TRUE(BytesEqual(Contents(dst), dst_values)) << "a failed copy changed its destination";
    EXPECT_TRUE(BytesEqual(Contents(src), src_values)) << "a failed copy changed its source";
  });
}

template <Kind Src, Kind Dst>
void CheckAllCopyForms(const anydev::DeviceContext& ctx) {
  const auto copy_to = [](const auto& src, const auto& dst) { src.enqueue_copy_to(dst); };
  const auto copy_from = [](const auto& src, const auto& dst) { dst.enqueue_copy_from(src); };
  const auto ctx_copy = [&ctx](const auto& src, const auto& dst) { ctx.enqueue_copy(dst, src); };
  {
    SCOPED_TRACE("enqueue_copy_to");
    CheckLargerSource<Src, Dst>(ctx, copy_to);
    CheckShorterSource<Src, Dst>(ctx, copy_to);
  }
  {
    SCOPED_TRACE("enqueue_copy_from");
    CheckLargerSource<Src, Dst>(ctx, copy_from);
    CheckShorterSource<Src, Dst>(ctx, copy_from);
  }
  {
    SCOPED_TRACE("DeviceContext::enqueue_copy");
    CheckLargerSource<Src, Dst>(ctx, ctx_copy);
    CheckShorterSource<Src, Dst>(ctx, ctx_copy);
  }
}

TEST_P(CopySizeTest, HostToHost) { CheckAllCopyForms<Kind::host, Kind::host>(ctx()); }
TEST_P(CopySizeTest, HostToDevice) { CheckAllCopyForms<Kind::host, Kind::device>(ctx()); }
TEST_P(CopySizeTest, DeviceToHost) { CheckAllCopyForms<Kind::device, Kind::host>(ctx()); }
TEST_P(CopySizeTest, DeviceToDevice) { CheckAllCopyForms<Kind::device, Kind::device>(ctx()); }

// Pointer copies move the buffer's size: memory past it is untouched.
TEST_P(CopySizeTest, PointerCopiesMoveTheBuffersSize) {
  ForEachElementType([&]<class T>() {
    ForEachKind([&]<Kind K>() {
      const Array<T> values = Pattern<T>(kCount, 121);
      const Buffer<K, T> buffer = CreateWith<K>(ctx(), values);
      Array<T> out = Pattern<T>(kCount + kGuard, 122);
      Array<T> expected = out;
      std::copy(values.data(), values.data() + kCount, expected.data());
      buffer.enqueue_copy_to(out.data());
      ctx().synchronize();
      EXPECT_TRUE(BytesEqual(out, expected));

      // A larger span is fine; only the buffer's size is read or written.
      const Array<T> larger = Pattern<T>(kCount + kGuard, 123);
      buffer.enqueue_copy_from(larger.cspan());
      Array<T> out2 = Pattern<T>(kCount + kGuard, 124);
      Array<T> expected2 = out2;
      std::copy(larger.data(), larger.data() + kCount, expected2.data());
      ctx().enqueue_copy(out2.span(), buffer);
      ctx().synchronize();
      EXPECT_TRUE(BytesEqual(out2, expected2));
    });
  });
}

TEST_P(CopySizeTest, ShorterSpanIsOutOfRangeAndChangesNothing) {
  ForEachElementType([&]<class T>() {
    ForEachKind([&]<Kind K>() {
      const Array<T> values = Pattern<T>(kCount, 131);
      const Buffer<K, T> buffer = CreateWith<K>(ctx(), values);
      const Array<T> short_src = Pattern<T>(kCount - 1, 132);
      Array<T> short_dst = Pattern<T>(kCount - 1, 133);
      const Array<T> short_dst_before = short_dst;
      EXPECT_TRUE(
          Fails(Status::out_of_range, [&] { buffer.enqueue_copy_from(short_src.cspan()); }));
      EXPECT_TRUE(
          Fails(Status::out_of_range, [&] { ctx().enqueue_copy(buffer, short_src.cspan()); }));
      EXPECT_TRUE(Fails(Status::out_of_range, [&] { buffer.enqueue_copy_to(short_dst.span()); }));
      EXPECT_TRUE(
          Fails(Status::out_of_range, [&] { ctx().enqueue_copy(short_dst.span(), buffer); }));
      ctx().synchronize();
      EXPECT_TRUE(BytesEqual(Contents(buffer), values)) << "a failed copy changed the buffer";
      EXPECT_TRUE(BytesEqual(short_dst, short_dst_before)) << "a failed copy changed the span";
    });
  });
}

TEST_P(CopySizeTest, NullPointerIsInvalidArgument) {
  ForEachKind([&]<Kind K>() {
    const Array<std::int32_t> values = Pattern<std::int32_t>(16, 141);
    const Buffer<K, std::int32_t> buffer = CreateWith<K>(ctx(), values);
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] {
      buffer.enqueue_copy_from(static_cast<const std::int32_t*>(nullptr));
    }));
    EXPECT_TRUE(Fails(Status::invalid_argument,
                      [&] { buffer.enqueue_copy_to(static_cast<std::int32_t*>(nullptr)); }));
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] {
      ctx().enqueue_copy(buffer, static_cast<const std::int32_t*>(nullptr));
    }));
    ctx().synchronize();
    EXPECT_TRUE(BytesEqual(Contents(buffer), values));
  });
}

// Views of one buffer's memory: a copy between overlapping ones is
// invalid_argument naming both byte ranges and changes nothing (a buffer
// copied onto itself is one, and must not deadlock on its own handle's
// lock); disjoint ones copy.
TEST_P(CopySizeTest, OverlappingViewsOfOneBufferAreInvalidArgument) {
  ForEachKind([&]<Kind K>() {
    const Array<std::int32_t> values = Pattern<std::int32_t>(32, 151);
    const Buffer<K, std::int32_t> buffer = CreateWith<K>(ctx(), values);
    EXPECT_TRUE(
        Fails(Status::invalid_argument, [&] { buffer.enqueue_copy_to(buffer); }, {"overlap"}));
    const Buffer<K, std::int32_t> low = buffer.template create_sub_buffer<std::int32_t>(0, 16);
    const Buffer<K, std::int32_t> mid = buffer.template create_sub_buffer<std::int32_t>(8, 16);
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { mid.enqueue_copy_from(low); },
                      {"source bytes 0..64", "destination bytes 32..96", "overlap"}));
    ctx().synchronize();
    EXPECT_TRUE(BytesEqual(Contents(buffer), values)) << "a refused copy changed the buffer";
    const Buffer<K, std::int32_t> high = buffer.template create_sub_buffer<std::int32_t>(16, 16);
    high.enqueue_copy_from(low);
    Array<std::int32_t> expected = values;
    std::copy(values.data(), values.data() + 16, expected.data() + 16);
    EXPECT_TRUE(BytesEqual(Contents(buffer), expected));
  });
}

ANYDEV_CONFORMANCE_SUITE(CopySizeTest);

}  // namespace
}  // namespace anydev_conformance
