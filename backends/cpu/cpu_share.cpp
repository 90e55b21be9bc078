// SPDX-License-Identifier: Apache-2.0
#include "cpu_share.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "anydev/kit/cat.h"
#include "cpu_pages.h"
#include "cpu_services.h"

namespace anydev::cpu {
namespace {

using kit::cat;

// Read each time: a function-local static would take a guard that a fork()
// can leave locked in the child.
std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

std::size_t round_to_pages(std::size_t bytes) {
  const std::size_t page = page_size();
  return (bytes + page - 1) / page * page;
}

constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

// A new sealed memfd of `length` bytes in *out.
anydev_status_t make_memfd(const char* name, const char* op, std::size_t length, int* out) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    const int error = errno;
    return set_error(error == ENOMEM || error == EMFILE || error == ENFILE
                         ? ANYDEV_ERROR_OUT_OF_MEMORY
                         : ANYDEV_ERROR_DEVICE,
                     cat("cpu ", op, ": memfd_create failed: ", errno_text(error)));
  }
  if (::ftruncate(fd, static_cast<off_t>(length)) != 0 || ::fcntl(fd, F_ADD_SEALS, kSeals) != 0) {
    const int error = errno;
    ::close(fd);
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY, cat("cpu ", op, ": sizing a memfd to ", length,
                                                     " bytes failed: ", errno_text(error)));
  }
  *out = fd;
  return ANYDEV_SUCCESS;
}

// What the payload of shared memory or an event page says (same machine,
// same build: a plain struct, checked by magic, version and size).
struct Payload {
  char magic[8];
  std::uint32_t version;
  std::int32_t kind;  // anydev_bk_memory_kind_t; -1 for an event page
  std::uint64_t length;
  std::uint64_t st_dev;
  std::uint64_t st_ino;
};
constexpr char kMemoryMagic[8] = {'c', 'p', 'u', 'm', 'e', 'm', '0', '1'};
constexpr char kEventMagic[8] = {'c', 'p', 'u', 'e', 'v', 't', '0', '1'};
static_assert(sizeof(Payload) <= ANYDEV_BK_SHARE_PAYLOAD_MAX);

anydev_status_t describe_fd(int fd, const char (&magic)[8], std::int32_t kind, std::size_t length,
                            const char* op, anydev_bk_share_t* out) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    return set_error(ANYDEV_ERROR_DEVICE,
                     cat("cpu ", op, ": fstat of its memfd ", fd, " failed: ", errno_text(errno)));
  }
  Payload payload{};
  std::memcpy(payload.magic, magic, sizeof magic);
  payload.version = 1;
  payload.kind = kind;
  payload.length = length;
  payload.st_dev = info.st_dev;
  payload.st_ino = info.st_ino;
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) {
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                     cat("cpu ", op, ": duplicating memfd ", fd, " failed: ", errno_text(errno)));
  }
  std::memcpy(out->payload, &payload, sizeof payload);
  out->payload_size = sizeof payload;
  out->fd_count = 1;
  out->fds[0] = copy;
  return ANYDEV_SUCCESS;
}

// Checks that `in` describes what this backend exported (`magic`, `kind`)
// and that its fd is that very memfd, sealed; the payload's length.
anydev_status_t check_payload(const anydev_bk_share_t* in, const char (&magic)[8],
                              std::int32_t kind, const char* op, std::uint64_t* length) {
  if (in == nullptr)
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, cat("cpu ", op, ": in is NULL"));
  Payload payload{};
  if (in->payload_size != sizeof payload) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("cpu ", op, ": the payload is ", in->payload_size, " bytes, expected ",
                         sizeof payload, ": not exported by the cpu backend"));
  }
  std::memcpy(&payload, in->payload, sizeof payload);
  if (std::memcmp(payload.magic, magic, sizeof magic) != 0 || payload.version != 1) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("cpu ", op, ": the payload is not the cpu backend's description of ",
                         kind < 0 ? "an event" : "memory", " (magic or version differs)"));
  }
  if (payload.kind != kind) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("cpu ", op, ": the payload describes memory kind ", payload.kind,
                         " but kind ", kind, " was asked for"));
  }
  if (in->fd_count != 1) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("cpu ", op, ": ", in->fd_count, " file descriptors given, 1 expected"));
  }
  const int fd = in->fds[0];
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, cat("cpu ", op, ": file descriptor ", fd,
                                                        " cannot be read: ", errno_text(errno)));
  }
  if (info.st_dev != payload.st_dev || info.st_ino != payload.st_ino) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("cpu ", op, ": file descriptor ", fd, " is inode ", info.st_ino,
                         ", not the exported memfd (inode ", payload.st_ino, ")"));
  }
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0 ||
      static_cast<std::uint64_t>(info.st_size) < payload.length) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("cpu ", op, ": file descriptor ", fd, " is not a sealed memfd of ",
                         payload.length, " bytes (size ", info.st_size, ")"));
  }
  *length = payload.length;
  return ANYDEV_SUCCESS;
}

// ---- memory ----

struct SharedBlock {
  int fd;
  std::size_t length;
  anydev_bk_memory_kind_t kind;
  bool locked;
};

std::mutex g_blocks_mutex;
std::unordered_map<void*, SharedBlock>* g_blocks = nullptr;  // leaked: outlives exit

std::once_flag g_blocks_once;

std::unordered_map<void*, SharedBlock>& blocks() {
  std::call_once(g_blocks_once, [] {
    g_blocks = new std::unordered_map<void*, SharedBlock>;
    // A fork while another thread holds the lock must not leave it held in
    // the child.
    ::pthread_atfork([] { g_blocks_mutex.lock(); }, [] { g_blocks_mutex.unlock(); },
                     [] { g_blocks_mutex.unlock(); });
  });
  return *g_blocks;
}

const char* kind_text(anydev_bk_memory_kind_t kind) {
  return kind == ANYDEV_BK_MEMORY_HOST ? "host" : "device";
}

// Maps `fd` and registers the block; *address on success.
anydev_status_t map_block(int fd, std::size_t length, anydev_bk_memory_kind_t kind, const char* op,
                          void** address) {
  const bool pin = kind == ANYDEV_BK_MEMORY_HOST && lock_pinned_memory();
  void* memory = ::mmap(nullptr, length, PROT_READ | PROT_WRITE,
                        MAP_SHARED | (kind == ANYDEV_BK_MEMORY_HOST ? MAP_POPULATE : 0), fd, 0);
  if (memory == MAP_FAILED) {
    const int error = errno;
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                     cat("cpu ", op, ": mapping ", length, " bytes of ", kind_text(kind),
                         " memory failed: ", errno_text(error)));
  }
  // Locking is best effort, as host_alloc's: past RLIMIT_MEMLOCK the memory
  // stays pageable and memory_is_locked says so.
  const bool locked = pin && ::mlock(memory, length) == 0;
  try {
    std::lock_guard lock(g_blocks_mutex);
    blocks().emplace(memory, SharedBlock{fd, length, kind, locked});
  } catch (...) {
    ::munmap(memory, length);
    throw;
  }
  *address = memory;
  return ANYDEV_SUCCESS;
}

// map_block for an fd this call owns: on any failure (a throw included) the
// fd is closed, so neither caller can leak it.
anydev_status_t map_owned_fd(int fd, std::size_t length, anydev_bk_memory_kind_t kind,
                             const char* operation, void** handle, void** address) {
  void* memory = nullptr;
  anydev_status_t s = ANYDEV_ERROR_INTERNAL;
  try {
    s = map_block(fd, length, kind, operation, &memory);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (s != ANYDEV_SUCCESS) {
    ::close(fd);
    return s;
  }
  *handle = memory;
  *address = memory;
  return ANYDEV_SUCCESS;
}

}  // namespace

anydev_status_t share_alloc(anydev_bk_memory_kind_t kind, std::size_t bytes, void** handle,
                            void** address) {
  const std::size_t length = round_to_pages(bytes);
  int fd = -1;
  if (anydev_status_t s = make_memfd("anydev-cpu-shared", "shareable_alloc", length, &fd);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  return map_owned_fd(fd, length, kind, "shareable_alloc", handle, address);
}

anydev_status_t share_export(anydev_bk_memory_kind_t kind, void* handle, anydev_bk_share_t* out) {
  SharedBlock block{};
  {
    std::lock_guard lock(g_blocks_mutex);
    auto found = blocks().find(handle);
    if (found == blocks().end() || found->second.kind != kind) {
      return set_error(ANYDEV_ERROR_UNSUPPORTED,
                       cat("cpu memory_export(", handle, "): not shareable ", kind_text(kind),
                           " memory of this backend (made by shareable_alloc or imported)"));
    }
    block = found->second;
    // The fd stays open while the block is registered; dup it under the
    // lock so that a concurrent unshare cannot close it first.
    return describe_fd(block.fd, kMemoryMagic, kind, block.length, "memory_export", out);
  }
}

anydev_status_t share_import(int device, anydev_bk_memory_kind_t kind, const anydev_bk_share_t* in,
                             std::size_t bytes, void** handle, void** address) {
  std::uint64_t length = 0;
  if (anydev_status_t s = check_payload(in, kMemoryMagic, kind, "memory_import", &length);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (round_to_pages(bytes) != length) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("cpu memory_import(device=", device, "): the handle says ", bytes,
                         " bytes but the exported memfd holds ", length));
  }
  const int fd = ::fcntl(in->fds[0], F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY, cat("cpu memory_import: duplicating fd ",
                                                     in->fds[0], " failed: ", errno_text(errno)));
  }
  return map_owned_fd(fd, length, kind, "memory_import", handle, address);
}

anydev_status_t share_release(anydev_bk_memory_kind_t kind, void* handle) {
  SharedBlock block{};
  {
    std::lock_guard lock(g_blocks_mutex);
    auto found = blocks().find(handle);
    if (found == blocks().end() || found->second.kind != kind) {
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                       cat("cpu memory_unshare(", handle, "): not shared ", kind_text(kind),
                           " memory of this backend"));
    }
    block = found->second;
    blocks().erase(found);
  }
  ::munmap(handle, block.length);  // also unlocks
  ::close(block.fd);
  return ANYDEV_SUCCESS;
}

bool shared_memory_locked(void* handle, bool* locked) {
  std::lock_guard lock(g_blocks_mutex);
  if (g_blocks == nullptr) return false;
  auto found = g_blocks->find(handle);
  if (found == g_blocks->end()) return false;
  *locked = found->second.locked;
  return true;
}

// ---- events ----

struct EventPage {
  char magic[8];
  std::atomic<std::uint32_t> futex;  // the low 32 bits of `completed`, for futex waits
  std::atomic<std::int32_t> recorder_pid;
  std::atomic<std::uint64_t> recorded;   // records taken so far
  std::atomic<std::uint64_t> completed;  // the highest record whose work has finished
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "atomics in shared memory");

struct SharedEvent::Mapping {
  int fd = -1;
  EventPage* page = nullptr;
  ~Mapping() {
    if (page != nullptr) ::munmap(page, page_size());
    if (fd >= 0) ::close(fd);
  }
};

namespace {

// How long a waiter sleeps before it checks that the recorder still lives.
constexpr auto kLivenessPeriod = std::chrono::milliseconds(5);

void publish(EventPage& page, std::uint64_t record) {
  std::uint64_t seen = page.completed.load(std::memory_order_relaxed);
  while (seen < record &&
         !page.completed.compare_exchange_weak(seen, record, std::memory_order_release)) {
  }
  page.futex.store(static_cast<std::uint32_t>(page.completed.load(std::memory_order_relaxed)),
                   std::memory_order_release);
  ::syscall(SYS_futex, &page.futex, FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

bool process_gone(std::int32_t pid) {
  return pid > 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
}

std::optional<TaskFailure> wait_for(const EventPage& page, std::uint64_t record) {
  auto* word = const_cast<std::atomic<std::uint32_t>*>(&page.futex);
  while (page.completed.load(std::memory_order_acquire) < record) {
    const std::uint32_t seen = word->load(std::memory_order_acquire);
    if (page.completed.load(std::memory_order_acquire) >= record) break;
    timespec period{0, std::chrono::nanoseconds(kLivenessPeriod).count()};
    const long woke = ::syscall(SYS_futex, word, FUTEX_WAIT, seen, &period, nullptr, 0);
    if (woke != 0 && errno == ETIMEDOUT) {
      const std::int32_t pid = page.recorder_pid.load(std::memory_order_acquire);
      if (process_gone(pid) && page.completed.load(std::memory_order_acquire) < record) {
        return TaskFailure{ANYDEV_ERROR_DEVICE,
                           cat("cpu: waiting on an interprocess event: its recorder, process ", pid,
                               ", exited before the work of record ", record,
                               " completed (completed: ", page.completed.load(), ")")};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

SharedEvent::SharedEvent(std::shared_ptr<Mapping> mapping) : mapping_(std::move(mapping)) {}
SharedEvent::~SharedEvent() = default;

anydev_status_t SharedEvent::create(std::unique_ptr<SharedEvent>* out) {
  auto mapping = std::make_shared<Mapping>();
  if (anydev_status_t s =
          make_memfd("anydev-cpu-event", "event_create_shareable", page_size(), &mapping->fd);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  void* memory = ::mmap(nullptr, page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, mapping->fd, 0);
  if (memory == MAP_FAILED) {
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY, cat("cpu event_create_shareable: mapping its "
                                                     "page failed: ",
                                                     errno_text(errno)));
  }
  mapping->page = new (memory) EventPage{};
  std::memcpy(mapping->page->magic, kEventMagic, sizeof kEventMagic);
  out->reset(new SharedEvent(std::move(mapping)));
  return ANYDEV_SUCCESS;
}

anydev_status_t SharedEvent::open(const anydev_bk_share_t& in, std::unique_ptr<SharedEvent>* out) {
  std::uint64_t length = 0;
  if (anydev_status_t s = check_payload(&in, kEventMagic, -1, "event_import", &length);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (length != page_size()) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, cat("cpu event_import: the event page is ",
                                                        length, " bytes, expected ", page_size()));
  }
  auto mapping = std::make_shared<Mapping>();
  mapping->fd = ::fcntl(in.fds[0], F_DUPFD_CLOEXEC, 0);
  if (mapping->fd < 0) {
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY, cat("cpu event_import: duplicating fd ", in.fds[0],
                                                     " failed: ", errno_text(errno)));
  }
  void* memory = ::mmap(nullptr, page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, mapping->fd, 0);
  if (memory == MAP_FAILED) {
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                     cat("cpu event_import: mapping the event page failed: ", errno_text(errno)));
  }
  mapping->page = static_cast<EventPage*>(memory);
  if (std::memcmp(mapping->page->magic, kEventMagic, sizeof kEventMagic) != 0) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     "cpu event_import: the memfd does not hold a cpu event page");
  }
  out->reset(new SharedEvent(std::move(mapping)));
  return ANYDEV_SUCCESS;
}

anydev_status_t SharedEvent::describe(anydev_bk_share_t* out) const {
  return describe_fd(mapping_->fd, kEventMagic, -1, page_size(), "event_export", out);
}

void SharedEvent::record(StreamState& stream) {
  EventPage& page = *mapping_->page;
  page.recorder_pid.store(static_cast<std::int32_t>(::getpid()), std::memory_order_release);
  const std::uint64_t record = page.recorded.fetch_add(1, std::memory_order_acq_rel) + 1;
  // An idle stream has nothing to capture: complete at once.
  if (stream.is_complete(stream.submitted())) {
    publish(page, record);
    return;
  }
  struct Signal {
    std::shared_ptr<Mapping> mapping;
    std::uint64_t record;
  };
  auto* signal = new Signal{mapping_, record};
  stream.enqueue(HostFunctionTask{[](void* user) -> std::optional<TaskFailure> {
                                    std::unique_ptr<Signal> owned(static_cast<Signal*>(user));
                                    publish(*owned->mapping->page, owned->record);
                                    return std::nullopt;
                                  },
                                  signal});
}

bool SharedEvent::is_complete() const {
  const EventPage& page = *mapping_->page;
  const std::uint64_t record = page.recorded.load(std::memory_order_acquire);
  return page.completed.load(std::memory_order_acquire) >= record;
}

std::optional<TaskFailure> SharedEvent::synchronize() const {
  const EventPage& page = *mapping_->page;
  return wait_for(page, page.recorded.load(std::memory_order_acquire));
}

void SharedEvent::make_wait(StreamState& stream) const {
  const EventPage& page = *mapping_->page;
  const std::uint64_t record = page.recorded.load(std::memory_order_acquire);
  if (page.completed.load(std::memory_order_acquire) >= record) return;
  struct Wait {
    std::shared_ptr<Mapping> mapping;
    std::uint64_t record;
  };
  auto* wait = new Wait{mapping_, record};
  stream.enqueue(HostFunctionTask{[](void* user) -> std::optional<TaskFailure> {
                                    std::unique_ptr<Wait> owned(static_cast<Wait*>(user));
                                    return wait_for(*owned->mapping->page, owned->record);
                                  },
                                  wait});
}

}  // namespace anydev::cpu
