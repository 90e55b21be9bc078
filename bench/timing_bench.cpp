// SPDX-License-Identifier: Apache-2.0
// anydev-timing-bench: what a timing event costs beside a plain one
// (docs/performance.md, "Timed events"). On the backend ANYDEV_BACKEND
// names (default cpu; the emulators through their library variables), one
// context, N rounds of each, median of five passes, in the same run:
//
//   plain    record a plain event on the context's stream + synchronize it
//   timing   the same with a timing event (create_event(timing=true))
//   elapsed  plain's round plus elapsed_time between two timing events
//            recorded back to back (the whole timed round trip)
//
// Prints a Markdown table: nanoseconds per round and the ratio to plain.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <class Round>
double median_ns_per_round(int rounds, Round&& round) {
  std::vector<double> passes;
  for (int pass = 0; pass < 5; ++pass) {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < rounds; ++i) round();
    passes.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
                     rounds);
  }
  std::sort(passes.begin(), passes.end());
  return passes[2];
}

}  // namespace

int main(int argc, char** argv) {
  const char* backend = std::getenv("ANYDEV_BACKEND");
  const std::string api = backend != nullptr && *backend != '\0' ? backend : "cpu";
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20000;
  try {
    const anydev::DeviceContext ctx(0, api);
    const anydev::DeviceStream stream = ctx.stream();
    const anydev::DeviceEvent plain = ctx.create_event();
    const anydev::DeviceEvent timed = ctx.create_event(anydev::EventOptions{.timing = true});
    const anydev::DeviceEvent timed_end = ctx.create_event(anydev::EventOptions{.timing = true});
    const double plain_ns = median_ns_per_round(rounds, [&] {
      stream.record_event(plain);
      plain.synchronize();
    });
    const double timing_ns = median_ns_per_round(rounds, [&] {
      stream.record_event(timed);
      timed.synchronize();
    });
    volatile float sink = 0.0F;
    const double elapsed_ns = median_ns_per_round(rounds, [&] {
      stream.record_event(timed);
      stream.record_event(timed_end);
      timed_end.synchronize();
      sink = timed.elapsed_time(timed_end);
    });
    static_cast<void>(sink);
    std::printf("| %s: %s | ns per round | ratio to plain |\n| --- | ---: | ---: |\n", api.c_str(),
                ctx.name().c_str());
    std::printf("| plain event: record + synchronize | %.0f | 1.00 |\n", plain_ns);
    std::printf("| timing event: record + synchronize | %.0f | %.2f |\n", timing_ns,
                timing_ns / plain_ns);
    std::printf("| two timing records + synchronize + elapsed_time | %.0f | %.2f |\n", elapsed_ns,
                elapsed_ns / plain_ns);
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "anydev-timing-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
