// SPDX-License-Identifier: Apache-2.0
// A small pipeline traced by ANYDEV_TRACE (tests/layers/CMakeLists.txt and
// docs/tracing.md): two host threads, each with its own stream, upload from
// pinned memory, fill, copy on the device and download (last into pageable
// memory); the second stream waits for the
// first one's event before its last copy. Exits 0 when every result is right.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "anydev/anydev.hpp"

namespace {

constexpr std::size_t kCount = 1u << 20;  // 4 MiB of uint32 per buffer

bool Pipeline(const anydev::DeviceContext& ctx, std::uint32_t seed,
              const anydev::DeviceEvent* wait_for, const anydev::DeviceEvent* signal) {
  std::vector<std::uint32_t> output(kCount, 0);
  const auto input = ctx.enqueue_create_host_buffer<std::uint32_t>(kCount);
  const auto a = ctx.enqueue_create_buffer<std::uint32_t>(kCount);
  const auto b = ctx.enqueue_create_buffer<std::uint32_t>(kCount);
  const auto host = ctx.enqueue_create_host_buffer<std::uint32_t>(kCount);
  input.enqueue_fill(seed);
  for (int round = 0; round < 3; ++round) {
    a.enqueue_copy_from(input);
    b.enqueue_fill(seed + 1);
    a.enqueue_copy_to(b);
    b.enqueue_copy_to(host);
  }
  if (signal != nullptr) ctx.stream().record_event(*signal);
  if (wait_for != nullptr) ctx.stream().enqueue_wait_for(*wait_for);
  host.enqueue_copy_to(output.data());
  ctx.synchronize();
  for (std::uint32_t v : output) {
    if (v != seed) return false;
  }
  return true;
}

}  // namespace

int main() {
  // A file left by an earlier run must not pass for this run's trace.
  if (const char* path = std::getenv("ANYDEV_TRACE")) std::remove(path);
  try {
    const anydev::DeviceContext ctx(0, "cpu");
    const anydev::DeviceContext other = ctx.with_stream(ctx.create_stream());
    const anydev::DeviceEvent first_done = ctx.create_event();
    bool ok_first = false, ok_second = false;
    std::thread first([&] { ok_first = Pipeline(ctx, 11, nullptr, &first_done); });
    std::thread second([&] { ok_second = Pipeline(other, 22, &first_done, nullptr); });
    first.join();
    second.join();
    if (!ok_first || !ok_second) {
      std::fprintf(stderr, "wrong results: first %d second %d\n", ok_first, ok_second);
      return 1;
    }
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
