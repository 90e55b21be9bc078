// SPDX-License-Identifier: Apache-2.0
// Small host buffers share memory mappings: 100,000 live 64-byte cpu host
// buffers -- more than the kernel's default limit of 65,530 mappings per
// process, which one mapping per buffer would hit ("mmap of 4096 bytes
// failed") -- all succeed, and the process's
// mappings grow by a few, not by one per buffer. Run with the caching pool
// on (64-byte requests reach the backend as 512-byte blocks) and off
// (ANYDEV_POOL=0: 64-byte blocks); see CMakeLists.txt.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"

namespace {

// Lines of /proc/self/maps: the process's memory mappings.
std::size_t MappingCount() {
  std::ifstream maps("/proc/self/maps");
  std::size_t lines = 0;
  for (std::string line; std::getline(maps, line);) ++lines;
  return lines;
}

TEST(HostSmallBuffers, LiveBuffersPastTheMappingLimitShareMappings) {
  constexpr std::size_t kBuffers = 100000;
  const anydev::DeviceContext ctx(0, "cpu");
  const std::size_t mappings_before = MappingCount();
  std::vector<anydev::HostBuffer<std::uint8_t>> buffers;
  buffers.reserve(kBuffers);
  for (std::size_t i = 0; i < kBuffers; ++i) {
    buffers.push_back(ctx.enqueue_create_host_buffer<std::uint8_t>(64));
    buffers.back()[0] = static_cast<std::uint8_t>(i);
    buffers.back()[63] = static_cast<std::uint8_t>(i >> 8);
  }
  const std::size_t mappings_after = MappingCount();
  EXPECT_LT(mappings_after, mappings_before + 1000)
      << kBuffers << " live 64-byte host buffers added " << mappings_after - mappings_before
      << " mappings";
  for (std::size_t i = 0; i < kBuffers; ++i) {
    ASSERT_EQ(buffers[i][0], static_cast<std::uint8_t>(i)) << "buffer " << i;
    ASSERT_EQ(buffers[i][63], static_cast<std::uint8_t>(i >> 8)) << "buffer " << i;
  }
}

}  // namespace
