// SPDX-License-Identifier: Apache-2.0
// At the thread limit (RLIMIT_NPROC), in a child process: releasing a stream
// or a buffer must not abort the process (before the fix the core's
// reclaimer thread failed to start and std::system_error ended in
// std::terminate); streams keep working, since they need no thread of their
// own; and a cpu stream that cannot start its worker pool says which limit
// it hit.
//
// The limit is RLIMIT_NPROC = 0, which makes every thread creation fail.
// The kernel does not apply it to root, so a root child first becomes user
// nobody (65534); where that is not allowed, or the limit is not enforced,
// the test is skipped and says why. Run with ANYDEV_POOL=0 (ctest sets it),
// so that a buffer's release goes through the reclaimer too.
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "anydev/anydev.h"

namespace {

constexpr int kSkip = 77;

// Writes `text` to the pipe and ends the child with `code`.
[[noreturn]] void Finish(int fd, int code, const std::string& text) {
  if (!text.empty()) {
    const ssize_t ignored = write(fd, text.data(), text.size());
    (void)ignored;
  }
  _exit(code);
}

// Makes every later thread creation fail; "" on success, else why not.
std::string LimitThreads() {
  if (geteuid() == 0) {
    // The kernel exempts root from RLIMIT_NPROC: become nobody.
    if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
      return std::string("cannot drop root to user nobody to apply RLIMIT_NPROC: ") +
             std::strerror(errno);
    }
  }
  const rlimit none{0, 0};
  if (setrlimit(RLIMIT_NPROC, &none) != 0) {
    return std::string("setrlimit(RLIMIT_NPROC, 0) failed: ") + std::strerror(errno);
  }
  try {
    std::thread probe([] {});
    probe.join();
    return "RLIMIT_NPROC = 0 is not enforced here (a thread still started)";
  } catch (const std::system_error&) {
    return "";
  }
}

// Runs `body(fd)` in a child; it ends with Finish. Fails when the child
// fails, is killed (an abort), and skips when it says so.
template <class Body>
void InChild(Body&& body) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    body(fds[1]);
    Finish(fds[1], 0, "");
  }
  close(fds[1]);
  std::string text;
  char chunk[512];
  for (ssize_t n; (n = read(fds[0], chunk, sizeof chunk)) > 0;) text.append(chunk, n);
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status)) {
    FAIL() << "the child was killed by signal " << WTERMSIG(status) << " ("
           << strsignal(WTERMSIG(status)) << "): " << text;
  }
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == kSkip) GTEST_SKIP() << text;
  EXPECT_EQ(WEXITSTATUS(status), 0) << text;
}

#define CHILD_OK(call)                                                               \
  do {                                                                               \
    if ((call) != ANYDEV_SUCCESS) {                                                  \
      Finish(fd, 1, std::string(#call) + " failed: " + anydev_last_error_message()); \
    }                                                                                \
  } while (0)

TEST(ThreadLimit, StreamAndBufferReleasesDoNotAbortAtTheLimit) {
  InChild([](int fd) {
    anydev_context_t ctx = nullptr;
    CHILD_OK(anydev_context_create("cpu", 0, &ctx));  // starts the stream workers
    anydev_stream_t stream = nullptr;
    CHILD_OK(anydev_context_create_stream(ctx, &stream));
    anydev_buffer_t buffer = nullptr;
    CHILD_OK(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 4096, &buffer));
    const std::uint8_t pattern = 7;
    CHILD_OK(anydev_enqueue_fill(ctx, buffer, &pattern, 1));
    if (std::string why = LimitThreads(); !why.empty()) Finish(fd, kSkip, why);
    // The reclaimer's thread cannot start now: these degrade to synchronous
    // releases.
    CHILD_OK(anydev_stream_release(stream));
    CHILD_OK(anydev_buffer_release(buffer));
    // Streams need no thread of their own: a new one works at the limit.
    CHILD_OK(anydev_context_create_stream(ctx, &stream));
    anydev_context_t on_stream = nullptr;
    CHILD_OK(anydev_context_with_stream(ctx, stream, &on_stream));
    CHILD_OK(
        anydev_buffer_create(on_stream, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 1 << 22, &buffer));
    CHILD_OK(anydev_enqueue_fill(on_stream, buffer, &pattern, 1));
    CHILD_OK(anydev_context_synchronize(on_stream));
    CHILD_OK(anydev_buffer_release(buffer));
    CHILD_OK(anydev_context_release(on_stream));
    CHILD_OK(anydev_stream_release(stream));
    CHILD_OK(anydev_context_release(ctx));
    Finish(fd, 0, "");
  });
}

TEST(ThreadLimit, AStreamThatCannotStartItsWorkersNamesTheLimit) {
  InChild([](int fd) {
    if (std::string why = LimitThreads(); !why.empty()) Finish(fd, kSkip, why);
    anydev_context_t ctx = nullptr;
    const anydev_status_t status = anydev_context_create("cpu", 0, &ctx);
    if (status == ANYDEV_SUCCESS) Finish(fd, 1, "a cpu context was made with no thread allowed");
    const std::string message = anydev_last_error_message();
    if (status != ANYDEV_ERROR_OUT_OF_MEMORY || message.find("RLIMIT_NPROC") == std::string::npos ||
        message.find("threads-max") == std::string::npos ||
        message.find("EAGAIN") == std::string::npos) {
      Finish(
          fd, 1,
          std::string("expected OUT_OF_MEMORY naming RLIMIT_NPROC, threads-max and EAGAIN, got ") +
              anydev_status_name(status) + ": " + message);
    }
    Finish(fd, 0, "");
  });
}

}  // namespace
