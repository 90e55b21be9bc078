// SPDX-License-Identifier: Apache-2.0
// A backend whose driver cannot survive fork() (no ANYDEV_BK_FLAG_SURVIVES_FORK
// in its table: opencl, cuda, ...) and that the parent initialized is
// unavailable in a forked child, with a reason naming the backend and fork(),
// instead of hanging in the driver (PoCL's clFinish hangs in the child,
// whose driver threads do not exist). The cpu backend keeps
// working there. A backend the parent never initialized may be initialized
// in the child.
//
// The backend comes from ANYDEV_FORK_TEST_BACKEND (ctest sets it, and
// ANYDEV_CUDA_LIBRARY for the CUDA emulator); one ctest entry per backend and
// test, each its own process (a probe happens once per process).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "anydev/anydev.hpp"
#include "fork_child.h"

ANYDEV_FORK_CHILD_LEAK_HOOK()

namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::HostBuffer;
using anydev::Status;

std::string TestBackend() {
  const char* name = std::getenv("ANYDEV_FORK_TEST_BACKEND");
  return name != nullptr ? name : "";
}

// Skips (saying why) unless `name` is usable in this process.
#define REQUIRE_BACKEND(name)                                                                  \
  do {                                                                                         \
    if ((name).empty()) GTEST_SKIP() << "ANYDEV_FORK_TEST_BACKEND is not set: run via ctest";  \
    if (DeviceContext::number_of_devices(name) == 0) {                                         \
      GTEST_SKIP() << (name) << " has no device here (for opencl: no OpenCL platform such as " \
                   << "PoCL; for cuda: ANYDEV_CUDA_LIBRARY not set to the emulator)";          \
    }                                                                                          \
  } while (false)

// Fills and reads back on a new context of `backend`. 0: fine.
int UseBackend(const std::string& backend, int code) {
  const DeviceContext ctx(0, backend);
  constexpr std::size_t kCount = 4096;
  const DeviceBuffer<std::uint32_t> device = ctx.enqueue_create_buffer<std::uint32_t>(kCount);
  const HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(kCount);
  device.enqueue_fill(0xabcd1234u);
  device.enqueue_copy_to(host);
  ctx.synchronize();
  for (std::size_t i = 0; i < kCount; ++i) {
    if (host[i] != 0xabcd1234u) {
      std::fprintf(stderr, "child: %s: wrong value at %zu\n", backend.c_str(), i);
      return code;
    }
  }
  return 0;
}

// In the child of a parent that used `backend`: new contexts of it are
// backend_unavailable with a reason naming it and fork(); the parent's
// context is invalid_state; cpu works.
int ChildAfterParentUsed(const std::string& backend, const DeviceContext& parent_ctx) {
  try {
    const DeviceContext ctx(0, backend);
    std::fprintf(stderr, "child check 1: DeviceContext(0, \"%s\") succeeded\n", backend.c_str());
    return 1;
  } catch (const anydev::Error& e) {
    const std::string what = e.what();
    if (e.status() != Status::backend_unavailable || what.find(backend) == std::string::npos ||
        what.find("fork()") == std::string::npos) {
      std::fprintf(stderr, "child check 2: %s: %s\n", anydev::to_string(e.status()), e.what());
      return 2;
    }
  }
  if (DeviceContext::number_of_devices(backend) != 0) {
    std::fprintf(stderr, "child check 3: %s still lists devices\n", backend.c_str());
    return 3;
  }
  try {
    parent_ctx.synchronize();
    std::fprintf(stderr, "child check 4: the parent's context worked in the child\n");
    return 4;
  } catch (const anydev::Error& e) {
    if (e.status() != Status::invalid_state) {
      std::fprintf(stderr, "child check 4: %s: %s\n", anydev::to_string(e.status()), e.what());
      return 4;
    }
  }
  try {
    return UseBackend("cpu", 5);
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "child check 6: cpu: %s\n", e.what());
    return 6;
  }
}

TEST(ForkBackend, InitializedInParentIsUnavailableInChild) {
  ANYDEV_SKIP_FORK_UNDER_ASAN();
  const std::string backend = TestBackend();
  REQUIRE_BACKEND(backend);
  const DeviceContext ctx(0, backend);
  ASSERT_EQ(UseBackend(backend, 1), 0);
  // Work still queued at the fork.
  const DeviceBuffer<std::uint32_t> busy = ctx.enqueue_create_buffer<std::uint32_t>(1u << 20);
  busy.enqueue_fill(7u);

  EXPECT_EQ(anydev_test::run_in_forked_child([&] { return ChildAfterParentUsed(backend, ctx); }),
            "");

  // The parent keeps using it.
  ctx.synchronize();
  EXPECT_EQ(UseBackend(backend, 1), 0);
}

TEST(ForkBackend, NotInitializedInParentWorksInChild) {
  ANYDEV_SKIP_FORK_UNDER_ASAN();
  const std::string backend = TestBackend();
  if (backend.empty()) GTEST_SKIP() << "ANYDEV_FORK_TEST_BACKEND is not set: run via ctest";
  // Nothing here probes `backend` before the fork (cpu only).
  ASSERT_EQ(UseBackend("cpu", 1), 0);
  const std::string failure = anydev_test::run_in_forked_child([&] {
    try {
      if (DeviceContext::number_of_devices(backend) == 0) {
        std::fprintf(stderr, "child: %s has no device (not a fork problem)\n", backend.c_str());
        return 77;
      }
      return UseBackend(backend, 1);
    } catch (const anydev::Error& e) {
      std::fprintf(stderr, "child: %s: %s\n", backend.c_str(), e.what());
      return 2;
    }
  });
  if (failure.find("check 77 ") != std::string::npos) {
    GTEST_SKIP() << backend << " has no device in this environment (see the child's stderr)";
  }
  EXPECT_EQ(failure, "");
}

}  // namespace
