// SPDX-License-Identifier: Apache-2.0
// fork() while another thread is inside the process's first fill: the cpu
// backend reads the last-level cache size on the first fill
// (streaming_fill_bytes). Read in a function-local static, its C++ guard
// would be left locked in the child by a fork() at that moment: the child's
// first fill would then block forever in __cxa_guard_acquire.
//
// Deterministic: this executable interposes fopen (libanydev.so calls it
// for /sys/devices/system/cpu/cpu0/cache/index*), and once armed, holds the
// parent's first such call until the fork is over (a pthread_atfork parent
// handler releases it). So the fork always happens while a parent thread is
// inside that first read. The child makes its own context and fills.
// Must be the process's first fill: one ctest entry runs only this test.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "anydev/anydev.hpp"
#include "fork_child.h"

namespace {

using FopenFn = FILE* (*)(const char*, const char*);

std::atomic<FopenFn> g_real_fopen{nullptr};
std::atomic<bool> g_armed{false};
std::atomic<pid_t> g_parent{0};

// Never destroyed: the parent's held thread waits on them at the fork, and
// destroying such a condition variable in the child at exit would block.
std::mutex& g_mutex = *new std::mutex();
std::condition_variable& g_changed = *new std::condition_variable();
bool g_entered = false;   // a parent thread is held inside the cache-size read
bool g_released = false;  // the fork is over: let it go

FopenFn real_fopen() {
  FopenFn real = g_real_fopen.load();
  if (real == nullptr) {
    real = reinterpret_cast<FopenFn>(dlsym(RTLD_NEXT, "fopen"));
    g_real_fopen.store(real);
  }
  return real;
}

void release_held_reader() {
  std::lock_guard lock(g_mutex);
  g_released = true;
  g_changed.notify_all();
}

}  // namespace

// The interposed fopen: libanydev.so's calls resolve here first.
extern "C" __attribute__((visibility("default"))) FILE* fopen(const char* path, const char* mode) {
  if (g_armed.load() && getpid() == g_parent.load() && path != nullptr &&
      std::strstr(path, "/cpu0/cache/index") != nullptr) {
    std::unique_lock lock(g_mutex);
    g_armed.store(false);  // hold only the first call
    g_entered = true;
    g_changed.notify_all();
    g_changed.wait(lock, [] { return g_released; });
  }
  return real_fopen()(path, mode);
}

ANYDEV_FORK_CHILD_LEAK_HOOK()

namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::HostBuffer;

// In the child: a new context, a fill (the process's first in the child),
// checked. 0: fine.
int ChildFills() {
  try {
    const DeviceContext ctx(0, "cpu");
    constexpr std::size_t kCount = 1u << 16;
    const HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(kCount);
    host.enqueue_fill(0xc0ffee11u);
    ctx.synchronize();
    for (std::size_t i = 0; i < kCount; ++i) {
      if (host[i] != 0xc0ffee11u) return 3;
    }
    return 0;
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "child: %s\n", e.what());
    return 2;
  }
}

TEST(ForkFirstFill, ChildFillsWhileParentThreadIsInTheFirstFill) {
  // The parent has running threads at the fork (the held reader, the
  // stream's worker): under AddressSanitizer the child hung once in CI in
  // about 30 runs, in the sanitizer's allocator (tests/process/fork_child.h).
  ANYDEV_SKIP_FORK_UNDER_ASAN();
  ASSERT_NE(real_fopen(), nullptr) << "dlsym(RTLD_NEXT, \"fopen\"): " << dlerror();
  g_parent.store(getpid());
  ASSERT_EQ(pthread_atfork(nullptr, release_held_reader, nullptr), 0);

  const DeviceContext ctx(0, "cpu");
  constexpr std::size_t kCount = 1u << 20;
  const HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(kCount);
  g_armed.store(true);
  host.enqueue_fill(0x5eed5eedu);  // the process's first fill, on the stream's worker
  {
    std::unique_lock lock(g_mutex);
    // A generous bound, not a timing threshold: the worker enters at once.
    ASSERT_TRUE(g_changed.wait_for(lock, std::chrono::seconds(60), [] { return g_entered; }))
        << "the first fill never read /sys/devices/system/cpu/cpu0/cache/index*: the cpu "
           "backend no longer reads the cache size there, so this test cannot hold it";
  }
  // A parent thread is now inside the first fill's cache-size read.
  const std::string failure = anydev_test::run_in_forked_child(ChildFills);
  EXPECT_EQ(failure, "");

  // The parent's fill finishes once released (by the atfork parent handler).
  ctx.synchronize();
  for (std::size_t i = 0; i < kCount; i += 4099) ASSERT_EQ(host[i], 0x5eed5eedu) << i;
}

}  // namespace
