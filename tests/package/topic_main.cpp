// SPDX-License-Identifier: Apache-2.0
// The topic headers of an installed anydev used alone, without anydev.hpp:
// buffer.hpp (which brings context.hpp and what it needs) and float16.hpp.
// Copies through every form of DeviceContext::enqueue_copy (buffer <- buffer,
// buffer <- pointer and span, pointer and span <- buffer) and a memset, on the
// default backend. Exits non-zero naming what differs.
#include <anydev/buffer.hpp>
#include <anydev/float16.hpp>
#include <array>
#include <iostream>
#include <span>
#include <string>

int main() {
  try {
    const anydev::DeviceContext ctx;
    auto host = ctx.enqueue_create_host_buffer<anydev::float16>(4);
    auto device = ctx.enqueue_create_buffer<anydev::float16>(4);
    const std::array<anydev::float16, 4> in = {anydev::float16(1.0f), anydev::float16(2.0f),
                                               anydev::float16(3.0f), anydev::float16(4.0f)};
    std::array<anydev::float16, 4> out{};

    ctx.enqueue_copy(device, in.data());  // buffer <- pointer
    ctx.enqueue_copy(host, device);       // buffer <- buffer
    ctx.enqueue_copy(out.data(), host);   // pointer <- buffer
    ctx.synchronize();
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (!(out[i] == in[i])) {
        std::cerr << "topic_consumer: element " << i << " is " << static_cast<float>(out[i])
                  << " after the copies, expected " << static_cast<float>(in[i]) << '\n';
        return 1;
      }
    }

    ctx.enqueue_memset(device, anydev::float16(-2.5f));
    ctx.enqueue_copy(std::span<anydev::float16>(out), device);      // span <- buffer
    ctx.enqueue_copy(host, std::span<const anydev::float16>(out));  // buffer <- span
    ctx.synchronize();
    for (std::size_t i = 0; i < host.size(); ++i) {
      if (static_cast<float>(host[i]) != -2.5f) {
        std::cerr << "topic_consumer: element " << i << " is " << static_cast<float>(host[i])
                  << " after the memset, expected -2.5\n";
        return 1;
      }
    }
  } catch (const anydev::Error& e) {
    std::cerr << "topic_consumer: anydev error (" << anydev::to_string(e.status())
              << "): " << e.what() << '\n';
    return 1;
  }
  std::cout << "topic_consumer: OK\n";
  return 0;
}
