// SPDX-License-Identifier: Apache-2.0
// Honest pinning. Past RLIMIT_MEMLOCK (without
// CAP_IPC_LOCK) cpu host buffers are pageable; then each buffer says so
// (HostBuffer::is_locked(), anydev_buffer_is_locked), the device's locked
// total excludes them (anydev_context_host_memory_locks) and one warning per
// backend names RLIMIT_MEMLOCK's value. The limit is lowered to 0 in a child
// process that also drops CAP_IPC_LOCK, and the child's stderr (where the
// log goes) is read back. Each test needs a process of its own in which no
// anydev call came first (ctest runs them one by one; see CMakeLists.txt).
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"

// The sanitizers' runtimes (sanitizer_common) intercept mlock as a no-op that
// succeeds.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ANYDEV_MLOCK_IS_A_NO_OP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ANYDEV_MLOCK_IS_A_NO_OP 1
#endif
#endif

namespace {

constexpr int kIpcLockBit = CAP_IPC_LOCK;

bool HasIpcLock() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return (data[kIpcLockBit / 32].effective & (1u << (kIpcLockBit % 32))) != 0;
}

// Drops CAP_IPC_LOCK from this process; true when it is gone.
bool DropIpcLock() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return !HasIpcLock();
  const unsigned bit = 1u << (kIpcLockBit % 32);
  data[kIpcLockBit / 32].effective &= ~bit;
  data[kIpcLockBit / 32].permitted &= ~bit;
  data[kIpcLockBit / 32].inheritable &= ~bit;
  syscall(SYS_capset, &header, data);
  return !HasIpcLock();
}

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// The child's checks; returns 0 or the number of the first failing one.
int ChildChecks(const char* log_path) {
  try {
    const anydev::DeviceContext ctx(0, "cpu");
    std::vector<anydev::HostBuffer<std::uint8_t>> buffers;
    std::size_t bytes = 0;
    for (const std::size_t size : {64u, 100u, 4096u, 65536u, 1u << 20}) {
      for (int i = 0; i < 3; ++i) {
        buffers.push_back(ctx.enqueue_create_host_buffer<std::uint8_t>(size));
        bytes += size;
      }
    }
    for (const auto& buffer : buffers) {
      if (buffer.is_locked()) return 1;
      int locked = -1;
      if (anydev_buffer_is_locked(buffer.handle(), &locked) != ANYDEV_SUCCESS || locked != 0) {
        return 2;
      }
    }
    const anydev::HostMemoryLocks locks = ctx.host_memory_locks();
    if (locks.locked_bytes != 0) return 3;
    if (locks.total_bytes < bytes) return 4;
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "child: %s\n", e.what());
    return 5;
  }
  std::fflush(stderr);
  std::ifstream file(log_path);
  std::stringstream log;
  log << file.rdbuf();
  const std::string text = log.str();
  if (Count(text, "host memory is not page-locked") != 1) return 6;
  if (Count(text, "RLIMIT_MEMLOCK is 0 bytes") != 1) return 7;
  if (Count(text, "ulimit -l") != 1) return 8;
  return 0;
}

TEST(Memlock, PastTheLimitHostBuffersSayTheyArePageableAndOneWarningNamesTheLimit) {
#ifdef ANYDEV_MLOCK_IS_A_NO_OP
  GTEST_SKIP() << "the sanitizer runtime intercepts mlock as a no-op that succeeds, so the lock "
                  "limit cannot be reached in this build";
#endif
  char log_path[] = "/tmp/anydev-memlock-XXXXXX";
  const int log_fd = mkstemp(log_path);
  ASSERT_GE(log_fd, 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    dup2(log_fd, STDERR_FILENO);
    const rlimit zero{0, 0};
    if (setrlimit(RLIMIT_MEMLOCK, &zero) != 0) _exit(90);
    if (!DropIpcLock()) _exit(91);
    std::fflush(stdout);
    _exit(ChildChecks(log_path));
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  std::ifstream file(log_path);
  std::stringstream log;
  log << file.rdbuf();
  close(log_fd);
  unlink(log_path);
  ASSERT_TRUE(WIFEXITED(status)) << "child status " << status << "; its stderr:\n" << log.str();
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "child check " << WEXITSTATUS(status)
      << " failed (90/91: could not lower the limit or drop CAP_IPC_LOCK); its stderr:\n"
      << log.str();
}

TEST(Memlock, WithinTheLimitHostBuffersAreLocked) {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &limit), 0);
  if (!HasIpcLock() && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (std::size_t{8} << 20)) {
    GTEST_SKIP() << "RLIMIT_MEMLOCK is " << limit.rlim_cur
                 << " bytes without CAP_IPC_LOCK: too little to lock a 2 MiB segment and a "
                    "1 MiB buffer";
  }
  const anydev::DeviceContext ctx(0, "cpu");
  const auto small = ctx.enqueue_create_host_buffer<std::uint8_t>(64);
  const auto large = ctx.enqueue_create_host_buffer<std::uint8_t>(1 << 20);
  EXPECT_TRUE(small.is_locked());
  EXPECT_TRUE(large.is_locked());
  const anydev::HostMemoryLocks locks = ctx.host_memory_locks();
  EXPECT_GE(locks.total_bytes, std::size_t{(1 << 20) + 64});
  EXPECT_EQ(locks.locked_bytes, locks.total_bytes);
}

}  // namespace
