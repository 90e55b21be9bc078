// SPDX-License-Identifier: Apache-2.0
// The second process of the sharing tests: this same program, started again
// with `--share-child ROLE FD` (FD: its end of a socketpair), runs one role
// and exits 0 when every check held, else 1 after printing why. The backend
// under test comes from ANYDEV_SHARE_BACKEND (default cpu) in both
// processes. Not thread-safe (one child per Child object).
#ifndef ANYDEV_TESTS_SHARING_SHARE_CHILD_H_
#define ANYDEV_TESTS_SHARING_SHARE_CHILD_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace anydev::share_test {

// The backend the suite runs on.
std::string backend_under_test();

// A started child: its pid and the parent's end of the socket.
class Child {
 public:
  explicit Child(const std::string& role);
  ~Child();  // kills the child if it still runs, closes the socket
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  int socket() const { return socket_; }
  pid_t pid() const { return pid_; }
  // Waits (at most `seconds`) for the child to exit; its exit status, or -1
  // when it was still running (then killed) or died of a signal.
  int wait(int seconds = 60);
  void kill_now();

 private:
  pid_t pid_ = -1;
  int socket_ = -1;
};

// Small control messages beside the handles on the same socket.
void send_value(int socket, std::int64_t value);
std::int64_t receive_value(int socket);  // -1 when the peer closed the socket

// The child's entry: runs ROLE on FD; the process's exit status.
int run_child(const std::string& role, int socket);

}  // namespace anydev::share_test

#endif  // ANYDEV_TESTS_SHARING_SHARE_CHILD_H_
