// SPDX-License-Identifier: Apache-2.0
// anydev-demo: the README's first program. Picks the default backend (or the
// one ANYDEV_BACKEND names), moves a small buffer to the device and back,
// fills another device buffer, and prints everything the way Mojo does.
// Exits 1, with the error's status and message, if anything fails or a value
// read back is not the one written.
#include <cstddef>
#include <cstdio>
#include <iostream>

#include "anydev/anydev.hpp"

namespace {

int run() {
  const anydev::DeviceContext ctx;  // ANYDEV_BACKEND, else cuda, hip, level_zero, opencl, cpu
  std::cout << "backend " << ctx.api() << ", device " << ctx.id() << ": " << ctx.name() << "\n";

  constexpr std::size_t kSize = 8;
  const auto host = ctx.enqueue_create_host_buffer<float>(kSize);  // pinned, usable at once
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i);

  const auto device = ctx.enqueue_create_buffer<float>(kSize);
  host.enqueue_copy_to(device);  // all enqueue_* calls return at once, in stream order

  const auto filled = ctx.enqueue_create_buffer<float>(kSize);
  filled.enqueue_fill(0.5f);

  const auto round_trip = ctx.enqueue_create_host_buffer<float>(kSize);
  const auto fill_result = ctx.enqueue_create_host_buffer<float>(kSize);
  device.enqueue_copy_to(round_trip);
  filled.enqueue_copy_to(fill_result);
  ctx.synchronize();  // wait before the host reads what the stream wrote

  // A view sharing the memory of elements 2..5; it keeps `host` alive.
  const auto middle = host.create_sub_buffer<float>(2, 4);

  std::cout << "host:       " << host << "\n"
            << "device:     " << device << "\n"
            << "round trip: " << round_trip << "\n"
            << "filled:     " << fill_result << "\n"
            << "view [2,6): " << middle << "\n";

  {  // Edit a device buffer on the host: copied back when the mapping ends.
    auto mapped = filled.map_to_host();
    mapped[0] = -1.0f;
  }
  std::cout << "edited:     " << filled << "\n";

  for (std::size_t i = 0; i < kSize; ++i) {
    if (round_trip[i] != static_cast<float>(i) || fill_result[i] != 0.5f) {
      std::fprintf(stderr, "anydev-demo: element %zu read back as %g and %g\n", i,
                   static_cast<double>(round_trip[i]), static_cast<double>(fill_result[i]));
      return 1;
    }
  }
  if (const auto edited = filled.map_to_host(); edited[0] != -1.0f || edited[1] != 0.5f) {
    std::fprintf(stderr, "anydev-demo: the edit through map_to_host read back as %g, %g\n",
                 static_cast<double>(edited[0]), static_cast<double>(edited[1]));
    return 1;
  }
  if (middle.at(0) != 2.0f || middle.size() != 4) {
    std::fprintf(stderr, "anydev-demo: the view starts with %g, size %zu\n",
                 static_cast<double>(middle.at(0)), middle.size());
    return 1;
  }
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "anydev-demo: %s: %s\n", anydev::to_string(e.status()), e.what());
    return 1;
  }
}
