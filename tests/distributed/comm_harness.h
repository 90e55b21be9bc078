// SPDX-License-Identifier: Apache-2.0
// Runs a two-process scenario for the UCX transport's tests without MPI:
// run_pair forks two children joined by a socketpair (the out-of-band
// channel their addresses cross), each of which runs `body(role, link)`
// and exits 0 on success. The parent never creates an anydev object, so
// each child starts UCX and anydev afresh. Every run is bounded: a child
// still alive after the deadline is killed and the run fails.
#ifndef ANYDEV_TESTS_DISTRIBUTED_COMM_HARNESS_H_
#define ANYDEV_TESTS_DISTRIBUTED_COMM_HARNESS_H_

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace anydev_test {

// One end of the socketpair: length-prefixed messages. Not thread-safe.
struct Link {
  int fd = -1;
  bool send(const std::vector<std::uint8_t>& bytes) const {
    const std::uint64_t n = bytes.size();
    return write_all(&n, sizeof n) && write_all(bytes.data(), bytes.size());
  }
  std::vector<std::uint8_t> recv() const {
    std::uint64_t n = 0;
    if (!read_all(&n, sizeof n)) return {};
    std::vector<std::uint8_t> out(n);
    if (!read_all(out.data(), n)) return {};
    return out;
  }
  bool write_all(const void* p, std::size_t n) const {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      const ssize_t w = ::write(fd, c, n);
      if (w <= 0) return false;
      c += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }
  bool read_all(void* p, std::size_t n) const {
    char* c = static_cast<char*>(p);
    while (n > 0) {
      const ssize_t r = ::read(fd, c, n);
      if (r <= 0) return false;
      c += r;
      n -= static_cast<std::size_t>(r);
    }
    return true;
  }
};

// How a child ended: its exit code, or the signal that killed it.
struct ChildEnd {
  int exit_code = -1;
  int signal = 0;
};

// Forks role 0 and role 1, waits up to `limit` for both; a child still
// running then is SIGKILLed and reported as killed by the harness
// (signal = SIGKILL, exit_code = -2).
inline std::vector<ChildEnd> run_pair(const std::function<int(int, const Link&)>& body,
                                      std::chrono::seconds limit = std::chrono::seconds(45)) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return {};
  std::fflush(nullptr);
  pid_t pids[2];
  for (int role = 0; role < 2; ++role) {
    pids[role] = ::fork();
    if (pids[role] == 0) {
      ::close(fds[1 - role]);
      Link link{fds[role]};
      int code = 1;
      try {
        code = body(role, link);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "role %d: uncaught: %s\n", role, e.what());
      }
      std::fflush(nullptr);
      ::_exit(code);
    }
  }
  ::close(fds[0]);
  ::close(fds[1]);
  std::vector<ChildEnd> ends(2);
  bool done[2] = {false, false};
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!(done[0] && done[1])) {
    for (int role = 0; role < 2; ++role) {
      if (done[role]) continue;
      int status = 0;
      if (::waitpid(pids[role], &status, WNOHANG) == pids[role]) {
        done[role] = true;
        if (WIFEXITED(status)) ends[role].exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) ends[role].signal = WTERMSIG(status);
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      for (int role = 0; role < 2; ++role) {
        if (done[role]) continue;
        ::kill(pids[role], SIGKILL);
        ::waitpid(pids[role], nullptr, 0);
        ends[role].exit_code = -2;
        ends[role].signal = SIGKILL;
        std::fprintf(stderr, "role %d did not finish within the limit: killed\n", role);
        done[role] = true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return ends;
}

}  // namespace anydev_test

#endif  // ANYDEV_TESTS_DISTRIBUTED_COMM_HARNESS_H_
