// SPDX-License-Identifier: Apache-2.0
// opencl native graphs (cl_khr_command_buffer, docs/graphs.md) through the
// plugin's table: a graph of device fills, device-to-device copies and a
// join is one command buffer, replayed with exact bytes and in dependency
// order on two streams; fills at offsets off their pattern's alignment are
// native too; a graph with a host side is declined (the core
// replays those). Where the device lacks the extension (0.9.0 to 0.9.4 with
// simultaneous use) the native case skips and says so.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "plugin_fixture.h"

namespace {

using anydev_test::device_ref;
using anydev_test::last_error;

constexpr std::size_t kBytes = 4096;

anydev_bk_graph_node_t fill_node(void* buffer, std::uint32_t word) {
  anydev_bk_graph_node_t n = {};
  n.kind = ANYDEV_BK_GRAPH_FILL;
  n.dst = device_ref(buffer);
  n.bytes = kBytes;
  std::memcpy(n.pattern, &word, 4);
  n.pattern_size = 4;
  return n;
}

anydev_bk_graph_node_t copy_node(anydev_bk_memory_ref_t dst, anydev_bk_memory_ref_t src) {
  anydev_bk_graph_node_t n = {};
  n.kind = ANYDEV_BK_GRAPH_COPY;
  n.dst = dst;
  n.src = src;
  n.bytes = kBytes;
  return n;
}

class OpenclGraph : public ::testing::Test {
 protected:
  void TearDown() override {
    if (table_ == nullptr) return;
    for (void* b : device_) table_->memory_free(table_->instance, 0, ANYDEV_BK_MEMORY_DEVICE, b);
    for (void* h : host_) table_->memory_free(table_->instance, 0, ANYDEV_BK_MEMORY_HOST, h);
  }
  void* device_buffer() {
    void* handle = nullptr;
    void* address = nullptr;
    EXPECT_EQ(table_->device_alloc(table_->instance, 0, kBytes, nullptr, &handle, &address),
              ANYDEV_SUCCESS)
        << last_error();
    device_.push_back(handle);
    return handle;
  }
  // A pinned host buffer: its handle, and its mapped address in *address.
  void* host_buffer(void** address) {
    void* handle = nullptr;
    EXPECT_EQ(table_->host_alloc(table_->instance, 0, kBytes, &handle, address), ANYDEV_SUCCESS)
        << last_error();
    host_.push_back(handle);
    return handle;
  }
  // The words of device buffer `buffer`, read on `stream`.
  std::vector<std::uint32_t> words_of(anydev_bk_stream_t stream, void* buffer) {
    std::vector<std::uint32_t> out(kBytes / 4);
    anydev_bk_memory_ref_t dst = {out.data(), 0, ANYDEV_BK_MEMORY_USER_HOST, -1};
    EXPECT_EQ(table_->copy(table_->instance, stream, dst, device_ref(buffer), kBytes),
              ANYDEV_SUCCESS)
        << last_error();
    EXPECT_EQ(table_->stream_synchronize(table_->instance, stream), ANYDEV_SUCCESS) << last_error();
    return out;
  }
  const anydev_backend_table_t* table_ = nullptr;
  std::vector<void*> device_;
  std::vector<void*> host_;
};

// fill a; copy a to b after it; a join after the copy; fill a again after
// the join: b holds the first word and a the second after every replay.
TEST_F(OpenclGraph, DeviceFillsAndCopiesAreOneCommandBufferReplayedInOrder) {
  ANYDEV_REQUIRE_OPENCL(plugin);
  table_ = plugin.table;
  ASSERT_NE(table_->graph_create, nullptr);
  void* a = device_buffer();
  void* b = device_buffer();
  const std::size_t after_fill[] = {0};
  const std::size_t after_copy[] = {1};
  const std::size_t after_join[] = {2};
  std::vector<anydev_bk_graph_node_t> nodes = {fill_node(a, 0xA5A5F00Du),
                                               copy_node(device_ref(b), device_ref(a)),
                                               anydev_bk_graph_node_t{}, fill_node(a, 0x12345678u)};
  nodes[1].deps = after_fill;
  nodes[1].dep_count = 1;
  nodes[2].kind = ANYDEV_BK_GRAPH_EMPTY;
  nodes[2].deps = after_copy;
  nodes[2].dep_count = 1;
  nodes[3].deps = after_join;
  nodes[3].dep_count = 1;
  anydev_bk_graph_t graph = nullptr;
  const anydev_status_t made =
      table_->graph_create(table_->instance, 0, nodes.data(), nodes.size(), &graph);
  if (made == ANYDEV_BK_DECLINED) {
    GTEST_SKIP() << "OpenCL device 0 lacks cl_khr_command_buffer 0.9.0-0.9.4 with simultaneous "
                    "use: its graphs are the core's replay";
  }
  ASSERT_EQ(made, ANYDEV_SUCCESS) << last_error();
  anydev_bk_stream_t streams[2] = {};
  for (anydev_bk_stream_t& s : streams) {
    ASSERT_EQ(table_->stream_create(table_->instance, 0, &s), ANYDEV_SUCCESS) << last_error();
  }
  const std::uint32_t zero = 0;
  for (int replay = 0; replay < 4; ++replay) {
    SCOPED_TRACE(replay);
    anydev_bk_stream_t stream = streams[replay % 2];
    // Clear both first, on the same stream: the replay must come after.
    for (void* buffer : {a, b}) {
      ASSERT_EQ(table_->fill(table_->instance, stream, device_ref(buffer), &zero, 4, kBytes),
                ANYDEV_SUCCESS);
    }
    ASSERT_EQ(table_->graph_launch(table_->instance, graph, stream), ANYDEV_SUCCESS)
        << last_error();
    for (std::uint32_t w : words_of(stream, b)) ASSERT_EQ(w, 0xA5A5F00Du);
    for (std::uint32_t w : words_of(stream, a)) ASSERT_EQ(w, 0x12345678u);
  }
  // Launched, then destroyed before the stream ran it: still correct after.
  ASSERT_EQ(table_->fill(table_->instance, streams[0], device_ref(b), &zero, 4, kBytes),
            ANYDEV_SUCCESS);
  ASSERT_EQ(table_->graph_launch(table_->instance, graph, streams[0]), ANYDEV_SUCCESS);
  EXPECT_EQ(table_->graph_destroy(table_->instance, graph), ANYDEV_SUCCESS);
  for (std::uint32_t w : words_of(streams[0], b)) ASSERT_EQ(w, 0xA5A5F00Du);
  for (anydev_bk_stream_t s : streams) {
    EXPECT_EQ(table_->stream_destroy(table_->instance, s), ANYDEV_SUCCESS);
  }
}

// Fills at offsets that are not a multiple of their pattern (a 16-byte
// pattern at byte 40, an 8-byte one at byte 1003) are native too, as their
// aligned pieces joined by a barrier: a copy after both sees every byte,
// and the bytes around them keep what was there.
TEST_F(OpenclGraph, FillsAtUnalignedOffsetsAreNativeAndExact) {
  ANYDEV_REQUIRE_OPENCL(plugin);
  table_ = plugin.table;
  void* a = device_buffer();
  void* b = device_buffer();
  const unsigned char wide[16] = {0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87,
                                  0x98, 0xA9, 0xBA, 0xCB, 0xDC, 0xED, 0xFE, 0x0F};
  struct Fill {
    std::size_t offset, bytes, size;
  };
  const Fill fills[] = {{40, 160, 16}, {1003, 64, 8}};
  std::vector<anydev_bk_graph_node_t> nodes;
  for (const Fill& f : fills) {
    anydev_bk_graph_node_t n = {};
    n.kind = ANYDEV_BK_GRAPH_FILL;
    n.dst = device_ref(a);
    n.dst.offset = f.offset;
    n.bytes = f.bytes;
    std::memcpy(n.pattern, wide, f.size);
    n.pattern_size = f.size;
    nodes.push_back(n);
  }
  const std::size_t after_fills[] = {0, 1};
  nodes.push_back(copy_node(device_ref(b), device_ref(a)));
  nodes.back().deps = after_fills;
  nodes.back().dep_count = 2;
  // Whether the device has native graphs at all: an aligned fill alone.
  anydev_bk_graph_t graph = nullptr;
  const anydev_bk_graph_node_t aligned = fill_node(a, 1u);
  const anydev_status_t native = table_->graph_create(table_->instance, 0, &aligned, 1, &graph);
  if (native == ANYDEV_BK_DECLINED) {
    GTEST_SKIP() << "OpenCL device 0 lacks cl_khr_command_buffer 0.9.0-0.9.4 with simultaneous "
                    "use: its graphs are the core's replay";
  }
  ASSERT_EQ(native, ANYDEV_SUCCESS) << last_error();
  ASSERT_EQ(table_->graph_destroy(table_->instance, graph), ANYDEV_SUCCESS);
  graph = nullptr;
  ASSERT_EQ(table_->graph_create(table_->instance, 0, nodes.data(), nodes.size(), &graph),
            ANYDEV_SUCCESS)
      << last_error();
  anydev_bk_stream_t stream = nullptr;
  ASSERT_EQ(table_->stream_create(table_->instance, 0, &stream), ANYDEV_SUCCESS) << last_error();
  const unsigned char before = 0xC3;
  for (int replay = 0; replay < 2; ++replay) {
    SCOPED_TRACE(replay);
    ASSERT_EQ(table_->fill(table_->instance, stream, device_ref(a), &before, 1, kBytes),
              ANYDEV_SUCCESS);
    ASSERT_EQ(table_->graph_launch(table_->instance, graph, stream), ANYDEV_SUCCESS)
        << last_error();
    const std::vector<std::uint32_t> words = words_of(stream, b);
    std::vector<unsigned char> got(kBytes);
    std::memcpy(got.data(), words.data(), kBytes);
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < kBytes; ++k) {
      unsigned char want = before;
      for (const Fill& f : fills) {
        if (k >= f.offset && k < f.offset + f.bytes) want = wide[(k - f.offset) % f.size];
      }
      if (got[k] != want) ++wrong;
    }
    EXPECT_EQ(wrong, 0u);
  }
  EXPECT_EQ(table_->graph_destroy(table_->instance, graph), ANYDEV_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(table_->instance, stream), ANYDEV_SUCCESS);
}

// Pinned host buffers stay mapped, and a command must not touch a mapped
// buffer: a graph with a host side is the core's.
TEST_F(OpenclGraph, AGraphWithAHostSideIsDeclined) {
  ANYDEV_REQUIRE_OPENCL(plugin);
  table_ = plugin.table;
  void* host = nullptr;
  void* handle = host_buffer(&host);
  void* device = device_buffer();
  const anydev_bk_memory_ref_t host_ref = {handle, 0, ANYDEV_BK_MEMORY_HOST, 0};
  const anydev_bk_graph_node_t cases[] = {copy_node(device_ref(device), host_ref),
                                          copy_node(host_ref, device_ref(device))};
  for (const anydev_bk_graph_node_t& node : cases) {
    anydev_bk_graph_t graph = nullptr;
    EXPECT_EQ(table_->graph_create(table_->instance, 0, &node, 1, &graph), ANYDEV_BK_DECLINED);
    EXPECT_EQ(graph, nullptr);
  }
}

}  // namespace
