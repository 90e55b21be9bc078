// SPDX-License-Identifier: Apache-2.0
// Stream capture (DeviceGraph::begin_capture, StreamCapture): copies and
// fills enqueued on a capturing context are recorded, not run, and the
// graph replays them in stream order to the exact bytes; every other use
// of the capturing stream, and each misuse of begin/end, is a precise
// error that changes nothing.
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::DeviceGraph;
using anydev::HostBuffer;
using anydev::Status;
using anydev::StreamCapture;

class CaptureTest : public DeviceTest {};

constexpr int kReplays = 4;

// fill dst, copy src -> mid, copy mid -> dst, captured for each pair of
// kinds: nothing runs during the capture, every replay gives src's bytes.
TEST_P(CaptureTest, CapturedCopiesAndFillsReplayInStreamOrder) {
  ForEachKind([&]<Kind S>() {
    ForEachKind([&]<Kind D>() {
      const Array<std::uint32_t> before = Pattern<std::uint32_t>(1001, 800);
      const Buffer<S, std::uint32_t> src = CreateWith<S>(ctx(), Pattern<std::uint32_t>(1001, 801));
      const DeviceBuffer<std::uint32_t> mid = ctx().enqueue_create_buffer<std::uint32_t>(1001);
      const Buffer<D, std::uint32_t> dst = CreateWith<D>(ctx(), before);
      const DeviceGraph graph(ctx());
      {
        const StreamCapture capture(ctx(), graph);
        EXPECT_TRUE(ctx().is_capturing());
        ctx().enqueue_memset(dst, 0xDEADBEEFu);
        ctx().enqueue_copy(mid, src);
        dst.enqueue_copy_from(mid);  // on dst's context: the capturing one
      }
      EXPECT_FALSE(ctx().is_capturing());
      EXPECT_EQ(graph.node_count(), 3u);
      EXPECT_TRUE(BytesEqual(Contents(dst), before)) << "the capture ran something";
      for (int r = 0; r < kReplays; ++r) {
        SCOPED_TRACE("replay " + std::to_string(r));
        const Array<std::uint32_t> values = Pattern<std::uint32_t>(1001, 810 + r);
        ctx().enqueue_copy(src, values.cspan());
        graph.replay();
        EXPECT_TRUE(BytesEqual(Contents(dst), values));
      }
    });
  });
}

// A capture into a graph that has nodes starts after them; a second
// capture into the same graph continues after the first.
TEST_P(CaptureTest, CaptureAppendsAfterTheGraphsNodes) {
  const DeviceBuffer<std::uint64_t> x = ctx().enqueue_create_buffer<std::uint64_t>(512);
  const DeviceBuffer<std::uint64_t> y = ctx().enqueue_create_buffer<std::uint64_t>(512);
  const DeviceBuffer<std::uint64_t> z = ctx().enqueue_create_buffer<std::uint64_t>(512);
  const DeviceGraph graph(ctx());
  graph.add_memset(x, 1u);
  graph.add_memset(y, 5u);
  graph.begin_capture(ctx());
  ctx().enqueue_copy(y, x);  // after both fills
  ctx().end_capture();
  graph.begin_capture(ctx());
  ctx().enqueue_memset(x, 2u);  // after the copy
  ctx().enqueue_copy(z, x);
  ctx().end_capture();
  EXPECT_EQ(graph.node_count(), 5u);
  for (int r = 0; r < kReplays; ++r) {
    ctx().enqueue_memset(y, 0u);
    ctx().enqueue_memset(z, 0u);
    graph.replay();
    EXPECT_TRUE(AllEqual(Contents(y), 1u)) << "replay " << r;
    EXPECT_TRUE(AllEqual(Contents(z), 2u)) << "replay " << r;
  }
}

// Buffers created during a capture exist at once; the graph keeps every
// captured buffer's memory after its handles are gone.
TEST_P(CaptureTest, CapturedBuffersLiveAsLongAsTheGraph) {
  const Array<std::uint32_t> values = Pattern<std::uint32_t>(777, 820);
  std::uint32_t* out = nullptr;
  const DeviceGraph graph(ctx());
  {
    const HostBuffer<std::uint32_t> staging = HostWith(ctx(), values);
    HostBuffer<std::uint32_t> result = ctx().enqueue_create_host_buffer<std::uint32_t>(777);
    out = result.unsafe_ptr();
    const StreamCapture capture(ctx(), graph);
    const DeviceBuffer<std::uint32_t> device = ctx().enqueue_create_buffer<std::uint32_t>(777);
    ctx().enqueue_copy(device, staging);
    ctx().enqueue_copy(result, device);
    ctx().enqueue_memset(result.create_sub_buffer<std::uint32_t>(700, 77), 0x5EEDu);
  }  // capture ended, every handle gone
  for (int r = 0; r < kReplays; ++r) {
    std::fill(out, out + 777, 0u);
    graph.replay();
    ctx().synchronize();
    Array<std::uint32_t> expected = values;
    std::fill(expected.data() + 700, expected.data() + 777, 0x5EEDu);
    EXPECT_TRUE(BytesEqual(std::span<const std::uint32_t>(out, 777), expected.cspan()))
        << "replay " << r;
  }
}

// The capture holds its graph: the caller's handle may go first, and
// ending the capture then frees the graph and what it captured.
TEST_P(CaptureTest, GraphReleasedDuringCaptureLivesUntilItsEnd) {
  const DeviceBuffer<std::uint32_t> buffer = ctx().enqueue_create_buffer<std::uint32_t>(64);
  ctx().enqueue_memset(buffer, 4u);
  {
    const DeviceGraph graph(ctx());
    graph.begin_capture(ctx());
  }                                  // the only handle gone
  ctx().enqueue_memset(buffer, 5u);  // recorded into the graph
  EXPECT_TRUE(ctx().is_capturing());
  ctx().end_capture();
  EXPECT_FALSE(ctx().is_capturing());
  EXPECT_TRUE(AllEqual(Contents(buffer), 4u));
}

TEST_P(CaptureTest, BeginAndEndMisuseAreErrors) {
  const DeviceBuffer<std::uint32_t> buffer = ctx().enqueue_create_buffer<std::uint32_t>(64);
  const DeviceGraph graph(ctx());
  const DeviceGraph other(ctx());
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { ctx().end_capture(); },
                    {"anydev_context_end_capture", "not capturing"}));

  graph.begin_capture(ctx());
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { graph.begin_capture(ctx()); },
                    {"anydev_context_begin_capture", "already capturing", "this graph"}));
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { other.begin_capture(ctx()); },
                    {"anydev_context_begin_capture", "already capturing", "another graph"}));
  const DeviceContext elsewhere = ctx().with_stream(ctx().create_stream());
  EXPECT_TRUE(
      Fails(Status::invalid_state, [&] { graph.begin_capture(elsewhere); },
            {"anydev_context_begin_capture", "another stream", "capturing into the graph"}));
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { elsewhere.end_capture(); },
                    {"anydev_context_end_capture", "not capturing"}));
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { graph.instantiate(); },
                    {"anydev_graph_instantiate", "capturing into the graph"}));
  EXPECT_TRUE(ctx().is_capturing());
  EXPECT_FALSE(elsewhere.is_capturing());
  // A context sharing the stream captures too, and may end the capture.
  const DeviceContext same = ctx().with_stream(ctx().stream());
  EXPECT_TRUE(same.is_capturing());
  same.enqueue_memset(buffer, 9u);
  same.end_capture();
  EXPECT_FALSE(ctx().is_capturing());
  EXPECT_EQ(graph.node_count(), 1u);

  graph.instantiate();
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { graph.begin_capture(ctx()); },
                    {"anydev_context_begin_capture", "already instantiated"}));
  EXPECT_FALSE(ctx().is_capturing());
  if (const std::optional<DeviceContext> foreign = OtherBackendContext(api())) {
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { other.begin_capture(*foreign); },
                      {"anydev_context_begin_capture", "the graph belongs to"}));
    EXPECT_FALSE(foreign->is_capturing());
  }
  graph.replay();
  EXPECT_TRUE(AllEqual(Contents(buffer), 9u));
}

// Each operation that would run on or wait for the capturing stream is
// INVALID_STATE naming it, and neither runs nor is recorded.
TEST_P(CaptureTest, OtherStreamWorkIsRefusedDuringCapture) {
  const Array<std::uint32_t> values = Pattern<std::uint32_t>(64, 830);
  const DeviceBuffer<std::uint32_t> buffer = DeviceWith(ctx(), values);
  HostBuffer<std::uint32_t> host = HostWith(ctx(), values);
  Array<std::uint32_t> plain = Filled<std::uint32_t>(64, 0);
  const DeviceContext elsewhere = ctx().with_stream(ctx().create_stream());
  const anydev::DeviceEvent event = ctx().create_event();
  const DeviceGraph finished(ctx());
  finished.add_memset(buffer, 1u);
  finished.instantiate();
  const DeviceGraph graph(ctx());
  const StreamCapture capture(ctx(), graph);

  const auto refused = [](auto&& f, const char* op) {
    return Fails(Status::invalid_state, f, {op, "capturing"});
  };
  EXPECT_TRUE(refused([&] { ctx().synchronize(); }, "anydev_context_synchronize"));
  EXPECT_TRUE(refused([&] { ctx().stream().synchronize(); }, "anydev_stream_synchronize"));
  EXPECT_TRUE(refused([&] { ctx().stream().record_event(event); }, "anydev_stream_record_event"));
  EXPECT_TRUE(refused([&] { ctx().stream().enqueue_wait_for(event); }, "anydev_stream_wait_event"));
  EXPECT_TRUE(refused([&] { ctx().enqueue_wait_for(elsewhere); }, "anydev_context_wait_for"));
  EXPECT_TRUE(refused([&] { elsewhere.enqueue_wait_for(ctx()); }, "anydev_context_wait_for"));
  EXPECT_TRUE(
      refused([&] { ctx().enqueue_copy(buffer, plain.cspan()); }, "anydev_enqueue_copy_from_host"));
  EXPECT_TRUE(
      refused([&] { ctx().enqueue_copy(plain.span(), buffer); }, "anydev_enqueue_copy_to_host"));
  EXPECT_TRUE(refused([&] { finished.replay(ctx()); }, "anydev_graph_replay"));
  EXPECT_TRUE(refused(
      [&] {
        std::ostringstream text;
        text << buffer;
      },
      "anydev_buffer_format"));
  EXPECT_EQ(graph.node_count(), 0u);

  // Another thread may not enqueue on the capturing stream, nor end it.
  std::thread([&] {
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { ctx().enqueue_memset(buffer, 2u); },
                      {"anydev_enqueue_fill", "another thread"}));
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { ctx().end_capture(); },
                      {"anydev_context_end_capture", "another thread"}));
  }).join();
  EXPECT_EQ(graph.node_count(), 0u);
  EXPECT_TRUE(ctx().is_capturing());

  // Other streams are not affected; a bad captured copy is the graph's error.
  elsewhere.enqueue_memset(host, 3u);
  elsewhere.synchronize();
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(host.unsafe_ptr(), 64), 3u));
  const DeviceBuffer<std::uint32_t> small = elsewhere.enqueue_create_buffer<std::uint32_t>(16);
  EXPECT_TRUE(Fails(Status::out_of_range, [&] { ctx().enqueue_copy(buffer, small); },
                    {"anydev_enqueue_copy"}));
  EXPECT_EQ(graph.node_count(), 0u);
  ctx().end_capture();
  EXPECT_TRUE(BytesEqual(Contents(buffer), values)) << "a refused call ran";
}

ANYDEV_CONFORMANCE_SUITE(CaptureTest);

}  // namespace
}  // namespace anydev_conformance
