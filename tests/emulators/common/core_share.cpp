// SPDX-License-Identifier: Apache-2.0
#include "core_share.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core_config.h"
#include "core_memory.h"

namespace anydev_emu::core {
namespace {

constexpr std::size_t kPage = 4096;
constexpr char kMemfdPrefix[] = "anydev-emu-vmm-device-";

// A physical allocation handle: owns its memfd until released.
struct Allocation {
  int fd = -1;
  std::size_t bytes = 0;
  int device = 0;
  bool exportable = false;
};

// An address range handed out by vmm_reserve, until vmm_free_range.
struct Reservation {
  std::size_t bytes = 0;
  int device = 0;
};

// Every live allocation handle and reservation; `mutex` guards both.
struct Vmm {
  std::mutex mutex;
  std::map<std::uint64_t, Allocation> allocations;
  std::map<std::uintptr_t, Reservation> reservations;
  std::uint64_t next_handle = 0x5a0000000;  // handles are never reused
};

Vmm& V() {
  static Vmm* vmm = new Vmm;  // never destroyed
  return *vmm;
}

Status invalid(const char* api, const std::string& why) {
  return misuse(Status::invalid_value, std::string(api) + ": " + why);
}

std::string hex(std::uintptr_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

// The device a memfd of ours was made for (its name), or -1.
int memfd_device(int fd) {
  char link[64];
  char target[256] = {};
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, target, sizeof target - 1);
  if (n <= 0) return -1;
  const char* name = std::strstr(target, kMemfdPrefix);
  if (name == nullptr) return -1;
  return std::atoi(name + sizeof kMemfdPrefix - 1);
}

}  // namespace

bool vmm_supported() {
  static const bool supported = read_setting("VMM", 1, 0, 1) != 0;
  return supported;
}

Status vmm_create(int device, std::size_t bytes, bool exportable, std::uint64_t* handle,
                  const char* api) {
  if (!vmm_supported()) return Status::not_supported;
  if (handle == nullptr) return invalid(api, "null handle");
  if (bytes == 0 || bytes % kGranularity != 0) {
    return invalid(api, std::to_string(bytes) + " bytes is not a multiple of the granularity " +
                            std::to_string(kGranularity));
  }
  if (bytes > get_config().memory_bytes) return Status::out_of_memory;
  const std::string name = kMemfdPrefix + std::to_string(device);
  const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) return Status::out_of_memory;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    ::close(fd);
    return Status::out_of_memory;
  }
  Vmm& v = V();
  std::lock_guard<std::mutex> lock(v.mutex);
  *handle = ++v.next_handle;
  v.allocations[*handle] = Allocation{fd, bytes, device, exportable};
  return Status::success;
}

Status vmm_release(std::uint64_t handle, const char* api) {
  Vmm& v = V();
  std::lock_guard<std::mutex> lock(v.mutex);
  auto it = v.allocations.find(handle);
  if (it == v.allocations.end()) {
    return invalid(api, "unknown or released allocation handle " + hex(handle));
  }
  ::close(it->second.fd);  // the mappings keep the memory
  v.allocations.erase(it);
  return Status::success;
}

Status vmm_export_fd(std::uint64_t handle, int* fd, const char* api) {
  if (fd == nullptr) return invalid(api, "null shareable handle");
  Vmm& v = V();
  std::lock_guard<std::mutex> lock(v.mutex);
  auto it = v.allocations.find(handle);
  if (it == v.allocations.end()) {
    return invalid(api, "unknown or released allocation handle " + hex(handle));
  }
  if (!it->second.exportable) {
    return invalid(api, "the allocation was created without the POSIX fd handle type");
  }
  *fd = ::fcntl(it->second.fd, F_DUPFD_CLOEXEC, 0);
  return *fd < 0 ? Status::out_of_memory : Status::success;
}

Status vmm_import_fd(int fd, std::uint64_t* handle, const char* api) {
  if (!vmm_supported()) return Status::not_supported;
  if (handle == nullptr) return invalid(api, "null handle");
  const int device = memfd_device(fd);
  struct stat info {};
  if (device < 0 || ::fstat(fd, &info) != 0 || info.st_size <= 0 ||
      static_cast<std::size_t>(info.st_size) % kGranularity != 0) {
    // What a driver answers for an fd it did not export; not misuse: a
    // backend's own checks come first, but a test may hand any fd.
    return Status::invalid_value;
  }
  const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return Status::out_of_memory;
  Vmm& v = V();
  std::lock_guard<std::mutex> lock(v.mutex);
  *handle = ++v.next_handle;
  v.allocations[*handle] = Allocation{own, static_cast<std::size_t>(info.st_size), device, true};
  return Status::success;
}

Status vmm_reserve(int device, std::size_t bytes, std::size_t alignment, std::uintptr_t* out,
                   const char* api) {
  if (!vmm_supported()) return Status::not_supported;
  if (out == nullptr) return invalid(api, "null pointer output");
  if (bytes == 0 || bytes % kGranularity != 0) {
    return invalid(api, std::to_string(bytes) + " bytes is not a multiple of the granularity");
  }
  std::uintptr_t at = 0;
  if (const Status s =
          reserve_device_range(device, bytes, alignment == 0 ? kGranularity : alignment, &at);
      s != Status::success) {
    return s;
  }
  Vmm& v = V();
  std::lock_guard<std::mutex> lock(v.mutex);
  v.reservations[at] = Reservation{bytes, device};
  *out = at;
  return Status::success;
}

Status vmm_free_range(std::uintptr_t address, std::size_t bytes, const char* api) {
  Vmm& v = V();
  std::lock_guard<std::mutex> lock(v.mutex);
  auto it = v.reservations.find(address);
  if (it == v.reservations.end() || it->second.bytes != bytes) {
    return invalid(
        api, hex(address) + " of " + std::to_string(bytes) + " bytes is not a reserved range");
  }
  for (std::uintptr_t at = address; at < address + bytes; at += kGranularity) {
    if (find_containing(at) != nullptr) {
      return invalid(api, "the range at " + hex(address) + " is still mapped (cuMemUnmap first)");
    }
  }
  v.reservations.erase(it);
  return Status::success;
}

Status vmm_map(std::uintptr_t address, std::size_t bytes, std::size_t offset, std::uint64_t handle,
               const char* api) {
  int fd = -1;
  int device = 0;
  {
    Vmm& v = V();
    std::lock_guard<std::mutex> lock(v.mutex);
    auto a = v.allocations.find(handle);
    if (a == v.allocations.end()) {
      return invalid(api, "unknown or released allocation handle " + hex(handle));
    }
    if (offset != 0 || bytes != a->second.bytes) {
      // The drivers map whole allocations only (offset 0, the full size).
      return invalid(api, "maps " + std::to_string(bytes) + " bytes at offset " +
                              std::to_string(offset) + " of an allocation of " +
                              std::to_string(a->second.bytes));
    }
    auto r = v.reservations.upper_bound(address);
    if (r == v.reservations.begin()) return invalid(api, hex(address) + " is not reserved");
    --r;
    if (address + bytes > r->first + r->second.bytes) {
      return invalid(
          api, hex(address) + " + " + std::to_string(bytes) + " is not inside a reserved range");
    }
    fd = a->second.fd;
    device = a->second.device;
  }
  void* host = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (host == MAP_FAILED) return Status::out_of_memory;
  auto block = std::make_shared<Block>();
  block->external = true;  // before anything can fail: never freed by the block
  block->address = address;
  block->size = bytes;
  block->device = device;
  block->host = static_cast<std::byte*>(host);
  block->keeper = std::shared_ptr<void>(host, [bytes](void* p) { ::munmap(p, bytes); });
  block->no_access = true;
  return add_external_block(block, api);
}

Status vmm_unmap(std::uintptr_t address, std::size_t bytes, const char* api) {
  return remove_external_block(address, bytes, true, api);
}

Status vmm_set_access(std::uintptr_t address, std::size_t bytes, int device, const char* api) {
  BlockRef block = find_containing(address);
  if (block == nullptr || !block->external || block->device < 0 || block->address != address ||
      block->size != bytes) {
    return invalid(api, hex(address) + " of " + std::to_string(bytes) + " bytes is not a mapping");
  }
  if (device != block->device) {
    return invalid(api, "access for device " + std::to_string(device) + " to memory of device " +
                            std::to_string(block->device) + " (the emulator has no peer VMM)");
  }
  block->no_access = false;
  return Status::success;
}

Status host_register(void* p, std::size_t bytes, const char* api) {
  if (p == nullptr || bytes == 0) return invalid(api, "null pointer or zero bytes");
  auto block = std::make_shared<Block>();
  block->external = true;  // the application's memory: never freed by the block
  block->address = reinterpret_cast<std::uintptr_t>(p);
  block->size = bytes;
  block->device = -1;
  block->host = static_cast<std::byte*>(p);
  return add_external_block(block, api);
}

Status host_unregister(void* p, const char* api) {
  return remove_external_block(reinterpret_cast<std::uintptr_t>(p), 0, false, api);
}

// ---- interprocess events ----

namespace {

constexpr char kPageMagic[8] = {'e', 'm', 'u', 'i', 'p', 'c', 'e', 'v'};
constexpr char kHandleMagic[8] = {'e', 'm', 'u', 'i', 'p', 'c', 'h', '1'};

// An interprocess event's page, shared by every process that opened it:
// only atomics after the magic.
struct Layout {
  char magic[8];
  std::atomic<std::int32_t> recorder_pid;
  std::atomic<std::uint32_t> futex;  // the low bits of `completed`
  std::atomic<std::uint64_t> recorded;
  std::atomic<std::uint64_t> completed;
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "atomics in shared memory");

std::atomic<std::uint64_t> g_next_page{0};
std::once_flag g_swept;

constexpr char kPagePrefix[] = "anydev-emu-ipcev-";

// Unlinks the pages of creators that died without destroying their events
// (killed): once per process, so /dev/shm does not fill up across runs.
void sweep_dead_creators() {
  DIR* dir = ::opendir("/dev/shm");
  if (dir == nullptr) return;
  while (const dirent* entry = ::readdir(dir)) {
    if (std::strncmp(entry->d_name, kPagePrefix, sizeof kPagePrefix - 1) != 0) continue;
    const long pid = std::atol(entry->d_name + sizeof kPagePrefix - 1);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      ::shm_unlink((std::string("/") + entry->d_name).c_str());
    }
  }
  ::closedir(dir);
}

}  // namespace

// One process's mapping of an event page, shared by the events over it and
// the stream operations queued on them; unmapped with the last of them.
struct IpcPage {
  std::string name;
  Layout* layout = nullptr;
  ~IpcPage() {
    if (layout != nullptr) ::munmap(layout, kPage);
  }
};

namespace {

// This process's mappings of event pages, by name: an event opened in the
// process that created it shares the creator's mapping, so that the stream
// threads' atomics are one object (ThreadSanitizer orders accesses by
// address, and two mappings of one page would look unordered to it).
struct OpenPages {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<IpcPage>> pages;
};

OpenPages& P() {
  static OpenPages* pages = new OpenPages;  // never destroyed
  return *pages;
}

Status map_page(const std::string& name, bool create, std::shared_ptr<IpcPage>* out) {
  OpenPages& open = P();
  std::lock_guard<std::mutex> lock(open.mutex);
  for (auto it = open.pages.begin(); it != open.pages.end();) {
    it = it->second.expired() ? open.pages.erase(it) : std::next(it);
  }
  if (!create) {
    auto found = open.pages.find(name);
    if (found != open.pages.end()) {
      if (auto page = found->second.lock()) {
        *out = std::move(page);
        return Status::success;
      }
    }
  }
  const int fd =
      ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0), 0600);
  if (fd < 0) return create ? Status::out_of_memory : Status::invalid_value;
  if (create && ::ftruncate(fd, kPage) != 0) {
    ::close(fd);
    ::shm_unlink(name.c_str());
    return Status::out_of_memory;
  }
  void* p = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return Status::out_of_memory;
  auto page = std::make_shared<IpcPage>();
  page->name = name;
  page->layout = static_cast<Layout*>(p);
  open.pages[name] = page;
  *out = std::move(page);
  return Status::success;
}

void publish(Layout& page, std::uint64_t record) {
  std::uint64_t seen = page.completed.load(std::memory_order_relaxed);
  while (seen < record &&
         !page.completed.compare_exchange_weak(seen, record, std::memory_order_release)) {
  }
  page.futex.fetch_add(1, std::memory_order_release);
  ::syscall(SYS_futex, &page.futex, FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

bool recorder_gone(const Layout& page) {
  const std::int32_t pid = page.recorder_pid.load(std::memory_order_acquire);
  return pid > 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
}

// Until `record` completed, or its recorder died.
void wait_for(Layout& page, std::uint64_t record) {
  while (page.completed.load(std::memory_order_acquire) < record) {
    const std::uint32_t seen = page.futex.load(std::memory_order_acquire);
    if (page.completed.load(std::memory_order_acquire) >= record) return;
    timespec period{0, 5000000};  // 5 ms between checks of the recorder
    const long woke = ::syscall(SYS_futex, &page.futex, FUTEX_WAIT, seen, &period, nullptr, 0);
    if (woke != 0 && errno == ETIMEDOUT && recorder_gone(page) &&
        page.completed.load(std::memory_order_acquire) < record) {
      return;
    }
  }
}

}  // namespace

Status ipc_event_create(Context* context, EventRef* out) {
  std::call_once(g_swept, sweep_dead_creators);
  const std::string name = std::string("/") + kPagePrefix + std::to_string(::getpid()) + "-" +
                           std::to_string(g_next_page.fetch_add(1) + 1);
  std::shared_ptr<IpcPage> page;
  if (const Status s = map_page(name, true, &page); s != Status::success) return s;
  std::memcpy(page->layout->magic, kPageMagic, sizeof kPageMagic);
  auto event = std::make_shared<Event>(context);
  event->ipc = std::move(page);
  event->creator = true;
  *out = std::move(event);
  return Status::success;
}

Status ipc_event_handle(const EventRef& event, unsigned char (&out)[kIpcHandleBytes],
                        const char* api) {
  if (event->ipc == nullptr) {
    return invalid(api, "the event was not created with the interprocess flag");
  }
  std::memset(out, 0, sizeof out);
  std::memcpy(out, kHandleMagic, sizeof kHandleMagic);
  const std::string& name = event->ipc->name;
  if (name.size() + 1 > sizeof out - sizeof kHandleMagic) return Status::out_of_memory;
  std::memcpy(out + sizeof kHandleMagic, name.c_str(), name.size() + 1);
  return Status::success;
}

Status ipc_event_open(Context* context, const unsigned char (&in)[kIpcHandleBytes], EventRef* out,
                      const char* api) {
  if (std::memcmp(in, kHandleMagic, sizeof kHandleMagic) != 0 ||
      std::memchr(in + sizeof kHandleMagic, 0, sizeof in - sizeof kHandleMagic) == nullptr) {
    return invalid(api, "not an interprocess event handle");
  }
  const std::string name(reinterpret_cast<const char*>(in + sizeof kHandleMagic));
  std::shared_ptr<IpcPage> page;
  if (const Status s = map_page(name, false, &page); s != Status::success) {
    // Its event was destroyed (or never existed): not misuse of the API.
    return s;
  }
  if (std::memcmp(page->layout->magic, kPageMagic, sizeof kPageMagic) != 0) {
    return invalid(api, name + " is not an interprocess event page");
  }
  auto event = std::make_shared<Event>(context);
  event->ipc = std::move(page);
  *out = std::move(event);
  return Status::success;
}

void ipc_record(const std::shared_ptr<IpcPage>& page, const StreamRef& stream, const char* api) {
  Layout& layout = *page->layout;
  layout.recorder_pid.store(static_cast<std::int32_t>(::getpid()), std::memory_order_release);
  const std::uint64_t record = layout.recorded.fetch_add(1, std::memory_order_acq_rel) + 1;
  stream->enqueue(api, [page, record] {
    publish(*page->layout, record);
    return Status::success;
  });
}

bool ipc_complete(const IpcPage& page) {
  return page.layout->completed.load(std::memory_order_acquire) >=
         page.layout->recorded.load(std::memory_order_acquire);
}

void ipc_synchronize(const IpcPage& page) {
  wait_for(*page.layout, page.layout->recorded.load(std::memory_order_acquire));
}

void ipc_wait(const std::shared_ptr<IpcPage>& page, const StreamRef& stream) {
  const std::uint64_t record = page->layout->recorded.load(std::memory_order_acquire);
  if (page->layout->completed.load(std::memory_order_acquire) >= record) return;
  stream->enqueue("wait for an interprocess event", [page, record] {
    wait_for(*page->layout, record);
    return Status::success;
  });
}

void ipc_forget(IpcPage& page) {
  {
    OpenPages& open = P();
    std::lock_guard<std::mutex> lock(open.mutex);
    open.pages.erase(page.name);
  }
  ::shm_unlink(page.name.c_str());
}

}  // namespace anydev_emu::core
