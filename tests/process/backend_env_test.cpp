// SPDX-License-Identifier: Apache-2.0
// ANYDEV_BACKEND as the process starts with it (ctest sets it per entry; see
// CMakeLists.txt). Without the variable these tests skip, and ctest counts a
// skip as a failure.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "anydev/anydev.hpp"

namespace {

using anydev::DeviceContext;
using anydev::Status;

const char* BackendVariable() { return std::getenv("ANYDEV_BACKEND"); }

#define REQUIRE_BACKEND_VARIABLE()                                                        \
  do {                                                                                    \
    if (BackendVariable() == nullptr) {                                                   \
      GTEST_SKIP() << "ANYDEV_BACKEND is not set: run this through ctest, which sets it"; \
    }                                                                                     \
  } while (false)

// Checks that a context works: a fill and a read back.
void ExpectUsable(const DeviceContext& ctx) {
  const anydev::HostBuffer<std::uint32_t> buffer =
      ctx.enqueue_create_host_buffer<std::uint32_t>(64);
  buffer.enqueue_fill(0xABCD1234u);
  ctx.synchronize();
  for (std::size_t i = 0; i < buffer.size(); ++i) ASSERT_EQ(buffer[i], 0xABCD1234u) << i;
}

TEST(BadBackendEnv, DefaultConstructorRejectsItListingTheBackends) {
  REQUIRE_BACKEND_VARIABLE();
  const std::string value = BackendVariable();
  try {
    const DeviceContext ctx;
    FAIL() << "DeviceContext() accepted ANYDEV_BACKEND=\"" << value << "\" and chose " << ctx.api();
  } catch (const anydev::Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.status(), Status::invalid_argument) << message;
    EXPECT_NE(message.find("ANYDEV_BACKEND"), std::string::npos) << message;
    EXPECT_NE(message.find(value), std::string::npos) << "does not quote the value: " << message;
    // Every known backend is listed with what is known about it ("cuda: not
    // built (...)"); backends that are not named are not opened to say so.
    for (const char* name : {"cpu", "cuda", "hip", "level_zero", "opencl"}) {
      const std::size_t at = message.find(std::string(name) + ": ");
      ASSERT_NE(at, std::string::npos) << "does not list \"" << name << ": <state>\": " << message;
      const std::size_t end = message.find('\n', at);
      EXPECT_GT((end == std::string::npos ? message.size() : end) - at, std::strlen(name) + 2)
          << "nothing said about " << name << ": " << message;
    }
  }
}

TEST(BadBackendEnv, ExplicitArgumentsWinOverTheVariable) {
  REQUIRE_BACKEND_VARIABLE();
  const DeviceContext ctx(0, "cpu");
  EXPECT_EQ(ctx.api(), "cpu");
  ExpectUsable(ctx);
}

TEST(BadBackendEnv, BackendListStillWorks) {
  REQUIRE_BACKEND_VARIABLE();
  bool cpu = false;
  for (const anydev::BackendInfo& b : DeviceContext::backends())
    cpu |= b.name == "cpu" && b.available;
  EXPECT_TRUE(cpu);
  EXPECT_EQ(DeviceContext::number_of_devices("cpu"), 1);
}

TEST(CpuBackendEnv, DefaultConstructorTakesIt) {
  REQUIRE_BACKEND_VARIABLE();
  const DeviceContext ctx;
  EXPECT_EQ(ctx.api(), "cpu");
  EXPECT_EQ(ctx.id(), 0);
  ExpectUsable(ctx);
}

// "opencl:7,cuda:5,cpu": the first entry that has its device is cpu.
TEST(PreferenceListEnv, TakesTheFirstEntryThatHasItsDevice) {
  REQUIRE_BACKEND_VARIABLE();
  ASSERT_LT(DeviceContext::number_of_devices("opencl"), 8) << "this machine has 8 OpenCL devices";
  ASSERT_LT(DeviceContext::number_of_devices("cuda"), 6) << "this machine has 6 CUDA devices";
  const DeviceContext ctx;
  EXPECT_EQ(ctx.api(), "cpu");
  ExpectUsable(ctx);
}

// "cpu:1": no entry has its device.
TEST(NoDeviceEnv, DefaultConstructorFailsNamingTheEntry) {
  REQUIRE_BACKEND_VARIABLE();
  try {
    const DeviceContext ctx;
    FAIL() << "DeviceContext() chose " << ctx.api() << ":" << ctx.id()
           << " for ANYDEV_BACKEND=cpu:1";
  } catch (const anydev::Error& e) {
    const std::string message = e.what();
    EXPECT_TRUE(e.status() == Status::out_of_range || e.status() == Status::backend_unavailable)
        << anydev::to_string(e.status()) << ": " << message;
    EXPECT_NE(message.find("cpu"), std::string::npos) << message;
  }
}

}  // namespace
