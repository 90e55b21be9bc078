// SPDX-License-Identifier: Apache-2.0
// fork() while the cpu backend's workers are busy and other threads are in
// the middle of anydev calls: the child must be able to open its own context
// and do work (never deadlock on a lock a parent thread held at the fork),
// and exit normally. Repeated several times to catch the unlucky moments.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "anydev/anydev.hpp"
#include "fork_child.h"

ANYDEV_FORK_CHILD_LEAK_HOOK()

namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::HostBuffer;

// In the child: a new context, allocations, fills and copies on a new
// stream, checked. Returns the exit code (0: fine).
int ChildWork() {
  try {
    const DeviceContext ctx(0, "cpu");
    constexpr std::size_t kCount = 1u << 16;
    const HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(kCount);
    const DeviceBuffer<std::uint32_t> device = ctx.enqueue_create_buffer<std::uint32_t>(kCount);
    device.enqueue_fill(0x5eed5eedu);
    device.enqueue_copy_to(host);
    const DeviceContext other = ctx.with_stream(ctx.create_stream());
    other.enqueue_memset(device, 1u);  // a second worker, ordered after the first
    ctx.synchronize();
    other.synchronize();
    for (std::size_t i = 0; i < kCount; ++i) {
      if (host[i] != 0x5eed5eedu) return 3;
    }
    return 0;
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "child: %s\n", e.what());
    return 2;
  }
}

TEST(ForkChildWork, ChildMakesItsOwnContextWhileParentWorkersAreBusy) {
  ANYDEV_SKIP_FORK_UNDER_ASAN();
  const DeviceContext ctx(0, "cpu");
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int t = 0; t < 3; ++t) {
    busy.emplace_back([&] {
      const DeviceContext mine = ctx.with_stream(ctx.create_stream());
      const DeviceBuffer<std::uint8_t> buffer = mine.enqueue_create_buffer<std::uint8_t>(8u << 20);
      while (!stop.load()) {
        buffer.enqueue_fill(std::uint8_t{7});
        // Buffers made and released while the fork happens.
        const HostBuffer<std::uint8_t> scratch =
            mine.enqueue_create_host_buffer<std::uint8_t>(4096);
        scratch.enqueue_fill(std::uint8_t{1});
        mine.synchronize();
      }
    });
  }
  for (int round = 0; round < 5; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::fflush(nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork: " << std::strerror(errno);
    if (pid == 0) {
      anydev_test::g_in_forked_child = 1;
      alarm(30);               // a deadlock ends as SIGALRM, which the parent reports
      std::exit(ChildWork());  // a normal exit: atexit handlers and static destructors run
    }
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    pid_t done = 0;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (done == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    ASSERT_EQ(done, pid) << "round " << round << ": the child did not exit within 60 s";
    ASSERT_TRUE(WIFEXITED(status))
        << "round " << round << ": the child died of signal " << WTERMSIG(status)
        << (WTERMSIG(status) == SIGALRM ? " (SIGALRM: it hung)" : "");
    ASSERT_EQ(WEXITSTATUS(status), 0) << "round " << round << ": the child's work failed";
  }
  stop.store(true);
  for (std::thread& t : busy) t.join();
}

}  // namespace
