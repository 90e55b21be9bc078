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

#endif  // ANYDEV_TESTS_PROCESS_FORK_CHILD_H_
