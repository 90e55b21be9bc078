// SPDX-License-Identifier: Apache-2.0
// Runs a two-process (or n-process) scenario for the UCX transport's tests
// without MPI: run_pair forks two children joined by a socketpair (the
// out-of-band channel their addresses cross), each of which runs
// `body(role, link)` and exits 0 on success; run_group forks n, every two
// joined by a socketpair. The parent never creates an anydev object, so
// each child starts UCX and anydev afresh. Every run is bounded: a child
// still alive after the deadline is killed and the run fails.
//
// Each child leads a process group of its own and dies with the parent
// (start_child). Tests stop children with SIGSTOP; were they in the test
// binary's group, that group becoming orphaned (the shell that started the
// suite in the background exiting) would make the kernel send the whole
// group SIGHUP and SIGCONT, resuming a stopped child in mid-test. A group
// whose parent lives in another group of the session is never orphaned
// while that parent lives.
#ifndef ANYDEV_TESTS_DISTRIBUTED_COMM_HARNESS_H_
#define ANYDEV_TESTS_DISTRIBUTED_COMM_HARNESS_H_

#include <signal.h>
#include <sys/prctl.h>
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

// In a new child, first: its own process group, and SIGKILL when the parent
// (the test binary) dies, so that no child outlives an interrupted run.
inline void start_child(pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(3);  // the parent died before prctl
}

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

// Forks roles 0 .. n-1, each joined to every other by a socketpair
// (links[r] leads to role r; links[role] is unused), and waits up to
// `limit` for all; a child still running then is SIGKILLed and reported as
// killed by the harness (signal = SIGKILL, exit_code = -2).
inline std::vector<ChildEnd> run_group(
    int n, const std::function<int(int, const std::vector<Link>&)>& body,
    std::chrono::seconds limit = std::chrono::seconds(45)) {
  // fds[i][j]: role i's end of the pair joining i and j.
  std::vector<std::vector<int>> fds(n, std::vector<int>(n, -1));
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      int pair[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) return {};
      fds[i][j] = pair[0];
      fds[j][i] = pair[1];
    }
  }
  const auto close_all_but = [&](int keep) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i != keep && fds[i][j] >= 0) ::close(fds[i][j]);
      }
    }
  };
  std::fflush(nullptr);
  std::vector<pid_t> pids(n);
  const pid_t parent = ::getpid();
  for (int role = 0; role < n; ++role) {
    pids[role] = ::fork();
    if (pids[role] == 0) {
      start_child(parent);
      close_all_but(role);
      std::vector<Link> links(n);
      for (int j = 0; j < n; ++j) links[j].fd = fds[role][j];
      int code = 1;
      try {
        code = body(role, links);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "role %d: uncaught: %s\n", role, e.what());
      }
      std::fflush(nullptr);
      ::_exit(code);
    }
  }
  close_all_but(-1);
  std::vector<ChildEnd> ends(n);
  std::vector<bool> done(n, false);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (int left = n; left > 0;) {
    for (int role = 0; role < n; ++role) {
      if (done[role]) continue;
      int status = 0;
      if (::waitpid(pids[role], &status, WNOHANG) == pids[role]) {
        done[role] = true;
        --left;
        if (WIFEXITED(status)) ends[role].exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) ends[role].signal = WTERMSIG(status);
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      for (int role = 0; role < n; ++role) {
        if (done[role]) continue;
        ::kill(pids[role], SIGKILL);
        ::waitpid(pids[role], nullptr, 0);
        ends[role].exit_code = -2;
        ends[role].signal = SIGKILL;
        std::fprintf(stderr, "role %d did not finish within the limit: killed\n", role);
        done[role] = true;
        --left;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return ends;
}

// Two roles: body(role, the link to the other).
inline std::vector<ChildEnd> run_pair(const std::function<int(int, const Link&)>& body,
                                      std::chrono::seconds limit = std::chrono::seconds(45)) {
  return run_group(
      2, [&](int role, const std::vector<Link>& links) { return body(role, links[1 - role]); },
      limit);
}

}  // namespace anydev_test

#endif  // ANYDEV_TESTS_DISTRIBUTED_COMM_HARNESS_H_
