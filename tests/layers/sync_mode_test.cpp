// SPDX-License-Identifier: Apache-2.0
// Synchronous mode (ANYDEV_SYNC=1, set by the ctest entry): every enqueue has
// finished when it returns, so its result is visible on the host without a
// synchronize and any failure is returned by the call itself.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "anydev/anydev.hpp"

namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::HostBuffer;

bool SyncOn() {
  const char* value = std::getenv("ANYDEV_SYNC");
  return value != nullptr && std::string_view(value) == "1";
}

// Big enough that an asynchronous fill is still running when the call
// returns, so without synchronous mode the reads below would race.
constexpr std::size_t kCount = 8u << 20;

TEST(SyncMode, EnqueuedWorkIsDoneWhenTheCallReturns) {
  if (!SyncOn()) GTEST_SKIP() << "needs ANYDEV_SYNC=1 (set by its ctest entry)";
  const DeviceContext ctx(0, "cpu");
  const HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(kCount);
  const DeviceBuffer<std::uint32_t> device = ctx.enqueue_create_buffer<std::uint32_t>(kCount);
  device.enqueue_fill(0xabcdef01u);
  device.enqueue_copy_to(host);
  // No synchronize: the copy has completed.
  for (std::size_t i = 0; i < kCount; i += 4093) ASSERT_EQ(host[i], 0xabcdef01u) << i;
  ASSERT_EQ(host[kCount - 1], 0xabcdef01u);
  host.enqueue_fill(3u);
  ASSERT_EQ(host[kCount - 1], 3u);
  const anydev::DeviceEvent event = ctx.create_event();
  ctx.stream().record_event(event);
  EXPECT_TRUE(event.is_complete());
  ctx.synchronize();  // nothing left to report
}

TEST(SyncModeMalformed, BackendUnavailableNamingTheValue) {
  const char* value = std::getenv("ANYDEV_SYNC");
  if (value == nullptr) GTEST_SKIP() << "needs a malformed ANYDEV_SYNC (set by its ctest entry)";
  try {
    const DeviceContext ctx(0, "cpu");
    ADD_FAILURE() << "ANYDEV_SYNC=\"" << value << "\" was accepted";
  } catch (const anydev::Error& e) {
    EXPECT_EQ(e.status(), anydev::Status::backend_unavailable) << e.what();
    EXPECT_NE(
        std::string(e.what()).find(std::string("ANYDEV_SYNC=\"") + value + "\" is not 0 or 1"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
