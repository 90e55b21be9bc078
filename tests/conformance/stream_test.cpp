// SPDX-License-Identifier: Apache-2.0
// Streams and events, and ordering between streams: a copy whose other
// buffer belongs to another stream waits for that stream's earlier work
// without any explicit synchronization by the caller.
#include <cstdint>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::DeviceEvent;
using anydev::DeviceStream;
using anydev::HostBuffer;

class StreamTest : public DeviceTest {
 protected:
  DeviceContext NewStreamContext() const { return ctx().with_stream(ctx().create_stream()); }
};

// Big enough that a copy racing ahead of it would see unfilled bytes.
constexpr std::size_t kBig = 4u << 20;
constexpr std::size_t kWords = kBig / 4;

TEST_P(StreamTest, ContextStreamFinishesTheContextsWork) {
  const DeviceStream stream = ctx().stream();
  const HostBuffer<std::uint32_t> buffer = ctx().enqueue_create_host_buffer<std::uint32_t>(kWords);
  buffer.enqueue_fill(0x01020304u);
  stream.synchronize();
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(buffer.as_span()), 0x01020304u));
}

TEST_P(StreamTest, WithStreamSendsWorkToThatStream) {
  const DeviceStream stream = ctx().create_stream();
  const DeviceContext on_stream = ctx().with_stream(stream);
  EXPECT_EQ(on_stream.api(), api());
  EXPECT_EQ(on_stream.id(), GetParam().device);
  EXPECT_TRUE(SharesStream(on_stream, ctx().with_stream(stream)));
  const HostBuffer<std::uint32_t> buffer =
      on_stream.enqueue_create_host_buffer<std::uint32_t>(kWords);
  buffer.enqueue_fill(0x0A0B0C0Du);
  stream.synchronize();
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(buffer.as_span()), 0x0A0B0C0Du));
}

TEST_P(StreamTest, EventsRecordSynchronizeAndComplete) {
  const DeviceEvent event = ctx().create_event();
  EXPECT_TRUE(event.is_complete()) << "an event never recorded is complete";
  event.synchronize();
  const HostBuffer<std::uint32_t> buffer = ctx().enqueue_create_host_buffer<std::uint32_t>(kWords);
  buffer.enqueue_fill(0x5EED5EEDu);
  ctx().stream().record_event(event);
  event.synchronize();
  EXPECT_TRUE(event.is_complete());
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(buffer.as_span()), 0x5EED5EEDu));
  ctx().synchronize();
}

// A copy from a raw pointer carries no automatic dependency: only the
// explicit wait orders it after the fill on the other stream.
TEST_P(StreamTest, StreamWaitForEventOrdersWork) {
  const DeviceContext b = NewStreamContext();
  const HostBuffer<std::uint32_t> src = ctx().enqueue_create_host_buffer<std::uint32_t>(kWords);
  const HostBuffer<std::uint32_t> dst = b.enqueue_create_host_buffer<std::uint32_t>(kWords);
  src.enqueue_fill(0xFACEB00Cu);
  const DeviceEvent filled = ctx().create_event();
  ctx().stream().record_event(filled);
  b.stream().enqueue_wait_for(filled);
  b.enqueue_copy(dst, static_cast<const std::uint32_t*>(src.unsafe_ptr()));
  b.synchronize();
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(dst.as_span()), 0xFACEB00Cu));
  ctx().synchronize();
}

TEST_P(StreamTest, ContextWaitForOrdersWork) {
  const DeviceContext b = NewStreamContext();
  const HostBuffer<std::uint32_t> src = ctx().enqueue_create_host_buffer<std::uint32_t>(kWords);
  const HostBuffer<std::uint32_t> dst = b.enqueue_create_host_buffer<std::uint32_t>(kWords);
  src.enqueue_fill(0xB0BAFE77u);
  b.enqueue_wait_for(ctx());
  b.enqueue_copy(dst, static_cast<const std::uint32_t*>(src.unsafe_ptr()));
  b.synchronize();
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(dst.as_span()), 0xB0BAFE77u));
  ctx().synchronize();
}

// A is filled on stream A; b belongs to stream B. The copy runs on B and
// must wait for A's fill: only B is synchronized before the check.
template <Kind K>
void CheckCopyToOtherStream(const DeviceContext& a_ctx, const DeviceContext& b_ctx) {
  const Buffer<K, std::uint32_t> a = Create<K, std::uint32_t>(a_ctx, kWords);
  const Buffer<K, std::uint32_t> b = Create<K, std::uint32_t>(b_ctx, kWords);
  const HostBuffer<std::uint32_t> seen = b_ctx.enqueue_create_host_buffer<std::uint32_t>(kWords);
  a_ctx.synchronize();
  b_ctx.synchronize();
  a.enqueue_fill(0x12345678u);
  a.enqueue_copy_to(b);  // on b's stream
  b.enqueue_copy_to(seen);
  b_ctx.synchronize();
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(seen.as_span()), 0x12345678u));
  a_ctx.synchronize();
}

// The reverse: the destination's stream (A) runs the copy and must wait for
// the source's fill on B.
template <Kind K>
void CheckCopyFromOtherStream(const DeviceContext& a_ctx, const DeviceContext& b_ctx) {
  const Buffer<K, std::uint32_t> a = Create<K, std::uint32_t>(a_ctx, kWords);
  const Buffer<K, std::uint32_t> b = Create<K, std::uint32_t>(b_ctx, kWords);
  const HostBuffer<std::uint32_t> seen = a_ctx.enqueue_create_host_buffer<std::uint32_t>(kWords);
  a_ctx.synchronize();
  b_ctx.synchronize();
  b.enqueue_fill(0x87654321u);
  a.enqueue_copy_from(b);  // on a's stream
  a.enqueue_copy_to(seen);
  a_ctx.synchronize();
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(seen.as_span()), 0x87654321u));
  b_ctx.synchronize();
}

TEST_P(StreamTest, CopyToABufferOfAnotherStreamWaitsForTheSource) {
  const DeviceContext b = NewStreamContext();
  ForEachKind([&]<Kind K>() { CheckCopyToOtherStream<K>(ctx(), b); });
}

TEST_P(StreamTest, CopyFromABufferOfAnotherStreamWaitsForTheSource) {
  const DeviceContext b = NewStreamContext();
  ForEachKind([&]<Kind K>() { CheckCopyFromOtherStream<K>(ctx(), b); });
}

// The same between two separately created contexts of the device.
TEST_P(StreamTest, CrossContextCopiesWaitForTheSource) {
  const DeviceContext b(GetParam().device, api());
  ForEachKind([&]<Kind K>() {
    CheckCopyToOtherStream<K>(ctx(), b);
    CheckCopyFromOtherStream<K>(ctx(), b);
  });
}

// DeviceContext::enqueue_copy on a third stream waits for the source's stream.
TEST_P(StreamTest, ThirdContextCopyWaitsForTheSource) {
  const DeviceContext b = NewStreamContext();
  const DeviceContext c = NewStreamContext();
  const DeviceBuffer<std::uint32_t> src = ctx().enqueue_create_buffer<std::uint32_t>(kWords);
  const HostBuffer<std::uint32_t> dst = b.enqueue_create_host_buffer<std::uint32_t>(kWords);
  ctx().synchronize();
  b.synchronize();
  src.enqueue_fill(0x0DDBA11u);
  c.enqueue_copy(dst, src);
  c.synchronize();
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(dst.as_span()), 0x0DDBA11u));
  ctx().synchronize();
}

ANYDEV_CONFORMANCE_SUITE(StreamTest);

}  // namespace
}  // namespace anydev_conformance
