// SPDX-License-Identifier: Apache-2.0
// Buffers and events shared between two real processes (docs/sharing.md):
// exact bytes both ways, views, an exporter that lets go while the importer
// reads, a ring of hand-overs ordered only by interprocess events, SIGKILL
// of either side, and every kind of bad handle. The backend is
// ANYDEV_SHARE_BACKEND (default cpu); emulator runs set it and the
// emulator's environment (tests/emulators/*).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "anydev/anydev.hpp"
#include "gtest/gtest.h"
#include "share_child.h"

extern char** environ;

namespace anydev::share_test {

std::string backend_under_test() {
  const char* name = std::getenv("ANYDEV_SHARE_BACKEND");
  return name != nullptr && *name != '\0' ? name : "cpu";
}

namespace {

std::string g_self;  // this program, for the children

// ANYDEV_SHARE_RING_ROUNDS: 1 to 1000000 (default 10000); anything else
// ends the program with status 2, naming the value.
std::int64_t ring_rounds() {
  const char* text = std::getenv("ANYDEV_SHARE_RING_ROUNDS");
  if (text == nullptr) return 10000;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || value < 1 || value > 1000000) {
    std::fprintf(stderr, "ANYDEV_SHARE_RING_ROUNDS='%s': expected a count from 1 to 1000000\n",
                 text);
    std::exit(2);
  }
  return value;
}

DeviceContext context(int device = 0) { return DeviceContext(device, backend_under_test()); }

bool read_all(int fd, void* data, std::size_t bytes) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::read(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

bool write_all(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

std::vector<std::uint32_t> read_back(const DeviceContext& ctx,
                                     const DeviceBuffer<std::uint32_t>& b) {
  std::vector<std::uint32_t> out(b.size());
  ctx.enqueue_copy(std::span<std::uint32_t>(out), b);
  ctx.synchronize();
  return out;
}

std::uint32_t pattern(std::size_t i) { return static_cast<std::uint32_t>(i * 3 + 1); }

// Resident memory of this process (anonymous, file and shared), in bytes.
std::size_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

#define CHILD_CHECK(condition, message)                                        \
  do {                                                                         \
    if (!(condition)) {                                                        \
      std::fprintf(stderr, "share child: %s\n", std::string(message).c_str()); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

// ---- the child's roles ----

// Imports the buffer the parent sent (kind: the next value, 0 host, 1
// device), checks pattern(i) everywhere, then writes 0xC0FFEE over it.
int consumer_bytes(int socket) {
  ShareHandle handle = ShareHandle::receive(socket);
  const std::int64_t kind = receive_value(socket);
  DeviceContext ctx = context();
  if (kind == 0) {
    HostBuffer<std::uint32_t> buffer = ctx.import_host_buffer<std::uint32_t>(handle);
    handle.close();
    for (std::size_t i = 0; i < buffer.size(); ++i) {
      CHILD_CHECK(buffer[i] == pattern(i),
                  "host element " + std::to_string(i) + " is " + std::to_string(buffer[i]));
    }
    ctx.enqueue_memset(buffer, 0xC0FFEEu);
    ctx.synchronize();
  } else {
    DeviceBuffer<std::uint32_t> buffer = ctx.import_buffer<std::uint32_t>(handle);
    handle.close();
    const std::vector<std::uint32_t> seen = read_back(ctx, buffer);
    for (std::size_t i = 0; i < seen.size(); ++i) {
      CHILD_CHECK(seen[i] == pattern(i),
                  "device element " + std::to_string(i) + " is " + std::to_string(seen[i]));
    }
    ctx.enqueue_memset(buffer, 0xC0FFEEu);
    ctx.synchronize();
  }
  send_value(socket, 1);
  return 0;
}

// Imports a view: checks its size (the next value) and its elements.
int consumer_view(int socket) {
  ShareHandle handle = ShareHandle::receive(socket);
  const std::int64_t first = receive_value(socket);
  const std::int64_t count = receive_value(socket);
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> view = ctx.import_buffer<std::uint32_t>(handle);
  CHILD_CHECK(static_cast<std::int64_t>(view.size()) == count,
              "the view has " + std::to_string(view.size()) + " elements");
  const std::vector<std::uint32_t> seen = read_back(ctx, view);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    CHILD_CHECK(seen[i] == pattern(static_cast<std::size_t>(first) + i),
                "view element " + std::to_string(i) + " is " + std::to_string(seen[i]));
  }
  send_value(socket, 1);
  return 0;
}

// Imports, says so, waits until the parent has dropped everything, reads.
int late_reader(int socket) {
  ShareHandle handle = ShareHandle::receive(socket);
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> buffer = ctx.import_buffer<std::uint32_t>(handle);
  handle.close();
  send_value(socket, 1);
  CHILD_CHECK(receive_value(socket) == 2, "no go from the parent");
  const std::vector<std::uint32_t> seen = read_back(ctx, buffer);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    CHILD_CHECK(seen[i] == pattern(i), "element " + std::to_string(i) + " is " +
                                           std::to_string(seen[i]) + " after the exporter let go");
  }
  send_value(socket, 3);
  return 0;
}

// The consumer of the ring (see RingOfHandOversOrderedOnlyByEvents).
int ring_consumer(int socket) {
  ShareHandle buffer_handle = ShareHandle::receive(socket);
  ShareHandle full_handle = ShareHandle::receive(socket);
  const std::int64_t rounds = receive_value(socket);
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> shared = ctx.import_buffer<std::uint32_t>(buffer_handle);
  DeviceEvent full = ctx.import_event(full_handle);
  DeviceEvent empty = ctx.create_shareable_event();
  empty.export_handle().send(socket);
  HostBuffer<std::uint32_t> local = ctx.enqueue_create_host_buffer<std::uint32_t>(shared.size());
  DeviceStream stream = ctx.stream();
  for (std::int64_t round = 1; round <= rounds; ++round) {
    CHILD_CHECK(receive_value(socket) == round, "the producer skipped a round");
    stream.enqueue_wait_for(full);
    ctx.enqueue_copy(local, shared);
    stream.record_event(empty);
    // Before this process knows its copy is done: only `empty` keeps the
    // producer's next fill behind it.
    send_value(socket, round);
    ctx.synchronize();
    const auto value = static_cast<std::uint32_t>(round);
    for (std::size_t i = 0; i < local.size(); ++i) {
      CHILD_CHECK(local[i] == value, "round " + std::to_string(round) + ": element " +
                                         std::to_string(i) + " is " + std::to_string(local[i]));
    }
  }
  send_value(socket, -2);
  return 0;
}

// Exports a filled buffer and an event recorded behind long work, then
// waits to be killed.
int exporter_killed(int socket) {
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> shared = ctx.create_shareable_buffer<std::uint32_t>(4096);
  ctx.enqueue_memset(shared, 0x5A5A5A5Au);
  ctx.synchronize();
  shared.export_handle().send(socket);
  DeviceBuffer<std::uint8_t> busy = ctx.enqueue_create_buffer<std::uint8_t>(std::size_t{64} << 20);
  for (int i = 0; i < 64; ++i) ctx.enqueue_memset(busy, static_cast<std::uint8_t>(i));
  DeviceEvent done = ctx.create_shareable_event();
  ctx.stream().record_event(done);
  done.export_handle().send(socket);
  send_value(socket, 1);
  ::pause();
  return 0;
}

// Imports, touches every page, says so, waits to be killed.
int importer_killed(int socket) {
  ShareHandle handle = ShareHandle::receive(socket);
  DeviceContext ctx = context();
  HostBuffer<std::uint8_t> buffer = ctx.import_host_buffer<std::uint8_t>(handle);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < buffer.size(); i += 4096) sum += buffer[i];
  send_value(socket, static_cast<std::int64_t>(sum));
  ::pause();
  return 0;
}

// Exports a buffer and sends only the handle's bytes (no fds): the parent
// copies the fds out of this process.
int bytes_only_exporter(int socket) {
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> shared = ctx.create_shareable_buffer<std::uint32_t>(1024);
  ctx.enqueue_memset(shared, 0x77777777u);
  ctx.synchronize();
  ShareHandle handle = shared.export_handle();
  handle.close();  // the fds stay open in the exporter while `shared` lives
  CHILD_CHECK(write_all(socket, handle.bytes().data(), handle.bytes().size()), "write failed");
  CHILD_CHECK(receive_value(socket) == 1, "no word from the parent");
  return 0;
}

struct Role {
  const char* name;
  int (*run)(int socket);
};
constexpr Role kRoles[] = {
    {"consumer_bytes", consumer_bytes},
    {"consumer_view", consumer_view},
    {"late_reader", late_reader},
    {"ring_consumer", ring_consumer},
    {"exporter_killed", exporter_killed},
    {"importer_killed", importer_killed},
    {"bytes_only_exporter", bytes_only_exporter},
};

}  // namespace

int run_child(const std::string& role, int socket) {
  ::alarm(120);  // a child never outlives a stuck test
  for (const Role& r : kRoles) {
    if (role == r.name) {
      try {
        return r.run(socket);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "share child %s: %s\n", r.name, e.what());
        return 1;
      }
    }
  }
  std::fprintf(stderr, "share child: unknown role %s\n", role.c_str());
  return 2;
}

void send_value(int socket, std::int64_t value) {
  if (!write_all(socket, &value, sizeof value)) throw std::runtime_error("send_value failed");
}

std::int64_t receive_value(int socket) {
  std::int64_t value = 0;
  return read_all(socket, &value, sizeof value) ? value : -1;
}

Child::Child(const std::string& role) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    throw std::runtime_error("socketpair failed");
  }
  socket_ = pair[0];
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The child's end, without close-on-exec, at a known number.
  posix_spawn_file_actions_adddup2(&actions, pair[1], 3);
  const std::string fd = "3";
  char* argv[] = {const_cast<char*>(g_self.c_str()), const_cast<char*>("--share-child"),
                  const_cast<char*>(role.c_str()), const_cast<char*>(fd.c_str()), nullptr};
  const int error = ::posix_spawn(&pid_, g_self.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pair[1]);
  if (error != 0) throw std::runtime_error("posix_spawn failed: " + std::string(strerror(error)));
}

Child::~Child() {
  if (pid_ > 0) {
    kill_now();
  }
  if (socket_ >= 0) ::close(socket_);
}

void Child::kill_now() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

int Child::wait(int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill_now();
  return -1;
}

namespace {

class Sharing : public ::testing::Test {
 protected:
  void SetUp() override {
    if (anydev_device_count(backend_under_test().c_str()) < 1) {
      GTEST_SKIP() << "backend " << backend_under_test() << " has no device here";
    }
  }
};

template <class Body>
Status status_of(Body&& body, std::string* message = nullptr) {
  try {
    body();
  } catch (const Error& e) {
    if (message != nullptr) *message = e.what();
    return e.status();
  }
  return Status::success;
}

TEST_F(Sharing, HostBufferBytesCrossBothWays) {
  DeviceContext ctx = context();
  HostBuffer<std::uint32_t> buffer = ctx.create_shareable_host_buffer<std::uint32_t>(10000);
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = pattern(i);
  Child child("consumer_bytes");
  buffer.export_handle().send(child.socket());
  send_value(child.socket(), 0);
  ASSERT_EQ(receive_value(child.socket()), 1);
  ASSERT_EQ(child.wait(), 0);
  for (std::size_t i = 0; i < buffer.size(); ++i) {
    ASSERT_EQ(buffer[i], 0xC0FFEEu) << "element " << i << " of the consumer's fill";
  }
}

TEST_F(Sharing, DeviceBufferBytesCrossBothWays) {
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> buffer = ctx.create_shareable_buffer<std::uint32_t>(300000);
  std::vector<std::uint32_t> values(buffer.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = pattern(i);
  ctx.enqueue_copy(buffer, std::span<const std::uint32_t>(values));
  ctx.synchronize();
  Child child("consumer_bytes");
  buffer.export_handle().send(child.socket());
  send_value(child.socket(), 1);
  ASSERT_EQ(receive_value(child.socket()), 1);
  ASSERT_EQ(child.wait(), 0);
  const std::vector<std::uint32_t> seen = read_back(ctx, buffer);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    ASSERT_EQ(seen[i], 0xC0FFEEu) << "element " << i << " of the consumer's fill";
  }
}

TEST_F(Sharing, AViewExportsItsPlaceInItsAllocation) {
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> buffer = ctx.create_shareable_buffer<std::uint32_t>(4096);
  std::vector<std::uint32_t> values(buffer.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = pattern(i);
  ctx.enqueue_copy(buffer, std::span<const std::uint32_t>(values));
  ctx.synchronize();
  DeviceBuffer<std::uint32_t> view = buffer.create_sub_buffer<std::uint32_t>(1000, 777);
  Child child("consumer_view");
  view.export_handle().send(child.socket());
  send_value(child.socket(), 1000);
  send_value(child.socket(), 777);
  ASSERT_EQ(receive_value(child.socket()), 1);
  ASSERT_EQ(child.wait(), 0);
}

TEST_F(Sharing, TheImportersMemoryOutlivesTheExportersLastHandle) {
  Child child("late_reader");
  {
    DeviceContext ctx = context();
    DeviceBuffer<std::uint32_t> buffer = ctx.create_shareable_buffer<std::uint32_t>(1 << 18);
    std::vector<std::uint32_t> values(buffer.size());
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = pattern(i);
    ctx.enqueue_copy(buffer, std::span<const std::uint32_t>(values));
    ctx.synchronize();
    buffer.export_handle().send(child.socket());
    ASSERT_EQ(receive_value(child.socket()), 1);
  }  // the buffer, its context and every handle here are gone
  // Another shareable buffer of the same size must not get the same memory.
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> other = ctx.create_shareable_buffer<std::uint32_t>(1 << 18);
  ctx.enqueue_memset(other, 0xDEADu);
  ctx.synchronize();
  send_value(child.socket(), 2);
  EXPECT_EQ(receive_value(child.socket()), 3);
  EXPECT_EQ(child.wait(), 0);
}

// Producer (here) and consumer (child) hand one buffer back and forth:
// `full` orders the consumer's copy after the fill, `empty` the next fill
// after that copy. The host only says "round N was recorded"; it never
// waits for the work, so a missing order shows as a stale or early value.
TEST_F(Sharing, RingOfHandOversOrderedOnlyByEvents) {
  const std::int64_t rounds = ring_rounds();
  DeviceContext ctx = context();
  // Past the size a cpu stream runs inline on the caller: the work is
  // asynchronous, as on a GPU.
  DeviceBuffer<std::uint32_t> shared = ctx.create_shareable_buffer<std::uint32_t>(263168);
  DeviceEvent full = ctx.create_shareable_event();
  Child child("ring_consumer");
  shared.export_handle().send(child.socket());
  full.export_handle().send(child.socket());
  send_value(child.socket(), rounds);
  ShareHandle empty_handle = ShareHandle::receive(child.socket());
  DeviceEvent empty = ctx.import_event(empty_handle);
  DeviceStream stream = ctx.stream();
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t round = 1; round <= rounds; ++round) {
    stream.enqueue_wait_for(empty);
    ctx.enqueue_memset(shared, static_cast<std::uint32_t>(round));
    stream.record_event(full);
    send_value(child.socket(), round);
    ASSERT_EQ(receive_value(child.socket()), round) << "the consumer failed; see its output";
  }
  EXPECT_EQ(receive_value(child.socket()), -2);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(child.wait(), 0);
  RecordProperty("hand_overs_per_second", std::to_string(static_cast<long>(rounds / seconds)));
  std::printf("ring: %lld hand-overs in %.3f s (%.0f per second)\n", static_cast<long long>(rounds),
              seconds, rounds / seconds);
}

TEST_F(Sharing, AKilledExporterFailsTheWaitAndLeavesTheMemoryReadable) {
  Child child("exporter_killed");
  DeviceContext ctx = context();
  ShareHandle buffer_handle = ShareHandle::receive(child.socket());
  ShareHandle event_handle = ShareHandle::receive(child.socket());
  ASSERT_EQ(receive_value(child.socket()), 1);
  DeviceBuffer<std::uint32_t> shared = ctx.import_buffer<std::uint32_t>(buffer_handle);
  DeviceEvent done = ctx.import_event(event_handle);
  child.kill_now();
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  const Status waited = status_of(
      [&] {
        ctx.stream().enqueue_wait_for(done);
        ctx.synchronize();
      },
      &message);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 30.0) << "the wait on a dead exporter's event must end";
  if (waited == Status::success) {
    // The exporter finished its work before it was killed: nothing to fail.
    std::printf("the exporter's recorded work finished before SIGKILL\n");
  } else {
    EXPECT_EQ(waited, Status::device_error) << message;
    EXPECT_NE(message.find("exited"), std::string::npos) << message;
  }
  const std::vector<std::uint32_t> seen = read_back(ctx, shared);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    ASSERT_EQ(seen[i], 0x5A5A5A5Au) << "element " << i << " after the exporter died";
  }
}

TEST_F(Sharing, AKilledImporterGivesTheMemoryBack) {
  DeviceContext ctx = context();
  const std::size_t baseline = resident_bytes();
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  {
    HostBuffer<std::uint8_t> buffer = ctx.create_shareable_host_buffer<std::uint8_t>(kBytes);
    ctx.enqueue_memset(buffer, std::uint8_t{1});
    ctx.synchronize();
    Child child("importer_killed");
    buffer.export_handle().send(child.socket());
    ASSERT_EQ(receive_value(child.socket()), static_cast<std::int64_t>(kBytes / 4096));
    child.kill_now();
  }
  // Released in stream order: wait for this process's mapping to go.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::size_t now = resident_bytes();
  while (now > baseline + kBytes / 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    now = resident_bytes();
  }
  EXPECT_LE(now, baseline + kBytes / 4)
      << "resident " << now << " bytes, baseline " << baseline << " bytes";
  // And this process carries on.
  DeviceBuffer<std::uint32_t> after = ctx.create_shareable_buffer<std::uint32_t>(16);
  ctx.enqueue_memset(after, 7u);
  EXPECT_EQ(read_back(ctx, after)[15], 7u);
}

TEST_F(Sharing, BytesAloneOpenAfterTheFdsAreFetchedFromTheExporter) {
  Child child("bytes_only_exporter");
  std::vector<std::uint8_t> bytes(ANYDEV_SHARE_HANDLE_BYTES);
  ASSERT_TRUE(read_all(child.socket(), bytes.data(), bytes.size()));
  ShareHandle handle = ShareHandle::from_bytes(bytes);
  std::string message;
  const Status fetched = status_of([&] { handle.fetch_fds(); }, &message);
  if (fetched == Status::unsupported ||
      (fetched == Status::invalid_state && message.find("ptrace") != std::string::npos)) {
    send_value(child.socket(), 1);
    GTEST_SKIP() << "pidfd_getfd is not allowed here: " << message;
  }
  ASSERT_EQ(fetched, Status::success) << message;
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> shared = ctx.import_buffer<std::uint32_t>(handle);
  const std::vector<std::uint32_t> seen = read_back(ctx, shared);
  send_value(child.socket(), 1);
  EXPECT_EQ(child.wait(), 0);
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 0x77777777u) << i;
}

// ---- one process: the same memory through two buffers, and bad input ----

TEST_F(Sharing, AnImportInTheSameProcessSeesTheSameMemory) {
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> buffer = ctx.create_shareable_buffer<std::uint32_t>(1000);
  ShareHandle handle = buffer.export_handle();
  DeviceBuffer<std::uint32_t> again = ctx.import_buffer<std::uint32_t>(handle);
  ctx.enqueue_memset(buffer, 0x12345678u);
  ctx.synchronize();
  EXPECT_EQ(read_back(ctx, again)[999], 0x12345678u);
}

TEST_F(Sharing, AnImportedBufferReExports) {
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> buffer = ctx.create_shareable_buffer<std::uint32_t>(64);
  ctx.enqueue_memset(buffer, 9u);
  ctx.synchronize();
  DeviceBuffer<std::uint32_t> again = ctx.import_buffer<std::uint32_t>(buffer.export_handle());
  DeviceBuffer<std::uint32_t> third = ctx.import_buffer<std::uint32_t>(again.export_handle());
  EXPECT_EQ(read_back(ctx, third)[63], 9u);
}

struct BadHandleCase {
  const char* name;
  void (*spoil)(anydev_share_handle_t& raw);
  Status status;
  const char* says;
};

void PrintTo(const BadHandleCase& c, std::ostream* out) { *out << c.name; }

void flip_a_byte(anydev_share_handle_t& raw) { raw.data[70] ^= 0x40; }
void truncate(anydev_share_handle_t& raw) {
  std::memset(raw.data + 128, 0, ANYDEV_SHARE_HANDLE_BYTES - 128);
}
void zero_all(anydev_share_handle_t& raw) { std::memset(raw.data, 0, sizeof raw.data); }
void close_the_fd(anydev_share_handle_t& raw) { ::close(raw.fds[0]); }
void drop_the_fds(anydev_share_handle_t& raw) {
  for (int& fd : raw.fds) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  raw.fd_count = 0;
}
void another_file(anydev_share_handle_t& raw) {
  const int other = ::open("/dev/zero", O_RDWR | O_CLOEXEC);
  ::dup2(other, raw.fds[0]);
  ::close(other);
}

const BadHandleCase kBadHandles[] = {
    {"FlippedByte", flip_a_byte, Status::invalid_argument, "checksum"},
    {"Truncated", truncate, Status::invalid_argument, "damaged"},
    {"NotAHandle", zero_all, Status::invalid_argument, "not an anydev share handle"},
    {"ClosedFd", close_the_fd, Status::invalid_argument, "not an open file descriptor"},
    {"NoFds", drop_the_fds, Status::invalid_argument, "file descriptor"},
    {"AnotherFileInsteadOfTheExportedOne", another_file, Status::invalid_argument, "fd"},
};

class SharingBadHandle : public Sharing, public ::testing::WithParamInterface<BadHandleCase> {};

TEST_P(SharingBadHandle, IsRefusedWithItsReason) {
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> buffer = ctx.create_shareable_buffer<std::uint32_t>(256);
  ShareHandle handle = buffer.export_handle();
  GetParam().spoil(handle.raw());
  std::string message;
  const Status status =
      status_of([&] { (void)ctx.import_buffer<std::uint32_t>(handle); }, &message);
  EXPECT_EQ(status, GetParam().status) << message;
  std::string lower = message;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  EXPECT_NE(lower.find(GetParam().says), std::string::npos) << message;
  EXPECT_NE(message.find("anydev_buffer_import"), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Cases, SharingBadHandle, ::testing::ValuesIn(kBadHandles),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(Sharing, AnEventHandleIsNotMemory) {
  DeviceContext ctx = context();
  DeviceEvent event = ctx.create_shareable_event();
  ShareHandle handle = event.export_handle();
  std::string message;
  EXPECT_EQ(status_of([&] { (void)ctx.import_buffer<std::uint32_t>(handle); }, &message),
            Status::invalid_argument);
  EXPECT_NE(message.find("describes an event, not memory"), std::string::npos) << message;
}

TEST_F(Sharing, ADtypeOtherThanTheExportersIsRefused) {
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> buffer = ctx.create_shareable_buffer<std::uint32_t>(8);
  std::string message;
  EXPECT_EQ(status_of([&] { (void)ctx.import_buffer<float>(buffer.export_handle()); }, &message),
            Status::invalid_argument);
  EXPECT_NE(message.find("uint32"), std::string::npos) << message;
}

TEST_F(Sharing, AHandleOfAnotherBackendIsRefused) {
  std::size_t count = 0;
  ASSERT_EQ(anydev_backend_count(&count), ANYDEV_SUCCESS);
  std::string other;
  for (std::size_t i = 0; i < count && other.empty(); ++i) {
    anydev_backend_info_t info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(anydev_backend_info(i, &info), ANYDEV_SUCCESS);
    if (info.available && info.name != backend_under_test()) other = info.name;
  }
  if (other.empty()) GTEST_SKIP() << "no second backend is available here to import into";
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> buffer = ctx.create_shareable_buffer<std::uint32_t>(8);
  DeviceContext elsewhere(0, other);
  std::string message;
  EXPECT_EQ(status_of([&] { (void)elsewhere.import_buffer<std::uint32_t>(buffer.export_handle()); },
                      &message),
            Status::invalid_argument);
  EXPECT_NE(message.find("of the " + backend_under_test() + " backend"), std::string::npos)
      << message;
}

TEST_F(Sharing, AHandleOfAnotherDeviceIsRefused) {
  if (anydev_device_count(backend_under_test().c_str()) < 2) {
    GTEST_SKIP() << "backend " << backend_under_test() << " has one device here";
  }
  DeviceContext ctx = context(0);
  DeviceBuffer<std::uint32_t> buffer = ctx.create_shareable_buffer<std::uint32_t>(8);
  DeviceContext second = context(1);
  std::string message;
  EXPECT_EQ(status_of([&] { (void)second.import_buffer<std::uint32_t>(buffer.export_handle()); },
                      &message),
            Status::invalid_argument)
      << message;
}

TEST_F(Sharing, OrdinaryBuffersAndEventsSayTheyAreNotShareable) {
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> plain = ctx.enqueue_create_buffer<std::uint32_t>(8);
  std::string message;
  EXPECT_EQ(status_of([&] { (void)plain.export_handle(); }, &message), Status::unsupported);
  EXPECT_NE(message.find("anydev_buffer_create_shareable"), std::string::npos) << message;
  DeviceEvent event = ctx.create_event();
  EXPECT_EQ(status_of([&] { (void)event.export_handle(); }, &message), Status::unsupported);
  EXPECT_NE(message.find("anydev_context_create_shareable_event"), std::string::npos) << message;
}

TEST_F(Sharing, ShareableMemoryCannotBeTakenOrEmpty) {
  DeviceContext ctx = context();
  std::string message;
  EXPECT_EQ(status_of([&] { (void)ctx.create_shareable_buffer<std::uint32_t>(0); }, &message),
            Status::invalid_argument);
  EXPECT_NE(message.find("count is 0"), std::string::npos) << message;
  DeviceBuffer<std::uint32_t> buffer = ctx.create_shareable_buffer<std::uint32_t>(8);
  EXPECT_EQ(status_of([&] { (void)std::move(buffer).take_ptr(); }, &message), Status::unsupported);
  EXPECT_NE(message.find("shared between processes"), std::string::npos) << message;
}

TEST_F(Sharing, SendingNeedsAUnixSocketAndReceivingAWholeHandle) {
  DeviceContext ctx = context();
  DeviceBuffer<std::uint32_t> buffer = ctx.create_shareable_buffer<std::uint32_t>(8);
  ShareHandle handle = buffer.export_handle();
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  std::string message;
  EXPECT_EQ(status_of([&] { handle.send(pipe_fds[1]); }, &message), Status::invalid_argument);
  EXPECT_NE(message.find("not a socket"), std::string::npos) << message;
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  ASSERT_EQ(::write(pair[1], "short", 5), 5);
  ::close(pair[1]);
  EXPECT_EQ(status_of([&] { (void)ShareHandle::receive(pair[0]); }, &message),
            Status::out_of_range);
  EXPECT_NE(message.find("closed socket"), std::string::npos) << message;
  ::close(pair[0]);
}

// Runs where the device cannot export device memory (an emulator told so):
// ANYDEV_SHARE_EXPECT_UNSUPPORTED is a part of the reason the message must
// give. Host memory and events are still shared.
TEST_F(Sharing, DeviceMemoryTheDeviceCannotExportSaysWhy) {
  const char* reason = std::getenv("ANYDEV_SHARE_EXPECT_UNSUPPORTED");
  if (reason == nullptr) GTEST_SKIP() << "ANYDEV_SHARE_EXPECT_UNSUPPORTED is not set";
  DeviceContext ctx = context();
  std::string message;
  EXPECT_EQ(status_of([&] { (void)ctx.create_shareable_buffer<std::uint32_t>(1024); }, &message),
            Status::unsupported)
      << message;
  EXPECT_NE(message.find(reason), std::string::npos) << message;
  EXPECT_NE(message.find("anydev_buffer_create_shareable"), std::string::npos) << message;
  HostBuffer<std::uint32_t> host = ctx.create_shareable_host_buffer<std::uint32_t>(1024);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = pattern(i);
  Child child("consumer_bytes");
  host.export_handle().send(child.socket());
  send_value(child.socket(), 0);
  ASSERT_EQ(receive_value(child.socket()), 1);
  ASSERT_EQ(child.wait(), 0);
  EXPECT_EQ(host[1023], 0xC0FFEEu);
  DeviceEvent event = ctx.create_shareable_event();
  EXPECT_TRUE(ctx.import_event(event.export_handle()).is_complete());
}

TEST_F(Sharing, ASharedEventOrdersTwoStreamsOfOneProcess) {
  DeviceContext ctx = context();
  DeviceContext other = ctx.with_stream(ctx.create_stream());
  DeviceBuffer<std::uint32_t> buffer = ctx.create_shareable_buffer<std::uint32_t>(1 << 20);
  DeviceEvent event = ctx.create_shareable_event();
  DeviceEvent opened = other.import_event(event.export_handle());
  EXPECT_TRUE(opened.is_complete()) << "never recorded";
  ctx.enqueue_memset(buffer, 0xABCDu);
  ctx.stream().record_event(event);
  other.stream().enqueue_wait_for(opened);
  std::vector<std::uint32_t> seen(buffer.size());
  other.enqueue_copy(std::span<std::uint32_t>(seen), buffer);
  other.synchronize();
  EXPECT_TRUE(event.is_complete());
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](std::uint32_t v) { return v == 0xABCDu; }));
}

// Runs where the backend cannot share host memory (level_zero on a driver
// without the host-pointer import): ANYDEV_SHARE_EXPECT_HOST_UNSUPPORTED is
// a part of the reason the message must give.
TEST_F(Sharing, HostMemoryTheBackendCannotShareSaysWhy) {
  const char* reason = std::getenv("ANYDEV_SHARE_EXPECT_HOST_UNSUPPORTED");
  if (reason == nullptr) GTEST_SKIP() << "ANYDEV_SHARE_EXPECT_HOST_UNSUPPORTED is not set";
  DeviceContext ctx = context();
  std::string message;
  EXPECT_EQ(
      status_of([&] { (void)ctx.create_shareable_host_buffer<std::uint32_t>(1024); }, &message),
      Status::unsupported)
      << message;
  EXPECT_NE(message.find(reason), std::string::npos) << message;
  EXPECT_NE(message.find("anydev_buffer_create_shareable"), std::string::npos) << message;
}

// OpenCL has nothing to share with: every path says why, naming OpenCL.
TEST(SharingOnOpencl, EveryPathSaysWhyItCannotShare) {
  if (backend_under_test() != "cpu") GTEST_SKIP() << "runs once, in the cpu run";
  if (anydev_device_count("opencl") < 1) GTEST_SKIP() << "no OpenCL device here (PoCL)";
  DeviceContext ctx(0, "opencl");
  std::string message;
  EXPECT_EQ(status_of([&] { (void)ctx.create_shareable_buffer<float>(4); }, &message),
            Status::unsupported);
  EXPECT_NE(message.find("OpenCL 3.0 has no interprocess sharing"), std::string::npos) << message;
  EXPECT_EQ(status_of([&] { (void)ctx.create_shareable_host_buffer<float>(4); }, &message),
            Status::unsupported);
  EXPECT_EQ(status_of([&] { (void)ctx.create_shareable_event(); }, &message), Status::unsupported);
  EXPECT_NE(message.find("OpenCL 3.0"), std::string::npos) << message;
  // A handle of another backend is refused before the backend is asked; an
  // opencl-named one reaches it and is declined with the reason.
  DeviceContext cpu(0, "cpu");
  DeviceEvent event = cpu.create_shareable_event();
  EXPECT_EQ(status_of([&] { (void)ctx.import_event(event.export_handle()); }, &message),
            Status::invalid_argument);
  EXPECT_NE(message.find("of the cpu backend"), std::string::npos) << message;
}

}  // namespace
}  // namespace anydev::share_test

int main(int argc, char** argv) {
  anydev::share_test::g_self = "/proc/self/exe";
  char resolved[4096];
  const ssize_t n = ::readlink("/proc/self/exe", resolved, sizeof resolved - 1);
  if (n > 0) {
    resolved[n] = '\0';
    anydev::share_test::g_self = resolved;
  }
  if (argc == 4 && std::string(argv[1]) == "--share-child") {
    return anydev::share_test::run_child(argv[2], std::atoi(argv[3]));
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
