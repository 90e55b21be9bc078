// SPDX-License-Identifier: Apache-2.0
// anydev-graph-bench: host time per operation of a graph replay beside the
// same operations enqueued one by one, in the same run (docs/performance.md,
// "Graphs"). Prints a Markdown table row per backend.
//
//   enqueue  100 small device-to-device copies (64 bytes each), one
//            enqueue_copy call each
//   replay   the same 100 copies recorded once in a DeviceGraph, one
//            replay() call per round
// Only the calls are timed (the stream is synchronized between rounds,
// outside the clock); the figure is the median over the rounds, divided by
// 100. Backends: the arguments (default cpu), each device 0.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kCopies = 100;
constexpr int kRounds = 300;
constexpr std::size_t kWords = 16;  // 64 bytes

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Body>
double per_op_ns(const anydev::DeviceContext& ctx, Body&& body) {
  std::vector<double> rounds;
  rounds.reserve(kRounds);
  for (int r = 0; r < kRounds + 10; ++r) {  // the first 10 warm up
    const auto start = Clock::now();
    body();
    const auto end = Clock::now();
    ctx.synchronize();
    if (r >= 10) rounds.push_back(std::chrono::duration<double, std::nano>(end - start).count());
  }
  return median(std::move(rounds)) / kCopies;
}

void run(const std::string& api) {
  const anydev::DeviceContext ctx(0, api);
  std::vector<anydev::DeviceBuffer<float>> src, dst;
  for (int i = 0; i < kCopies; ++i) {
    src.push_back(ctx.enqueue_create_buffer<float>(kWords));
    dst.push_back(ctx.enqueue_create_buffer<float>(kWords));
    ctx.enqueue_memset(src.back(), static_cast<float>(i));
  }
  const anydev::DeviceGraph graph(ctx);
  for (int i = 0; i < kCopies; ++i) graph.add_copy(dst[i], src[i]);
  graph.instantiate();
  ctx.synchronize();

  const double enqueue = per_op_ns(ctx, [&] {
    for (int i = 0; i < kCopies; ++i) ctx.enqueue_copy(dst[i], src[i]);
  });
  const double replay = per_op_ns(ctx, [&] { graph.replay(); });
  std::printf("| %s | %s | %.0f | %.0f | %.1fx |\n", api.c_str(),
              graph.native() ? "native" : "replayed", enqueue, replay, enqueue / replay);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> apis;
  for (int i = 1; i < argc; ++i) apis.emplace_back(argv[i]);
  if (apis.empty()) apis.emplace_back("cpu");
  std::printf("| backend | graph | enqueue ns/op | replay ns/op | enqueue / replay |\n");
  std::printf("|---|---|---|---|---|\n");
  try {
    for (const std::string& api : apis) run(api);
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "anydev-graph-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
