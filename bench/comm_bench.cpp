// SPDX-License-Identifier: Apache-2.0
// anydev-comm-bench: the UCX transport's bandwidth between two processes on
// this machine beside ucx_perftest's, in the same run, over the UCX_TLS of
// the environment (docs/performance.md, "UCX transfers"). Prints a
// Markdown table.
//
//   send/recv  n tagged messages of one size in flight at once, the receives
//              posted first; timed on the sender from the first enqueue to
//              the receiver's acknowledgement (ucx_perftest -t tag_bw)
//   put        n puts into the peer's exposed buffer after 2 untimed ones,
//              timed until the last is in the peer's memory (ucx_perftest
//              -t ucp_put_bw -w 2)
//   put (UCX-allocated target)  the same into memory the peer allocated
//              through UCX (Communicator::expose_new), as ucx_perftest's
//              buffers are; "source and target": the source as well
//   staged     send/recv of device buffers through the staging path
//              (ANYDEV_UCX_FORCE_STAGING=1 on the cpu backend), beside the
//              host path's figure
//   latency    half a ping-pong of 8 bytes, each side synchronizing on
//              every message (ucx_perftest -t tag_lat)
//
// Usage: anydev-comm-bench [ucx_perftest path [rows [repeats]]]: the tool
// (default ucx_perftest on PATH), the rows to run: those whose name
// contains `rows` ("send", "put", "allocated", "staged", "latency"; default all), and
// how many times to measure each figure, on both sides, keeping the best
// (default 1; on a shared machine single runs vary widely). The two anydev
// processes are forks of this one, joined by a socketpair; ucx_perftest
// runs as a server and a client on 127.0.0.1.
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "anydev/anydev.hpp"
#include "anydev/comm.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kSizes[] = {std::size_t{64} << 10, std::size_t{1} << 20,
                                  std::size_t{16} << 20, std::size_t{256} << 20};
constexpr std::size_t kBytesPerSize = std::size_t{1} << 30;
constexpr int kLatencyRounds = 2000;
constexpr int kLatencyWarmup = 100;  // as ucx_perftest's -w below

enum class Op { send, put, put_allocated, put_allocated_both, staged, latency };

// Iterations for `bytes`-sized messages: about kBytesPerSize in all (a
// quarter of it for puts, which UCX emulates slowly over tcp), at least 4.
int iterations(std::size_t bytes, bool put) {
  return static_cast<int>(std::max<std::size_t>(4, kBytesPerSize / (put ? 4 : 1) / bytes));
}

// The out-of-band channel: whole buffers over a socket, length first.
void put_bytes(int fd, const std::vector<std::uint8_t>& bytes) {
  const std::uint64_t n = bytes.size();
  if (::write(fd, &n, sizeof n) != sizeof n) std::_Exit(3);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(fd, bytes.data() + done, n - done);
    if (w <= 0) std::_Exit(3);
    done += static_cast<std::size_t>(w);
  }
}
std::vector<std::uint8_t> get_bytes(int fd) {
  std::uint64_t n = 0;
  std::vector<std::uint8_t> out;
  if (::read(fd, &n, sizeof n) != sizeof n) std::_Exit(3);
  out.resize(n);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = ::read(fd, out.data() + done, n - done);
    if (r <= 0) std::_Exit(3);
    done += static_cast<std::size_t>(r);
  }
  return out;
}

// One side of a measurement of `op` at `bytes`: role 0 drives and returns
// the figure (MB/s, or microseconds for latency); role 1 returns 0.
double measure(Op op, int role, int fd, const anydev::DeviceContext& ctx,
               const anydev::Communicator& comm, int peer, std::size_t bytes) {
  const bool put = op == Op::put || op == Op::put_allocated || op == Op::put_allocated_both;
  const int n = op == Op::latency ? kLatencyRounds : iterations(bytes, put);
  const auto ack = [&] { put_bytes(fd, {1}); };
  const auto wait = [&] { get_bytes(fd); };
  if (op == Op::latency) {
    auto b = ctx.enqueue_create_host_buffer<std::uint8_t>(bytes);
    ctx.synchronize();
    ack();
    wait();
    const auto round = [&] {
      if (role == 0) {
        comm.enqueue_send(b, peer, 1);
        comm.enqueue_recv(b, peer, 2);
      } else {
        comm.enqueue_recv(b, peer, 1);
        ctx.synchronize();
        comm.enqueue_send(b, peer, 2);
      }
      ctx.synchronize();
    };
    // Untimed rounds first, as ucx_perftest's -w: the first message on an
    // endpoint sets up its connection (over tcp a connect and UCX's wireup).
    for (int i = 0; i < kLatencyWarmup; ++i) round();
    const auto start = Clock::now();
    for (int i = 0; i < n; ++i) round();
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / (2.0 * n);
  }
  if (put) {
    auto b = ctx.enqueue_create_host_buffer<std::uint8_t>(bytes);
    b.enqueue_fill(static_cast<std::uint8_t>(role));
    ctx.synchronize();
    if (role == 1 && op != Op::put) {
      auto made = comm.expose_new<std::uint8_t>(bytes);
      made.buffer.enqueue_fill(1);
      ctx.synchronize();
      put_bytes(fd, made.region.key());
      wait();  // role 0 has finished
      return 0;
    }
    if (role == 1) {
      auto region = comm.expose(b);
      put_bytes(fd, region.key());
      wait();  // role 0 has finished
      return 0;
    }
    auto remote = comm.import_region(peer, get_bytes(fd));
    if (op == Op::put_allocated_both) {
      auto made = comm.expose_new<std::uint8_t>(bytes);
      made.buffer.enqueue_fill(0);
      b = made.buffer;
    }
    // Two untimed puts first, as ucx_perftest's -w 2: the first touch of
    // the peer's mapped pages is not part of the bandwidth.
    for (int i = 0; i < 2; ++i) comm.enqueue_put(b, remote);
    ctx.synchronize();
    const auto start = Clock::now();
    for (int i = 0; i < n; ++i) comm.enqueue_put(b, remote);
    ctx.synchronize();
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    ack();
    return static_cast<double>(bytes) * n / s / 1e6;
  }
  // send/recv, host buffers or (staged) device buffers.
  auto run = [&](auto b) {
    b.enqueue_fill(static_cast<std::uint8_t>(role));
    ctx.synchronize();
    if (role == 1) {
      for (int i = 0; i < n; ++i) comm.enqueue_recv(b, peer, 3);
      ack();
      ctx.synchronize();
      ack();
      return 0.0;
    }
    wait();  // the receives are posted
    const auto start = Clock::now();
    for (int i = 0; i < n; ++i) comm.enqueue_send(b, peer, 3);
    ctx.synchronize();
    wait();
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    return static_cast<double>(bytes) * n / s / 1e6;
  };
  if (op == Op::staged) return run(ctx.enqueue_create_buffer<std::uint8_t>(bytes));
  return run(ctx.enqueue_create_host_buffer<std::uint8_t>(bytes));
}

// Forks the two anydev processes for `op` over `sizes`; role 0's figures.
std::vector<double> run_anydev(Op op, const std::vector<std::size_t>& sizes) {
  int fds[2];
  int results[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0 || ::pipe(results) != 0) std::exit(3);
  std::fflush(nullptr);
  pid_t pids[2];
  for (int role = 0; role < 2; ++role) {
    pids[role] = ::fork();
    if (pids[role] != 0) continue;
    ::close(fds[1 - role]);
    ::close(results[0]);
    if (op == Op::staged) ::setenv("ANYDEV_UCX_FORCE_STAGING", "1", 1);
    try {
      anydev::DeviceContext ctx(0, "cpu");
      anydev::Communicator comm(ctx);
      put_bytes(fds[role], comm.address());
      const int peer = comm.connect(get_bytes(fds[role]));
      for (std::size_t bytes : sizes) {
        const double figure = measure(op, role, fds[role], ctx, comm, peer, bytes);
        if (role == 0 && ::write(results[1], &figure, sizeof figure) != sizeof figure) {
          std::_Exit(3);
        }
      }
      put_bytes(fds[role], {1});  // neither leaves while the other transfers
      get_bytes(fds[role]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "role %d: %s\n", role, e.what());
      std::fflush(nullptr);
      std::_Exit(1);
    }
    std::fflush(nullptr);
    std::_Exit(0);
  }
  ::close(fds[0]);
  ::close(fds[1]);
  ::close(results[1]);
  std::vector<double> out;
  double figure = 0;
  while (out.size() < sizes.size() && ::read(results[0], &figure, sizeof figure) == sizeof figure) {
    out.push_back(figure);
  }
  ::close(results[0]);
  for (int role = 0; role < 2; ++role) {
    int status = 0;
    ::waitpid(pids[role], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "anydev role %d failed (wait status 0x%x)\n", role, status);
    }
  }
  out.resize(sizes.size(), 0.0);
  return out;
}

pid_t spawn(const std::vector<std::string>& args, const char* output) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  if (::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// ucx_perftest's figure for `test` at `bytes`: its final overall bandwidth
// (printed in MiB/s, returned in MB/s) or latency (us); 0 when it failed.
double run_perftest_once(const std::string& tool, const char* test, std::size_t bytes, int port,
                         bool error_handling) {
  const bool latency = std::string(test) == "tag_lat";
  const bool put = std::string(test) == "ucp_put_bw";
  const std::string n = std::to_string(latency ? kLatencyRounds : iterations(bytes, put));
  const std::string w = std::to_string(latency ? kLatencyWarmup : 2);
  std::vector<std::string> args = {tool, "-t", test, "-s", std::to_string(bytes), "-n",
                                   n,    "-w", w,    "-p", std::to_string(port)};
  if (error_handling) args.push_back("-e");
  char server_log[] = "/tmp/anydev-comm-bench-server-XXXXXX";
  char client_log[] = "/tmp/anydev-comm-bench-client-XXXXXX";
  ::close(::mkstemp(server_log));
  ::close(::mkstemp(client_log));
  const pid_t server = spawn(args, server_log);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  args.insert(args.begin() + 1, "127.0.0.1");
  const pid_t client = spawn(args, client_log);
  if (client > 0) ::waitpid(client, nullptr, 0);
  if (server > 0) ::waitpid(server, nullptr, 0);
  double figure = 0;
  std::ifstream log(client_log);
  std::string line;
  while (std::getline(log, line)) {
    if (line.rfind("Final:", 0) != 0) continue;
    std::istringstream fields(line);
    std::string f;
    std::vector<std::string> v;
    while (fields >> f) v.push_back(f);
    // Final: iterations, latency 50%ile, average, overall, bandwidth
    // average, overall (MiB/s), message rate average, overall.
    if (v.size() >= 7) {
      figure = latency ? std::atof(v[4].c_str()) : std::atof(v[6].c_str()) * 1.048576;
    }
  }
  ::unlink(server_log);
  ::unlink(client_log);
  return figure;
}

// Whether ucx_perftest's endpoints ask for peer failure detection (-e), as
// anydev's do unless ANYDEV_UCX_PEER_FAILURE=0: over tcp UCX then moves
// rendezvous data through bounce buffers instead of zero-copy puts, on both
// sides alike. Where the transports refuse it (shared memory) ucx_perftest
// fails at once and runs without, as anydev connects without. -1: not known
// yet.
int g_perftest_error_handling = -1;

// ucx_perftest's figure for `test` at `bytes` (see run_perftest_once); uses
// and advances `*port`.
double run_perftest(const std::string& tool, const char* test, std::size_t bytes, int* port) {
  if (g_perftest_error_handling == -1) {
    const char* mode = std::getenv("ANYDEV_UCX_PEER_FAILURE");
    if (mode != nullptr && std::string(mode) == "0") g_perftest_error_handling = 0;
  }
  if (g_perftest_error_handling != 0) {
    const double figure = run_perftest_once(tool, test, bytes, (*port)++, true);
    if (figure > 0 || g_perftest_error_handling == 1) {
      if (figure > 0) g_perftest_error_handling = 1;
      return figure;
    }
  }
  const double figure = run_perftest_once(tool, test, bytes, (*port)++, false);
  if (figure > 0) g_perftest_error_handling = 0;
  return figure;
}

std::string cpu_model() {
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

std::string size_name(std::size_t bytes) {
  return bytes >= (std::size_t{1} << 20) ? std::to_string(bytes >> 20) + " MiB"
                                         : std::to_string(bytes >> 10) + " KiB";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string tool = argc > 1 ? argv[1] : "ucx_perftest";
  const std::string only = argc > 2 ? argv[2] : "";
  const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 1;
  const char* tls = std::getenv("UCX_TLS");
  std::printf("CPU: %s, %u hardware threads; UCX_TLS=%s; best of %d\n\n", cpu_model().c_str(),
              static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN)), tls != nullptr ? tls : "",
              repeats);
  const std::vector<std::size_t> sizes(std::begin(kSizes), std::end(kSizes));
  std::printf(
      "| transfer | size | anydev (MB/s) | ucx_perftest (MB/s) | anydev / ucx_perftest |\n");
  std::printf("|---|---|---|---|---|\n");
  int port = 13400 + static_cast<int>(::getpid() % 500);
  struct Row {
    const char* name;
    Op op;
    const char* test;
  };
  const Row rows[] = {
      {"send/recv (host)", Op::send, "tag_bw"},
      {"put (host)", Op::put, "ucp_put_bw"},
      {"put (host, UCX-allocated target)", Op::put_allocated, "ucp_put_bw"},
      {"put (UCX-allocated source and target)", Op::put_allocated_both, "ucp_put_bw"},
      {"send/recv (device staged)", Op::staged, "tag_bw"}};
  // Rows with the same ucx_perftest test share its figures.
  std::map<std::string, double> perftest;
  const auto perftest_key = [&](const Row& row, std::size_t i) {
    return std::string(row.test) + "/" + std::to_string(sizes[i]);
  };
  for (const Row& row : rows) {
    if (std::string(row.name).find(only) == std::string::npos) continue;
    // One pass of each side in turn, `repeats` times, so that both see the
    // same phases of a shared machine's load; the best of each is kept.
    std::vector<double> mine(sizes.size(), 0.0);
    std::vector<bool> known(sizes.size(), false);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      known[i] = perftest.count(perftest_key(row, i)) != 0;
    }
    for (int r = 0; r < repeats; ++r) {
      const std::vector<double> run = run_anydev(row.op, sizes);
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        mine[i] = std::max(mine[i], run[i]);
        if (known[i]) continue;
        double& theirs = perftest[perftest_key(row, i)];
        theirs = std::max(theirs, run_perftest(tool, row.test, sizes[i], &port));
      }
    }
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const double theirs = perftest[perftest_key(row, i)];
      std::printf("| %s | %s | %.0f | %.0f | %.2f |\n", row.name, size_name(sizes[i]).c_str(),
                  mine[i], theirs, theirs > 0 ? mine[i] / theirs : 0.0);
      std::fflush(stdout);
    }
  }
  const auto endpoints = [] {
    std::printf("\nucx_perftest's endpoints: %s\n",
                g_perftest_error_handling == 1   ? "with peer failure detection (-e), as anydev's"
                : g_perftest_error_handling == 0 ? "without peer failure detection, as anydev's"
                                                 : "unknown (no run succeeded)");
  };
  if (std::string("latency").find(only) == std::string::npos) {
    endpoints();
    return 0;
  }
  double mine = 0;
  double theirs = 0;
  for (int r = 0; r < repeats; ++r) {
    const double a = run_anydev(Op::latency, {8})[0];
    const double b = run_perftest(tool, "tag_lat", 8, &port);
    if (a > 0 && (mine == 0 || a < mine)) mine = a;
    if (b > 0 && (theirs == 0 || b < theirs)) theirs = b;
  }
  std::printf(
      "\n| latency, 8 bytes (us, half a round trip) | anydev | ucx_perftest | difference |\n");
  std::printf("|---|---|---|---|\n| send/recv | %.1f | %.1f | %.1f |\n", mine, theirs,
              mine - theirs);
  endpoints();
  return 0;
}
