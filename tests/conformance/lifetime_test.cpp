// SPDX-License-Identifier: Apache-2.0
// Stream-ordered release: dropping handles while work that uses the memory is
// still queued never loses or corrupts data. Each test drops handles right
// after enqueueing, then allocates and overwrites fresh buffers of the same
// size, so memory released too early would be reused and the check fail.
#include <cstdint>
#include <vector>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceBuffer;
using anydev::HostBuffer;

class LifetimeTest : public DeviceTest {
 protected:
  // Allocates and fills `count` buffers of `bytes` with 0xEE, then drops them.
  template <Kind K>
  void ChurnMemory(std::size_t bytes, int count) {
    for (int i = 0; i < count; ++i) {
      const Buffer<K, std::uint8_t> scratch = Create<K, std::uint8_t>(ctx(), bytes);
      scratch.enqueue_fill(std::uint8_t{0xEE});
    }
  }
};

constexpr std::size_t kBytes = 1u << 20;  // 1 MiB per buffer

TEST_P(LifetimeTest, DroppingEveryHandleWhileCopiesAreQueued) {
  constexpr int kChains = 4;
  constexpr int kHops = 4;
  std::vector<Array<std::uint8_t>> expected;
  std::vector<HostBuffer<std::uint8_t>> results;
  for (int c = 0; c < kChains; ++c) {
    expected.push_back(Pattern<std::uint8_t>(kBytes, 400 + c));
    results.push_back(ctx().enqueue_create_host_buffer<std::uint8_t>(kBytes));
  }
  for (int c = 0; c < kChains; ++c) {
    // host -> device -> ... -> device -> host; every intermediate handle is
    // dropped as soon as its copies are enqueued.
    HostBuffer<std::uint8_t> source = HostWith(ctx(), expected[c]);
    DeviceBuffer<std::uint8_t> previous = ctx().enqueue_create_buffer<std::uint8_t>(kBytes);
    source.enqueue_copy_to(previous);
    source = HostBuffer<std::uint8_t>();
    for (int hop = 1; hop < kHops; ++hop) {
      DeviceBuffer<std::uint8_t> next = ctx().enqueue_create_buffer<std::uint8_t>(kBytes);
      previous.enqueue_copy_to(next);
      previous = std::move(next);
    }
    previous.enqueue_copy_to(results[c]);
  }
  ChurnMemory<Kind::device>(kBytes, 4);
  ChurnMemory<Kind::host>(kBytes, 4);
  ctx().synchronize();
  for (int c = 0; c < kChains; ++c) {
    SCOPED_TRACE("chain " + std::to_string(c));
    EXPECT_TRUE(
        BytesEqual(std::span<const std::uint8_t>(results[c].as_span()), expected[c].cspan()));
  }
}

TEST_P(LifetimeTest, DroppingTheSourceHostBufferRightAfterEnqueueCopyTo) {
  const Array<std::uint8_t> values = Pattern<std::uint8_t>(kBytes, 411);
  const DeviceBuffer<std::uint8_t> device = ctx().enqueue_create_buffer<std::uint8_t>(kBytes);
  {
    const HostBuffer<std::uint8_t> source = HostWith(ctx(), values);
    source.enqueue_copy_to(device);
  }
  ChurnMemory<Kind::host>(kBytes, 4);
  EXPECT_TRUE(BytesEqual(Contents(device), values));
}

TEST_P(LifetimeTest, DroppingADeviceBufferAfterQueuingACopyOutOfIt) {
  const Array<std::uint8_t> values = Pattern<std::uint8_t>(kBytes, 421);
  const HostBuffer<std::uint8_t> result = ctx().enqueue_create_host_buffer<std::uint8_t>(kBytes);
  {
    const DeviceBuffer<std::uint8_t> device = ctx().enqueue_create_buffer<std::uint8_t>(kBytes);
    device.enqueue_copy_from(values.cspan());
    device.enqueue_copy_to(result);
  }
  ChurnMemory<Kind::device>(kBytes, 4);
  ctx().synchronize();
  EXPECT_TRUE(BytesEqual(std::span<const std::uint8_t>(result.as_span()), values.cspan()));
}

TEST_P(LifetimeTest, DroppingAViewAndItsParentAfterQueuingACopy) {
  const Array<std::uint8_t> values = Pattern<std::uint8_t>(kBytes, 431);
  const HostBuffer<std::uint32_t> result = ctx().enqueue_create_host_buffer<std::uint32_t>(1000);
  {
    const DeviceBuffer<std::uint8_t> parent = DeviceWith(ctx(), values);
    const DeviceBuffer<std::uint32_t> view = parent.create_sub_buffer<std::uint32_t>(100, 1000);
    view.enqueue_copy_to(result);
  }
  ChurnMemory<Kind::device>(kBytes, 4);
  ctx().synchronize();
  Array<std::uint32_t> expected(1000);
  std::memcpy(expected.data(), values.data() + 400, 4000);
  EXPECT_TRUE(BytesEqual(std::span<const std::uint32_t>(result.as_span()), expected.cspan()));
}

// A buffer outlives the context and stream it was made on: its operations and
// its release still run there.
TEST_P(LifetimeTest, BufferOutlivesItsContextAndStream) {
  const Array<std::uint64_t> values = Pattern<std::uint64_t>(1 << 16, 441);
  DeviceBuffer<std::uint64_t> device;
  HostBuffer<std::uint64_t> host;
  {
    const anydev::DeviceContext own = ctx().with_stream(ctx().create_stream());
    device = own.enqueue_create_buffer<std::uint64_t>(values.size());
    host = own.enqueue_create_host_buffer<std::uint64_t>(values.size());
    device.enqueue_copy_from(values.cspan());
    own.synchronize();
  }
  device.enqueue_copy_to(host);
  device.context().synchronize();
  EXPECT_TRUE(BytesEqual(std::span<const std::uint64_t>(host.as_span()), values.cspan()));
  device = DeviceBuffer<std::uint64_t>();  // the last handle to the stream's context goes here
  host = HostBuffer<std::uint64_t>();
  ctx().synchronize();
}

TEST_P(LifetimeTest, ManyShortLivedBuffers) {
  const HostBuffer<std::uint32_t> sum = ctx().enqueue_create_host_buffer<std::uint32_t>(4096);
  for (std::uint32_t i = 0; i < 200; ++i) {
    const DeviceBuffer<std::uint32_t> d = ctx().enqueue_create_buffer<std::uint32_t>(4096);
    d.enqueue_fill(i);
    d.enqueue_copy_to(sum);
  }
  ctx().synchronize();
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(sum.as_span()), 199u));
}

ANYDEV_CONFORMANCE_SUITE(LifetimeTest);

}  // namespace
}  // namespace anydev_conformance
