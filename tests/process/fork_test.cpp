// SPDX-License-Identifier: Apache-2.0
// fork(): in the child, every call on a context, buffer or stream made before
// the fork is Error(invalid_state), never a hang or a crash, and the child
// exits normally (static destructors and atexit handlers included). The
// parent's objects keep working.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "anydev/anydev.hpp"
#include "fork_child.h"

ANYDEV_FORK_CHILD_LEAK_HOOK()

namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::HostBuffer;
using anydev::Status;

// Runs `call` in the child: it must throw Error(invalid_state). Returns 0 or
// the failing check's number, after printing why to stderr.
int ExpectInvalidStateInChild(int number, const char* what, const std::function<void()>& call) {
  try {
    call();
    std::fprintf(stderr, "child check %d (%s): no error\n", number, what);
    return number;
  } catch (const anydev::Error& e) {
    if (e.status() != Status::invalid_state) {
      std::fprintf(stderr, "child check %d (%s): %s: %s\n", number, what,
                   anydev::to_string(e.status()), e.what());
      return number;
    }
    if (std::strlen(e.what()) == 0) {
      std::fprintf(stderr, "child check %d (%s): empty message\n", number, what);
      return number;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child check %d (%s): threw %s\n", number, what, e.what());
    return number;
  }
}

int RunChild(const DeviceContext& ctx, const HostBuffer<std::uint32_t>& host,
             const DeviceBuffer<std::uint32_t>& device) {
  const int failures[] = {
      ExpectInvalidStateInChild(1, "ctx.synchronize()", [&] { ctx.synchronize(); }),
      ExpectInvalidStateInChild(2, "ctx.enqueue_create_host_buffer",
                                [&] { (void)ctx.enqueue_create_host_buffer<int>(4); }),
      ExpectInvalidStateInChild(3, "ctx.enqueue_create_buffer",
                                [&] { (void)ctx.enqueue_create_buffer<int>(4); }),
      ExpectInvalidStateInChild(4, "host.enqueue_fill", [&] { host.enqueue_fill(2); }),
      ExpectInvalidStateInChild(5, "host.enqueue_copy_to(device)",
                                [&] { host.enqueue_copy_to(device); }),
      ExpectInvalidStateInChild(6, "device.map_to_host()", [&] { (void)device.map_to_host(); }),
      ExpectInvalidStateInChild(7, "ctx.stream().synchronize()",
                                [&] { ctx.stream().synchronize(); }),
      ExpectInvalidStateInChild(8, "ctx.create_stream()", [&] { (void)ctx.create_stream(); }),
      ExpectInvalidStateInChild(9, "ctx.name()", [&] { (void)ctx.name(); }),
  };
  for (int f : failures) {
    if (f != 0) return f;
  }
  {
    // Copies and their release in the child must neither hang nor crash.
    const DeviceContext copy = ctx;                          // NOLINT
    const HostBuffer<std::uint32_t> host_copy = host;        // NOLINT
    const DeviceBuffer<std::uint32_t> device_copy = device;  // NOLINT
  }
  return 0;
}

TEST(Fork, ChildGetsInvalidStateAndExitsNormally) {
  ANYDEV_SKIP_FORK_UNDER_ASAN();
  const DeviceContext ctx(0, "cpu");
  constexpr std::size_t kWords = 4u << 20;
  const HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(kWords);
  const DeviceBuffer<std::uint32_t> device = ctx.enqueue_create_buffer<std::uint32_t>(kWords);
  // Work is still queued when the process forks.
  host.enqueue_fill(1);
  host.enqueue_copy_to(device);
  std::fflush(nullptr);

  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << "fork: " << std::strerror(errno);
  if (pid == 0) {
    anydev_test::g_in_forked_child = 1;
    alarm(30);  // a hang ends as SIGALRM, which the parent reports
    const int code = RunChild(ctx, host, device);
    std::exit(code);  // normal exit: atexit handlers and static destructors run
  }

  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  pid_t done = 0;
  while ((done = waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "the forked child did not exit within 60 s";
  }
  ASSERT_EQ(done, pid) << "waitpid: " << std::strerror(errno);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << WTERMSIG(status)
                                 << (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM
                                         ? " (SIGALRM: it hung)"
                                         : "");
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "child check " << WEXITSTATUS(status) << " failed (its reason is on stderr)";

  // The parent's objects are unaffected.
  ctx.synchronize();
  device.enqueue_fill(0x77777777u);
  device.enqueue_copy_to(host);
  ctx.synchronize();
  for (std::size_t i = 0; i < kWords; i += 4099) ASSERT_EQ(host[i], 0x77777777u) << i;
}

// The parent's reclaimer thread (which finishes releases with pending work)
// is waiting on its condition variable at the fork; the child releases a
// buffer with pending work (starting its own reclaimer) and exits, which
// stops that reclaimer. The child can hang there: it inherits the
// condition variable with the parent's waiter in it, and glibc's notify
// waits for that waiter, which does not exist in the child.
TEST(Fork, ChildReleasesBuffersWithPendingWorkAndExits) {
  ANYDEV_SKIP_FORK_UNDER_ASAN();
  const DeviceContext ctx(0, "cpu");
  constexpr std::size_t kWords = 8u << 20;
  {
    // Released while its fill is queued: the reclaimer finishes the release.
    const DeviceBuffer<std::uint32_t> busy = ctx.enqueue_create_buffer<std::uint32_t>(kWords);
    busy.enqueue_fill(3u);
  }
  ctx.synchronize();
  // Not a threshold: only gives the reclaimer time to go back to waiting, so
  // that a regression shows here rather than by chance.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::fflush(nullptr);

  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << "fork: " << std::strerror(errno);
  if (pid == 0) {
    anydev_test::g_in_forked_child = 1;
    alarm(30);  // a hang ends as SIGALRM, which the parent reports
    int code = 0;
    try {
      const DeviceContext child_ctx(0, "cpu");
      for (int round = 0; round < 3; ++round) {
        const DeviceBuffer<std::uint32_t> busy =
            child_ctx.enqueue_create_buffer<std::uint32_t>(kWords);
        busy.enqueue_fill(5u);  // released with the fill still queued
      }
      child_ctx.synchronize();
    } catch (const anydev::Error& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      code = 2;
    }
    std::exit(code);  // normal exit: stops the child's reclaimer
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  pid_t done = 0;
  while ((done = waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "the forked child did not exit within 60 s";
  }
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << WTERMSIG(status)
                                 << (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM
                                         ? " (SIGALRM: it hung)"
                                         : "");
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
