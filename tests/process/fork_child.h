// SPDX-License-Identifier: Apache-2.0
// Runs a function in a forked child with an alarm, for the fork() tests:
// the child exits with the function's result (0: fine) through a normal
// exit, and a child that hangs dies of SIGALRM instead of hanging CI.
// Header-only; not thread-safe (call it from the test's main thread).
#ifndef ANYDEV_TESTS_PROCESS_FORK_CHILD_H_
#define ANYDEV_TESTS_PROCESS_FORK_CHILD_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

// AddressSanitizer's allocator in GCC 12's runtime takes no lock around
// fork() (LLVM's runtime gained one later): when any parent thread is inside
// malloc or free at that moment (a stream worker finishing a task, the
// reclaimer, a driver's thread), the child inherits the allocator's lock held
// and hangs in its next allocation, before any anydev code matters (seen in
// gdb: the child's first new thread blocks in __asan::Allocator under
// AsanThread::Init). glibc's malloc does lock around fork(), so every fork()
// test whose parent has running threads runs in the plain build and skips
// under AddressSanitizer with this reason.
#if defined(__SANITIZE_ADDRESS__)
#define ANYDEV_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ANYDEV_TEST_ASAN 1
#endif
#endif
#if defined(ANYDEV_TEST_ASAN)
#define ANYDEV_SKIP_FORK_UNDER_ASAN()                                                             \
  GTEST_SKIP() << "AddressSanitizer's allocator (GCC 12 runtime) is not fork-safe in a "          \
                  "multi-threaded parent: a child can hang in malloc whatever anydev does; this " \
                  "test runs in the plain build (see tests/process/fork_child.h)"
#else
#define ANYDEV_SKIP_FORK_UNDER_ASAN() static_cast<void>(0)
#endif

namespace anydev_test {

// Set in the child (the tests' LeakSanitizer hook reads it: the child
// abandons what the parent made).
inline volatile sig_atomic_t g_in_forked_child = 0;

// Forks; the child runs `body` under a 30 s alarm and exits with its result.
// Returns "" when the child exited with 0, else what went wrong.
template <typename Body>
std::string run_in_forked_child(Body body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return std::string("fork: ") + std::strerror(errno);
  if (pid == 0) {
    g_in_forked_child = 1;
    alarm(30);          // a hang ends as SIGALRM, which the parent reports
    std::exit(body());  // a normal exit: atexit handlers and static destructors run
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
    return "the child did not exit within 60 s";
  }
  if (done != pid) return std::string("waitpid: ") + std::strerror(errno);
  if (WIFSIGNALED(status)) {
    return "the child died of signal " + std::to_string(WTERMSIG(status)) +
           (WTERMSIG(status) == SIGALRM ? " (SIGALRM: it hung)" : "");
  }
  if (WEXITSTATUS(status) != 0) {
    return "the child's check " + std::to_string(WEXITSTATUS(status)) +
           " failed (its reason is on stderr)";
  }
  return "";
}

}  // namespace anydev_test

// Defines LeakSanitizer's hook for a fork test's executable (once, at file
// scope): leak checking is off in a forked child only, which deliberately
// abandons what the parent made (it must not free the parent's state).
#define ANYDEV_FORK_CHILD_LEAK_HOOK()                                            \
  extern "C" __attribute__((visibility("default"))) int __lsan_is_turned_off() { \
    return anydev_test::g_in_forked_child;                                       \
  }

#endif  // ANYDEV_TESTS_PROCESS_FORK_CHILD_H_
