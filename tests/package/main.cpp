// SPDX-License-Identifier: Apache-2.0
// The README's C++ example, using only what the README shows, with its results
// checked: copies, a fill through a sub-buffer, printing and errors on the
// default backend. Exits non-zero (naming what differs) when anything is not
// exactly as the README says.
#include <anydev/anydev.hpp>
#include <cstring>
#include <iostream>
#include <sstream>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "consumer: FAILED: " << what << '\n';
    ++failures;
  }
}

}  // namespace

int main() {
  try {
    anydev::DeviceContext ctx;
    std::cout << "consumer: " << ctx.api() << ':' << ctx.id() << ' ' << ctx.name() << '\n';

    auto host = ctx.enqueue_create_host_buffer<float>(8);
    auto device = ctx.enqueue_create_buffer<float>(8);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i);

    host.enqueue_copy_to(device);
    device.create_sub_buffer<float>(2, 4).enqueue_fill(42.0f);
    device.enqueue_copy_to(host);
    ctx.synchronize();

    std::ostringstream printed;
    printed << host;
    std::cout << "consumer: " << printed.str() << '\n';
    expect(printed.str() == "HostBuffer([0.0, 1.0, 42.0, 42.0, 42.0, 42.0, 6.0, 7.0])",
           "printed " + printed.str());

    const float expected[8] = {0, 1, 42, 42, 42, 42, 6, 7};
    expect(host.size() == 8, "size " + std::to_string(host.size()));
    expect(std::memcmp(&host[0], expected, sizeof(expected)) == 0,
           "bytes differ from {0, 1, 42, 42, 42, 42, 6, 7}");

    try {
      (void)host.at(8);
      expect(false, "host.at(8) did not throw");
    } catch (const anydev::Error& e) {
      expect(e.status() == anydev::Status::out_of_range,
             std::string("host.at(8) gave ") + anydev::to_string(e.status()));
    }
    try {
      (void)device.create_sub_buffer<float>(6, 4);
      expect(false, "create_sub_buffer(6, 4) of 8 elements did not throw");
    } catch (const anydev::Error& e) {
      expect(e.status() == anydev::Status::out_of_range,
             std::string("create_sub_buffer(6, 4) gave ") + anydev::to_string(e.status()));
    }
  } catch (const anydev::Error& e) {
    std::cerr << "consumer: anydev error (" << anydev::to_string(e.status()) << "): " << e.what()
              << '\n';
    return 1;
  }
  if (failures != 0) return 1;
  std::cout << "consumer: OK\n";
  return 0;
}
