// SPDX-License-Identifier: Apache-2.0
// Native graphs of the GPU backends (backends/gpu/gpu_graph.h) on their
// emulators: a graph of many copies and fills replayed R times is R vendor
// graph launches and no other driver call (no memcpy, no memset), with the
// exact bytes; a graph with a node the backend declines is replayed by the
// core, still exact; a wide fill is one kernel node where the fill kernel is
// loaded and the driver takes it. Built once per backend (ANYDEV_TEST_GRAPH_BACKEND:
// "cuda" or "hip"); the emulator's counters are found in the library the
// backend opened (ANYDEV_CUDA_LIBRARY / ANYDEV_HIP_LIBRARY). With the CUDA
// emulator's graph entry points hidden, every graph is declined and still exact.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "anydev/anydev.hpp"

namespace {

constexpr const char* kBackend = ANYDEV_TEST_GRAPH_BACKEND;
const bool kCuda = std::string(kBackend) == "cuda";

// The emulator's call counters, from the library the backend opened.
struct Counts {
  using Reset = void (*)();
  using Text = unsigned long long (*)(char*, std::size_t);
  Counts() {
    const std::string prefix = std::string("anydev_") + kBackend + "_emulator_";
    const char* path = std::getenv(kCuda ? "ANYDEV_CUDA_LIBRARY" : "ANYDEV_HIP_LIBRARY");
    void* library = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
    if (library == nullptr) return;
    reset = reinterpret_cast<Reset>(dlsym(library, (prefix + "reset_call_counts").c_str()));
    text = reinterpret_cast<Text>(dlsym(library, (prefix + "call_counts").c_str()));
  }
  // "cuGraphLaunch=10 ...": every count since the last reset.
  std::string read() const {
    char buffer[4096];
    text(buffer, sizeof buffer);
    return buffer;
  }
  Reset reset = nullptr;
  Text text = nullptr;
};

std::string launch_call() { return kCuda ? "cuGraphLaunch" : "hipGraphLaunch"; }

// The count of `name` in a count text ("cuGraphLaunch=10 cuEventQuery=1").
unsigned long long count_in(const std::string& text, const std::string& name) {
  const std::string key = name + "=";
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    if (at == 0 || text[at - 1] == ' ') return std::stoull(text.substr(at + key.size()));
  }
  return 0;
}

// The copies and memsets in a count text: what a native replay never makes.
// (The core's own bookkeeping, e.g. events of stream-ordered releases, may
// run during a replay and is not counted against it.)
std::vector<std::string> copies_and_memsets(const std::string& text) {
  std::vector<std::string> found;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string entry = text.substr(start, end - start);
    if (entry.find("Memcpy") != std::string::npos || entry.find("Memset") != std::string::npos) {
      found.push_back(entry);
    }
    start = end + 1;
  }
  return found;
}

// The CUDA emulator hides the graph entry points: every graph is declined.
bool native_graphs_available() {
  const char* hidden = std::getenv("ANYDEV_CUDA_EMULATOR_HIDE_SYMBOLS");
  return !kCuda || hidden == nullptr || std::strstr(hidden, "cuGraph") == nullptr;
}

bool setting_is(const char* name, const char* value) {
  const char* set = std::getenv(name);
  return set != nullptr && std::strcmp(set, value) == 0;
}

// Wide fills are kernel nodes unless the emulator refuses modules (no fill
// kernel), the fill kernel is switched off, or (hip) the runtime refuses a
// module's function as a kernel node; then the graph is declined.
bool fill_kernel_available() {
  if (kCuda) {
    return native_graphs_available() && !setting_is("ANYDEV_CUDA_EMULATOR_NO_MODULES", "1") &&
           !setting_is("ANYDEV_CUDA_FILL_KERNEL", "0");
  }
  // Whether the emulated runtime takes a module's function as a kernel node
  // depends on its variant (5.2: no, ROCm 7: yes): CMake says which.
  return !setting_is("ANYDEV_HIP_EMULATOR_NO_MODULES", "1") &&
         !setting_is("ANYDEV_HIP_FILL_KERNEL", "0") &&
         setting_is("ANYDEV_TEST_HIP_MODULE_KERNEL_NODES", "1");
}

class GpuGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = anydev::DeviceContext(0, kBackend);
    counts_ = Counts();
    ASSERT_NE(counts_.reset, nullptr) << "the emulator's call counters were not found";
    ASSERT_NE(counts_.text, nullptr);
  }

  template <class T>
  std::vector<T> contents(const anydev::DeviceBuffer<T>& buffer) {
    std::vector<T> out(buffer.size());
    ctx_.enqueue_copy(std::span<T>(out), buffer);
    ctx_.synchronize();
    return out;
  }

  anydev::DeviceContext ctx_;
  Counts counts_;
};

constexpr std::size_t kWords = 1000;
constexpr int kPairs = 50;  // 100 nodes
constexpr int kReplays = 10;

// Word i of source s.
std::uint32_t word(int s, std::size_t i) {
  return 0x9E3779B9u * (static_cast<std::uint32_t>(s) + 1) ^ static_cast<std::uint32_t>(i);
}

// 50 fills of 1-, 2- and 4-byte patterns, each followed by a copy of another
// buffer over half of it, some through pinned host memory: 100 nodes, one
// cuGraphLaunch / hipGraphLaunch per replay and nothing else.
TEST_F(GpuGraph, ReplayOfAHundredCopiesAndFillsIsOneLaunch) {
  std::vector<anydev::DeviceBuffer<std::uint32_t>> targets;
  std::vector<anydev::DeviceBuffer<std::uint32_t>> sources;
  anydev::HostBuffer<std::uint32_t> pinned =
      ctx_.enqueue_create_host_buffer<std::uint32_t>(kWords / 2);
  ctx_.synchronize();
  for (std::size_t i = 0; i < kWords / 2; ++i) pinned.as_span()[i] = word(99, i);
  const anydev::DeviceGraph graph(ctx_);
  for (int p = 0; p < kPairs; ++p) {
    targets.push_back(ctx_.enqueue_create_buffer<std::uint32_t>(kWords));
    std::vector<std::uint32_t> values(kWords / 2);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = word(p, i);
    sources.push_back(ctx_.enqueue_create_buffer<std::uint32_t>(kWords / 2));
    ctx_.enqueue_copy(sources.back(), std::span<const std::uint32_t>(values));
    ctx_.synchronize();  // the copy reads `values` when it runs
    anydev::GraphNode fill;
    const auto& t = targets.back();
    switch (p % 3) {
      case 0:
        fill = graph.add_memset(t.template create_sub_buffer<std::uint8_t>(0, kWords * 4), 0xA5);
        break;
      case 1:
        fill = graph.add_memset(t.template create_sub_buffer<std::uint16_t>(0, kWords * 2),
                                std::uint16_t{0xB1C2});
        break;
      default:
        fill = graph.add_memset(t, 0xD3E4F506u);
        break;
    }
    const auto half = t.template create_sub_buffer<std::uint32_t>(kWords / 2, kWords / 2);
    if (p % 5 == 0) {
      graph.add_copy(half, pinned, {fill});
    } else {
      graph.add_copy(half, sources.back(), {fill});
    }
  }
  ctx_.synchronize();
  EXPECT_EQ(graph.node_count(), 2u * kPairs);
  EXPECT_EQ(graph.native(), native_graphs_available());

  for (auto& t : targets) ctx_.enqueue_memset(t, 0u);
  ctx_.synchronize();
  counts_.reset();
  for (int r = 0; r < kReplays; ++r) graph.replay();
  const std::string calls = counts_.read();
  if (native_graphs_available()) {
    EXPECT_EQ(count_in(calls, launch_call()), static_cast<unsigned long long>(kReplays)) << calls;
    EXPECT_TRUE(copies_and_memsets(calls).empty()) << calls;
  } else {
    EXPECT_EQ(count_in(calls, launch_call()), 0u) << calls;
  }
  ctx_.synchronize();

  for (int p = 0; p < kPairs; ++p) {
    SCOPED_TRACE("pair " + std::to_string(p));
    const std::vector<std::uint32_t> got = contents(targets[static_cast<std::size_t>(p)]);
    const std::uint32_t filled = p % 3 == 0 ? 0xA5A5A5A5u : p % 3 == 1 ? 0xB1C2B1C2u : 0xD3E4F506u;
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kWords; ++i) {
      const std::uint32_t want =
          i < kWords / 2 ? filled : word(p % 5 == 0 ? 99 : p, i - kWords / 2);
      if (got[i] != want) ++wrong;
    }
    EXPECT_EQ(wrong, 0u);
  }
}

// A fill of pinned host memory is no memset node: the backend declines the
// graph, the core replays it with its copies and fills, and the bytes are exact.
TEST_F(GpuGraph, DeclinedGraphIsReplayedByTheCoreExactly) {
  anydev::HostBuffer<std::uint32_t> host = ctx_.enqueue_create_host_buffer<std::uint32_t>(kWords);
  const anydev::DeviceBuffer<std::uint32_t> device =
      ctx_.enqueue_create_buffer<std::uint32_t>(kWords);
  const anydev::DeviceGraph graph(ctx_);
  const anydev::GraphNode fill = graph.add_memset(host, 0x600DF00Du);
  graph.add_copy(device, host, {fill});
  EXPECT_FALSE(graph.native());
  for (int r = 0; r < 3; ++r) {
    ctx_.enqueue_memset(device, 0u);
    ctx_.synchronize();
    counts_.reset();
    graph.replay();
    const std::string calls = counts_.read();
    EXPECT_EQ(count_in(calls, launch_call()), 0u) << calls;
    EXPECT_FALSE(copies_and_memsets(calls).empty()) << calls;
    const std::vector<std::uint32_t> got = contents(device);
    EXPECT_EQ(std::count(got.begin(), got.end(), 0x600DF00Du), static_cast<long>(kWords));
  }
}

// An 8- or 16-byte pattern in device memory: a kernel node of anydev's fill
// kernel where the backend has it loaded and the driver takes it in a graph,
// else declined; exact either way.
TEST_F(GpuGraph, WideFillIsAKernelNodeWhereTheFillKernelIsLoaded) {
  const anydev::DeviceBuffer<std::uint64_t> wide = ctx_.enqueue_create_buffer<std::uint64_t>(777);
  const anydev::DeviceGraph graph(ctx_);
  graph.add_memset(wide, 0x0123456789ABCDEFull);
  EXPECT_EQ(graph.native(), fill_kernel_available());
  for (int r = 0; r < 2; ++r) {
    ctx_.enqueue_memset(wide, std::uint64_t{0});
    ctx_.synchronize();
    counts_.reset();
    graph.replay();
    const std::string calls = counts_.read();
    EXPECT_EQ(count_in(calls, launch_call()), fill_kernel_available() ? 1u : 0u) << calls;
    const std::vector<std::uint64_t> got = contents(wide);
    EXPECT_EQ(std::count(got.begin(), got.end(), 0x0123456789ABCDEFull), 777);
  }
}

// 16-byte fills at odd element offsets and lengths beside 1-, 2- and 4-byte
// memsets and copies in one graph: one graph launch per replay where the
// kernel node is taken, and every byte exact, the bytes around each fill kept.
TEST_F(GpuGraph, WideFillsAtOffsetsMixWithMemsetsAndCopies) {
  using Pair = std::complex<double>;
  // Its bits, low word first.
  const auto bits = [](const Pair& p) {
    return std::pair(std::bit_cast<std::uint64_t>(p.real()),
                     std::bit_cast<std::uint64_t>(p.imag()));
  };
  const auto pair_of = [](std::uint64_t lo, std::uint64_t hi) {
    return Pair(std::bit_cast<double>(lo), std::bit_cast<double>(hi));
  };
  constexpr std::size_t kElems = 301;
  const anydev::DeviceBuffer<Pair> wide = ctx_.enqueue_create_buffer<Pair>(kElems);
  const anydev::DeviceBuffer<std::uint8_t> narrow = ctx_.enqueue_create_buffer<std::uint8_t>(4096);
  const anydev::DeviceBuffer<std::uint8_t> copy = ctx_.enqueue_create_buffer<std::uint8_t>(4096);
  const Pair first = pair_of(0x1122334455667788ull, 0x99AABBCCDDEEFF00ull);
  const Pair second = pair_of(~0x1122334455667788ull, ~0x99AABBCCDDEEFF00ull);
  const anydev::DeviceGraph graph(ctx_);
  const anydev::GraphNode a = graph.add_memset(wide.create_sub_buffer<Pair>(3, 150), first);
  const anydev::GraphNode b = graph.add_memset(narrow, std::uint8_t{0x5A}, {a});
  const anydev::GraphNode c = graph.add_memset(wide.create_sub_buffer<Pair>(160, 141), second, {b});
  graph.add_copy(copy, narrow, {c});
  EXPECT_EQ(graph.native(), fill_kernel_available());
  for (int r = 0; r < 2; ++r) {
    ctx_.enqueue_memset(wide.create_sub_buffer<std::uint8_t>(0, kElems * sizeof(Pair)),
                        std::uint8_t{0xEE});
    ctx_.enqueue_memset(copy, std::uint8_t{0});
    ctx_.synchronize();
    counts_.reset();
    graph.replay();
    const std::string calls = counts_.read();
    EXPECT_EQ(count_in(calls, launch_call()), fill_kernel_available() ? 1u : 0u) << calls;
    if (fill_kernel_available()) {
      EXPECT_TRUE(copies_and_memsets(calls).empty()) << calls;
    }
    const std::vector<Pair> got = contents(wide);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kElems; ++i) {
      Pair want = pair_of(0xEEEEEEEEEEEEEEEEull, 0xEEEEEEEEEEEEEEEEull);
      if (i >= 3 && i < 153) want = first;
      if (i >= 160) want = second;
      if (bits(got[i]) != bits(want)) ++wrong;
    }
    EXPECT_EQ(wrong, 0u);
    const std::vector<std::uint8_t> bytes = contents(copy);
    EXPECT_EQ(std::count(bytes.begin(), bytes.end(), std::uint8_t{0x5A}), 4096);
  }
}

}  // namespace
