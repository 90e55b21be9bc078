// SPDX-License-Identifier: Apache-2.0
// Graphs (DeviceGraph): copies, fills and empty nodes recorded once and
// replayed. Each replay writes the exact bytes, re-reads its sources (they
// change between replays), follows the dependencies, keeps its buffers
// alive after their handles are gone, rejects bad input at add time with
// the operation and the values named, and may run on two streams from two
// threads at once.
#include <algorithm>
#include <array>
#include <bit>
#include <complex>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::DeviceGraph;
using anydev::GraphNode;
using anydev::HostBuffer;
using anydev::Status;

class GraphTest : public DeviceTest {};

constexpr int kReplays = 4;

// Overwrites `buffer` with `values` and waits.
template <Kind K, class T>
void Rewrite(const DeviceContext& ctx, const Buffer<K, T>& buffer, const Array<T>& values) {
  ctx.enqueue_copy(buffer, values.cspan());
  ctx.synchronize();
}

// src -> dst for each pair of kinds, through a graph replayed several
// times, the source changed before each replay.
TEST_P(GraphTest, CopyRereadsItsSourceOnEveryReplay) {
  ForEachKind([&]<Kind S>() {
    ForEachKind([&]<Kind D>() {
      const Buffer<S, std::uint32_t> src = Create<S, std::uint32_t>(ctx(), 1001);
      const Buffer<D, std::uint32_t> dst = Create<D, std::uint32_t>(ctx(), 1001);
      const DeviceGraph graph(ctx());
      graph.add_copy(dst, src);
      for (int r = 0; r < kReplays; ++r) {
        SCOPED_TRACE("replay " + std::to_string(r));
        const Array<std::uint32_t> values = Pattern<std::uint32_t>(1001, 700 + r);
        Rewrite<S>(ctx(), src, values);
        graph.replay();
        EXPECT_TRUE(BytesEqual(Contents(dst), values));
      }
    });
  });
}

// Ranges: sub-buffers of one allocation as source and destination, a fill
// of a range, and the bytes around them untouched.
TEST_P(GraphTest, SubBufferRangesAndNeighboursUntouched) {
  ForEachKind([&]<Kind K>() {
    const Array<std::uint8_t> initial = Pattern<std::uint8_t>(256, 710);
    const Buffer<K, std::uint8_t> whole = CreateWith<K>(ctx(), initial);
    const auto src = whole.template create_sub_buffer<std::uint8_t>(8, 40);
    const auto dst = whole.template create_sub_buffer<std::uint8_t>(100, 40);
    const auto filled = whole.template create_sub_buffer<std::uint32_t>(50, 10);  // bytes 200..240
    const DeviceGraph graph(ctx());
    const GraphNode copy = graph.add_copy(dst, src);
    graph.add_memset(filled, 0xA1B2C3D4u, {copy});
    for (int r = 0; r < kReplays; ++r) {
      SCOPED_TRACE("replay " + std::to_string(r));
      const Array<std::uint8_t> fresh = Pattern<std::uint8_t>(40, 720 + r);
      Rewrite<K>(ctx(), src, fresh);
      graph.replay();
      Array<std::uint8_t> expected = initial;
      std::copy(fresh.data(), fresh.data() + 40, expected.data() + 8);
      std::copy(fresh.data(), fresh.data() + 40, expected.data() + 100);
      for (std::size_t i = 200; i < 240; i += 4) {
        const std::uint32_t word = 0xA1B2C3D4u;
        std::memcpy(expected.data() + i, &word, 4);
      }
      EXPECT_TRUE(BytesEqual(Contents(whole), expected));
    }
  });
}

template <Kind K, class T>
void CheckFillWidth(const DeviceContext& ctx, T value) {
  SCOPED_TRACE(std::to_string(sizeof(T)) + "-byte pattern [" + HexBytes(value) + "]");
  const Buffer<K, T> buffer = CreateWith<K>(ctx, Pattern<T>(333, 730));
  const DeviceGraph graph(ctx);
  graph.add_memset(buffer, value);
  for (int r = 0; r < kReplays; ++r) {
    Rewrite<K>(ctx, buffer, Pattern<T>(333, 731 + r));  // scribbled over between replays
    graph.replay();
    EXPECT_TRUE(AllEqual(Contents(buffer), value)) << "replay " << r;
  }
}

TEST_P(GraphTest, FillPatternsOfEveryWidth) {
  ForEachKind([&]<Kind K>() {
    CheckFillWidth<K, std::uint8_t>(ctx(), 0xA5);
    CheckFillWidth<K, std::uint16_t>(ctx(), 0xABCD);
    CheckFillWidth<K, std::uint32_t>(ctx(), 0x01234567u);
    CheckFillWidth<K, std::uint64_t>(ctx(), 0x0123456789ABCDEFull);
    CheckFillWidth<K, std::complex<double>>(ctx(), {std::bit_cast<double>(0x0123456789ABCDEFull),
                                                    std::bit_cast<double>(0xFEDCBA9876543210ull)});
  });
}

// fill x=1 -> copy x->y -> fill x=2 -> copy x->z, joined by an empty node,
// then a copy after the join: each step sees the one before it.
TEST_P(GraphTest, DependenciesOrderTheNodes) {
  ForEachKind([&]<Kind K>() {
    const Buffer<K, std::uint32_t> x = Create<K, std::uint32_t>(ctx(), 513);
    const Buffer<K, std::uint32_t> y = Create<K, std::uint32_t>(ctx(), 513);
    const Buffer<K, std::uint32_t> z = Create<K, std::uint32_t>(ctx(), 513);
    const Buffer<K, std::uint32_t> w = Create<K, std::uint32_t>(ctx(), 513);
    const DeviceGraph graph(ctx());
    const GraphNode one = graph.add_memset(x, 1u);
    const GraphNode to_y = graph.add_copy(y, x, {one});
    const GraphNode two = graph.add_memset(x, 2u, {to_y});
    const GraphNode to_z = graph.add_copy(z, x, {two});
    const GraphNode join = graph.add_empty({to_y, to_z});
    graph.add_copy(w, y, {join, join});  // a repeated dependency counts once
    EXPECT_EQ(graph.node_count(), 6u);
    for (int r = 0; r < kReplays; ++r) {
      SCOPED_TRACE("replay " + std::to_string(r));
      ctx().enqueue_memset(y, 0u);
      ctx().enqueue_memset(z, 0u);
      ctx().enqueue_memset(w, 0u);
      graph.replay();
      EXPECT_TRUE(AllEqual(Contents(y), 1u));
      EXPECT_TRUE(AllEqual(Contents(z), 2u));
      EXPECT_TRUE(AllEqual(Contents(w), 1u));
      EXPECT_TRUE(AllEqual(Contents(x), 2u));
    }
  });
}

// A replay is stream-ordered: it sees the enqueues before it, and the ones
// after it see its results, without a synchronize between them.
TEST_P(GraphTest, ReplayIsOrderedWithTheStream) {
  const DeviceBuffer<std::uint64_t> a = ctx().enqueue_create_buffer<std::uint64_t>(4096);
  const DeviceBuffer<std::uint64_t> b = ctx().enqueue_create_buffer<std::uint64_t>(4096);
  const DeviceGraph graph(ctx());
  graph.add_copy(b, a);
  for (std::uint64_t v = 1; v <= 5; ++v) {
    ctx().enqueue_memset(a, v);
    graph.replay();
    ctx().enqueue_copy(a, b);  // reads what the replay wrote
  }
  EXPECT_TRUE(AllEqual(Contents(a), 5u));
  EXPECT_TRUE(AllEqual(Contents(b), 5u));
}

// The graph keeps its buffers' memory: with every buffer handle released,
// a replay still writes the host buffer the graph names.
TEST_P(GraphTest, BuffersLiveAsLongAsTheGraph) {
  std::uint32_t* out = nullptr;
  DeviceGraph graph(ctx());
  const Array<std::uint32_t> values = Pattern<std::uint32_t>(777, 740);
  {
    const HostBuffer<std::uint32_t> staging = HostWith(ctx(), values);
    const DeviceBuffer<std::uint32_t> device = ctx().enqueue_create_buffer<std::uint32_t>(777);
    HostBuffer<std::uint32_t> result = ctx().enqueue_create_host_buffer<std::uint32_t>(777);
    const auto tail = result.create_sub_buffer<std::uint32_t>(700, 77);
    const GraphNode up = graph.add_copy(device, staging);
    const GraphNode down = graph.add_copy(result, device, {up});
    graph.add_memset(tail, 0x5EEDu, {down});
    out = result.unsafe_ptr();
  }  // every handle gone; only the graph holds the memory
  // New buffers of the same sizes, scribbled over: had the graph not kept
  // its memory, the pools would hand it out again here.
  std::vector<HostBuffer<std::uint32_t>> host_scribbles;
  std::vector<DeviceBuffer<std::uint32_t>> device_scribbles;
  for (int i = 0; i < 4; ++i) {
    host_scribbles.push_back(ctx().enqueue_create_host_buffer<std::uint32_t>(777));
    device_scribbles.push_back(ctx().enqueue_create_buffer<std::uint32_t>(777));
    ctx().enqueue_memset(host_scribbles.back(), 0xFFFFFFFFu);
    ctx().enqueue_memset(device_scribbles.back(), 0xFFFFFFFFu);
  }
  for (int r = 0; r < kReplays; ++r) {
    std::fill(out, out + 777, 0u);
    graph.replay();
    ctx().synchronize();
    Array<std::uint32_t> expected = values;
    std::fill(expected.data() + 700, expected.data() + 777, 0x5EEDu);
    EXPECT_TRUE(BytesEqual(std::span<const std::uint32_t>(out, 777), expected.cspan()))
        << "replay " << r;
  }
  // A copy of the graph keeps it too.
  const DeviceGraph copy = graph;
  graph = DeviceGraph();
  copy.replay();
  ctx().synchronize();
  EXPECT_EQ(out[0], values[0]);
}

TEST_P(GraphTest, BadInputIsRejectedAndAddsNothing) {
  const DeviceBuffer<std::uint32_t> big = ctx().enqueue_create_buffer<std::uint32_t>(64);
  const DeviceBuffer<std::uint32_t> small = ctx().enqueue_create_buffer<std::uint32_t>(16);
  const DeviceGraph graph(ctx());
  const GraphNode first = graph.add_memset(big, 7u);

  EXPECT_TRUE(Fails(Status::out_of_range, [&] { graph.add_copy(big, small); },
                    {"anydev_graph_add_copy", "256", "64"}));
  const auto low = big.create_sub_buffer<std::uint32_t>(0, 32);
  const auto high = big.create_sub_buffer<std::uint32_t>(16, 32);
  EXPECT_TRUE(Fails(Status::invalid_argument, [&] { graph.add_copy(high, low); },
                    {"anydev_graph_add_copy", "overlap", "0..128", "64..192"}));
  const auto odd = big.create_sub_buffer<std::uint8_t>(2, 8);
  EXPECT_TRUE(Fails(Status::invalid_argument,
                    [&] {
                      anydev::detail::check(anydev_graph_add_fill(
                          graph.handle(), odd.handle(), "\1\2\3\4", 4, nullptr, 0, nullptr));
                    },
                    {"anydev_graph_add_fill", "byte 2", "4-byte"}));
  EXPECT_TRUE(Fails(Status::invalid_argument,
                    [&] {
                      anydev::detail::check(anydev_graph_add_fill(
                          graph.handle(), big.handle(), "\1\2\3", 3, nullptr, 0, nullptr));
                    },
                    {"anydev_graph_add_fill", "pattern size 3"}));

  // Dependencies: another graph's node, a node not yet added, NULL.
  const DeviceGraph other(ctx());
  const GraphNode foreign = other.add_empty();
  EXPECT_TRUE(Fails(Status::invalid_argument, [&] { graph.add_empty({foreign}); },
                    {"anydev_graph_add_empty", "dependency 0", "not a node of this graph"}));
  const GraphNode later{first.id + 5};
  EXPECT_TRUE(Fails(Status::invalid_argument, [&] { graph.add_empty({later}); },
                    {"dependency 0", "it has 1 nodes"}));
  EXPECT_EQ(anydev_graph_add_empty(graph.handle(), nullptr, 2, nullptr),
            ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(anydev_last_error_message()).find("deps is NULL but dep_count is 2"),
            std::string::npos);
  EXPECT_EQ(graph.node_count(), 1u);  // nothing rejected was added

  // A buffer of another backend.
  if (const auto foreign_ctx = OtherBackendContext(api())) {
    const DeviceBuffer<std::uint32_t> there = foreign_ctx->enqueue_create_buffer<std::uint32_t>(64);
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { graph.add_copy(big, there); },
                      {"anydev_graph_add_copy", "source buffer is on", "not on the graph's"}));
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { graph.replay(*foreign_ctx); },
                      {"anydev_graph_replay", "the graph belongs to"}));
  }
  EXPECT_EQ(graph.node_count(), 1u);

  // Building ends at the first replay.
  graph.replay();
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { graph.add_empty(); },
                    {"anydev_graph_add_empty", "already instantiated"}));
  EXPECT_TRUE(AllEqual(Contents(big), 7u));

  // An empty graph object.
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { DeviceGraph().replay(); }, {"DeviceGraph"}));
}

TEST_P(GraphTest, BufferInAGraphCannotBeTaken) {
  DeviceBuffer<std::uint32_t> buffer = ctx().enqueue_create_buffer<std::uint32_t>(16);
  {
    const DeviceGraph graph(ctx());
    graph.add_memset(buffer, 3u);
    EXPECT_TRUE(
        Fails(Status::invalid_state, [&] { static_cast<void>(std::move(buffer).take_ptr()); }));
  }
  std::uint32_t* taken = std::move(buffer).take_ptr();  // the graph is gone: now it may
  ctx().free(taken);
}

// Two threads replay one graph on two streams, and each its own graph on
// its stream; every result is exact.
TEST_P(GraphTest, ReplaysFromTwoThreadsOnTwoStreams) {
  constexpr std::size_t kCount = 4096;
  const Array<std::uint32_t> values = Pattern<std::uint32_t>(kCount, 750);
  const DeviceBuffer<std::uint32_t> shared_src = DeviceWith(ctx(), values);
  const DeviceBuffer<std::uint32_t> shared_dst = ctx().enqueue_create_buffer<std::uint32_t>(kCount);
  const DeviceGraph shared(ctx());
  shared.add_copy(shared_dst, shared_src);

  std::array<DeviceBuffer<std::uint32_t>, 2> outs;
  std::array<std::thread, 2> threads;
  for (int t = 0; t < 2; ++t) {
    outs[t] = ctx().enqueue_create_buffer<std::uint32_t>(kCount);
  }
  ctx().synchronize();
  for (int t = 0; t < 2; ++t) {
    threads[t] = std::thread([&, t] {
      const DeviceContext mine = ctx().with_stream(ctx().create_stream());
      const DeviceBuffer<std::uint32_t> scratch = mine.enqueue_create_buffer<std::uint32_t>(kCount);
      const DeviceGraph own(mine);
      const GraphNode fill = own.add_memset(scratch, 100u + t);
      own.add_copy(outs[t], scratch, {fill});
      for (int r = 0; r < 50; ++r) {
        shared.replay(mine);
        own.replay();
      }
      mine.synchronize();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_TRUE(BytesEqual(Contents(shared_dst), values));
  EXPECT_TRUE(AllEqual(Contents(outs[0]), 100u));
  EXPECT_TRUE(AllEqual(Contents(outs[1]), 101u));
}

// The cpu backend builds native graphs: a replay is one task on the stream
// (tests/backends/cpu/cpu_graph_test.cpp counts it).
TEST_P(GraphTest, CpuGraphsAreNative) {
  if (api() != "cpu") GTEST_SKIP() << "which backends have native graphs: docs/backends.md";
  const DeviceBuffer<std::uint32_t> buffer = ctx().enqueue_create_buffer<std::uint32_t>(64);
  const DeviceGraph graph(ctx());
  graph.add_memset(buffer, 3u);
  EXPECT_TRUE(graph.native());
  graph.replay();
  EXPECT_TRUE(AllEqual(Contents(buffer), 3u));
}

ANYDEV_CONFORMANCE_SUITE(GraphTest);

}  // namespace
}  // namespace anydev_conformance
