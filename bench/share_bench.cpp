// SPDX-License-Identifier: Apache-2.0
// anydev-share-bench: sharing between processes on the cpu backend, each
// figure beside its baseline in the same run (docs/performance.md, "Sharing
// between processes"). Prints a Markdown table.
//
//   hand-off   export + send + import + release in the consumer + its
//              acknowledgement, for 4 KiB, 1 MiB and 64 MiB host buffers
//              (median of the passes); baseline: the same with the OS alone
//              (memfd_create + ftruncate + mmap, SCM_RIGHTS, mmap + munmap)
//   read       the consumer reads (sums) a 256 MiB imported buffer, and the
//              same size of its own memory: best of five passes each
//   ring       10^4 hand-overs of a 1 MiB buffer between two processes,
//              ordered only by interprocess events (as tests/sharing);
//              baseline: the same bytes passed with memset/memcpy and the
//              host waiting at every step
//
// The consumer is this program again (--consumer ROLE FD).
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void put(int socket, std::int64_t value) {
  if (::send(socket, &value, sizeof value, MSG_NOSIGNAL) != sizeof value) std::exit(3);
}
std::int64_t get(int socket) {
  std::int64_t value = 0;
  std::size_t got = 0;
  while (got < sizeof value) {
    const ssize_t n = ::recv(socket, reinterpret_cast<char*>(&value) + got, sizeof value - got, 0);
    if (n <= 0) return -1;
    got += static_cast<std::size_t>(n);
  }
  return value;
}

// The raw baseline's fd passing.
// One byte of data carrying room for one fd, for SCM_RIGHTS both ways.
struct FdMessage {
  char byte = 0;
  iovec part{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr header{};
  FdMessage() {
    header.msg_iov = &part;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;
};

void send_fd(int socket, int fd) {
  FdMessage message;
  cmsghdr* cmsg = CMSG_FIRSTHDR(&message.header);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
  if (::sendmsg(socket, &message.header, 0) != 1) std::exit(3);
}
int receive_fd(int socket) {
  FdMessage message;
  if (::recvmsg(socket, &message.header, MSG_CMSG_CLOEXEC) != 1) return -1;
  const cmsghdr* cmsg = CMSG_FIRSTHDR(&message.header);
  if (cmsg == nullptr || cmsg->cmsg_type != SCM_RIGHTS) return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
  return fd;
}

std::uint64_t sum(const void* data, std::size_t bytes) {
  const auto* words = static_cast<const std::uint64_t*>(data);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < bytes / 8; ++i) total += words[i];
  return total;
}

// ---- the consumer ----

int consume_handles(int socket) {
  anydev::DeviceContext ctx(0, "cpu");
  for (;;) {
    const std::int64_t what = get(socket);
    if (what < 0) return 0;
    if (what == 0) {  // anydev
      anydev::ShareHandle handle = anydev::ShareHandle::receive(socket);
      { auto buffer = ctx.import_host_buffer<std::uint8_t>(handle); }
      handle.close();
    } else {  // raw: `what` is the length
      const int fd = receive_fd(socket);
      void* memory = ::mmap(nullptr, static_cast<std::size_t>(what), PROT_READ | PROT_WRITE,
                            MAP_SHARED, fd, 0);
      ::munmap(memory, static_cast<std::size_t>(what));
      ::close(fd);
    }
    put(socket, 1);
  }
}

int consume_read(int socket) {
  anydev::DeviceContext ctx(0, "cpu");
  anydev::ShareHandle handle = anydev::ShareHandle::receive(socket);
  auto shared = ctx.import_host_buffer<std::uint8_t>(handle);
  std::vector<std::uint8_t> own(shared.size(), 1);
  double best_shared = 1e9, best_own = 1e9;
  std::uint64_t check = 0;
  for (int pass = 0; pass < 5; ++pass) {
    auto start = Clock::now();
    check += sum(shared.unsafe_ptr(), shared.size());
    best_shared = std::min(best_shared, seconds_since(start));
    start = Clock::now();
    check += sum(own.data(), own.size());
    best_own = std::min(best_own, seconds_since(start));
  }
  put(socket, static_cast<std::int64_t>(best_shared * 1e9));
  put(socket, static_cast<std::int64_t>(best_own * 1e9));
  put(socket, static_cast<std::int64_t>(check & 0x7fffffff));
  return 0;
}

int consume_ring(int socket) {
  anydev::DeviceContext ctx(0, "cpu");
  anydev::ShareHandle buffer_handle = anydev::ShareHandle::receive(socket);
  anydev::ShareHandle full_handle = anydev::ShareHandle::receive(socket);
  const std::int64_t rounds = get(socket);
  auto shared = ctx.import_buffer<std::uint32_t>(buffer_handle);
  anydev::DeviceEvent full = ctx.import_event(full_handle);
  anydev::DeviceEvent empty = ctx.create_shareable_event();
  empty.export_handle().send(socket);
  auto local = ctx.enqueue_create_host_buffer<std::uint32_t>(shared.size());
  anydev::DeviceStream stream = ctx.stream();
  for (std::int64_t round = 1; round <= rounds; ++round) {
    if (get(socket) != round) return 1;
    stream.enqueue_wait_for(full);
    ctx.enqueue_copy(local, shared);
    stream.record_event(empty);
    put(socket, round);
  }
  ctx.synchronize();
  return 0;
}

int consume_raw_ring(int socket) {
  const int fd = receive_fd(socket);
  const std::int64_t bytes = get(socket);
  const std::int64_t rounds = get(socket);
  void* memory =
      ::mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  std::vector<std::uint8_t> local(static_cast<std::size_t>(bytes));
  for (std::int64_t round = 1; round <= rounds; ++round) {
    if (get(socket) != round) return 1;
    std::memcpy(local.data(), memory, local.size());
    put(socket, round);
  }
  return 0;
}

// ---- the producer ----

struct Consumer {
  pid_t pid = -1;
  int socket = -1;
  Consumer(const char* self, const char* role) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) std::exit(3);
    socket = pair[0];
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pair[1], 3);
    char* argv[] = {const_cast<char*>(self), const_cast<char*>("--consumer"),
                    const_cast<char*>(role), const_cast<char*>("3"), nullptr};
    if (::posix_spawn(&pid, self, &actions, nullptr, argv, environ) != 0) std::exit(3);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pair[1]);
  }
  ~Consumer() {
    ::close(socket);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::string cpu_model() {
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  while (std::getline(info, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--consumer") {
    const std::string role = argv[2];
    const int socket = std::atoi(argv[3]);
    if (role == "handles") return consume_handles(socket);
    if (role == "read") return consume_read(socket);
    if (role == "ring") return consume_ring(socket);
    if (role == "raw_ring") return consume_raw_ring(socket);
    return 2;
  }
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 3;
  self[n] = '\0';
  anydev::DeviceContext ctx(0, "cpu");
  std::printf("CPU: %s, %u hardware threads\n\n", cpu_model().c_str(),
              static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN)));
  std::printf("| measure | anydev | baseline | anydev / baseline |\n|---|---|---|---|\n");
  {
    Consumer consumer(self, "handles");
    for (std::size_t bytes : {std::size_t{4} << 10, std::size_t{1} << 20, std::size_t{64} << 20}) {
      const int passes = bytes >= (std::size_t{64} << 20) ? 21 : 201;
      std::vector<double> anydev_times, raw_times;
      for (int pass = 0; pass < passes; ++pass) {
        auto start = Clock::now();
        {
          auto buffer = ctx.create_shareable_host_buffer<std::uint8_t>(bytes);
          put(consumer.socket, 0);
          buffer.export_handle().send(consumer.socket);
          if (get(consumer.socket) != 1) return 4;
        }
        anydev_times.push_back(seconds_since(start));
        start = Clock::now();
        {
          const int fd = ::memfd_create("raw", MFD_CLOEXEC);
          if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) return 4;
          void* memory =
              ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
          put(consumer.socket, static_cast<std::int64_t>(bytes));
          send_fd(consumer.socket, fd);
          if (get(consumer.socket) != 1) return 4;
          ::munmap(memory, bytes);
          ::close(fd);
        }
        raw_times.push_back(seconds_since(start));
      }
      const double a = median(anydev_times) * 1e6, r = median(raw_times) * 1e6;
      std::printf("| hand-off of %zu KiB (us, median of %d) | %.1f | %.1f | %.2f |\n", bytes >> 10,
                  passes, a, r, a / r);
    }
  }
  {
    constexpr std::size_t kBytes = std::size_t{256} << 20;
    auto buffer = ctx.create_shareable_host_buffer<std::uint8_t>(kBytes);
    ctx.enqueue_memset(buffer, std::uint8_t{1});
    ctx.synchronize();
    Consumer consumer(self, "read");
    buffer.export_handle().send(consumer.socket);
    const double shared_ns = static_cast<double>(get(consumer.socket));
    const double own_ns = static_cast<double>(get(consumer.socket));
    get(consumer.socket);
    std::printf(
        "| consumer reads 256 MiB: shared vs its own memory (GB/s) | %.2f | %.2f | %.3f |\n",
        kBytes / shared_ns, kBytes / own_ns, own_ns / shared_ns);
  }
  {
    constexpr std::int64_t kRounds = 10000;
    constexpr std::size_t kCount = (std::size_t{1} << 18) + 1024;  // past inline copies
    auto shared = ctx.create_shareable_buffer<std::uint32_t>(kCount);
    anydev::DeviceEvent full = ctx.create_shareable_event();
    Consumer consumer(self, "ring");
    shared.export_handle().send(consumer.socket);
    full.export_handle().send(consumer.socket);
    put(consumer.socket, kRounds);
    anydev::ShareHandle empty_handle = anydev::ShareHandle::receive(consumer.socket);
    anydev::DeviceEvent empty = ctx.import_event(empty_handle);
    anydev::DeviceStream stream = ctx.stream();
    auto start = Clock::now();
    for (std::int64_t round = 1; round <= kRounds; ++round) {
      stream.enqueue_wait_for(empty);
      ctx.enqueue_memset(shared, static_cast<std::uint32_t>(round));
      stream.record_event(full);
      put(consumer.socket, round);
      if (get(consumer.socket) != round) return 5;
    }
    ctx.synchronize();
    const double ring = seconds_since(start);

    Consumer raw(self, "raw_ring");
    const std::size_t bytes = kCount * 4;
    const int fd = ::memfd_create("raw", MFD_CLOEXEC);
    if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) return 5;
    void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    send_fd(raw.socket, fd);
    put(raw.socket, static_cast<std::int64_t>(bytes));
    put(raw.socket, kRounds);
    start = Clock::now();
    for (std::int64_t round = 1; round <= kRounds; ++round) {
      std::memset(memory, static_cast<int>(round), bytes);
      put(raw.socket, round);
      if (get(raw.socket) != round) return 5;
    }
    const double raw_ring = seconds_since(start);
    ::munmap(memory, bytes);
    ::close(fd);
    std::printf("| ring of 10^4 hand-overs of 1 MiB (hand-overs/s) | %.0f | %.0f | %.2f |\n",
                kRounds / ring, kRounds / raw_ring, raw_ring / ring);
  }
  return 0;
}
