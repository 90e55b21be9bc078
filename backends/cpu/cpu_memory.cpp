#include "cpu_memory.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "cpu_device_info.h"
#include "cpu_services.h"

namespace anydev::cpu {
namespace {

// One live allocation: its page-rounded length and kind.
struct Mapping {
  std::size_t length;
  MemoryKind kind;
};

// Live allocations. Leaked on purpose: frees may come from other threads
// while static destructors run at exit.
struct Registry {
  std::mutex mutex;
  std::unordered_map<void*, Mapping> mappings;
};

// Made on first use without a C++ static guard (a fork() during a guarded
// initialisation would leave the guard locked in the child): racing threads
// each make one, the first published wins.
std::atomic<Registry*> g_registry{nullptr};

Registry& registry() {
  Registry* instance = g_registry.load(std::memory_order_acquire);
  if (instance != nullptr) return *instance;
  auto* fresh = new Registry;
  if (g_registry.compare_exchange_strong(instance, fresh, std::memory_order_acq_rel)) {
    return *fresh;
  }
  delete fresh;
  return *instance;
}

std::atomic<bool> g_lock_pinned{true};
std::atomic<bool> g_lock_failure_logged{false};

const char* operation_name(MemoryKind kind) {
  return kind == MemoryKind::kPinnedHost ? "host_alloc" : "device_alloc";
}

const char* kind_name(MemoryKind kind) {
  return kind == MemoryKind::kPinnedHost ? "pinned host memory" : "device memory";
}

std::string errno_text(int error) {
  char buffer[128];
  // GNU strerror_r: returns the text, which may or may not be in `buffer`.
  const char* text = strerror_r(error, buffer, sizeof buffer);
  return std::string(text) + " (errno " + std::to_string(error) + ")";
}

std::string address_text(const void* address) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", address);
  return text;
}

std::string memlock_limit_text() {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0) return "unknown";
  if (limit.rlim_cur == RLIM_INFINITY) return "unlimited";
  return std::to_string(limit.rlim_cur) + " bytes";
}

void lock_or_log(void* address, std::size_t length) {
  if (mlock(address, length) == 0) return;
  const int error = errno;
  if (!g_lock_failure_logged.exchange(true, std::memory_order_relaxed)) {
    log(ANYDEV_LOG_DEBUG,
        "host_alloc: mlock of " + std::to_string(length) + " bytes failed: " + errno_text(error) +
            "; RLIMIT_MEMLOCK is " + memlock_limit_text() +
            ". Pinned host memory that cannot be locked stays populated but pageable (logged "
            "once; set ANYDEV_CPU_MLOCK=0 to stop trying)");
  }
}

void lock_registry_before_fork() { registry().mutex.lock(); }
void unlock_registry_after_fork() { registry().mutex.unlock(); }

}  // namespace

void set_lock_pinned_memory(bool lock) { g_lock_pinned.store(lock, std::memory_order_relaxed); }

bool lock_pinned_memory() { return g_lock_pinned.load(std::memory_order_relaxed); }

void install_fork_handlers() {
  // Once per process, without a C++ static guard (see registry()).
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  registry();
  if (pthread_atfork(lock_registry_before_fork, unlock_registry_after_fork,
                     unlock_registry_after_fork) != 0) {
    log(ANYDEV_LOG_WARN, "pthread_atfork failed: a forked child may not allocate");
  }
}

anydev_status_t allocate_pages(MemoryKind kind, std::size_t bytes, void** out) {
  // Built only when an error is reported.
  const auto op = [&] {
    return std::string("cpu ") + operation_name(kind) +
           "(device=0, bytes=" + std::to_string(bytes) + ")";
  };
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (bytes > SIZE_MAX - (page - 1)) {
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                     op() + ": the byte count cannot be rounded up to whole pages");
  }
  const std::size_t length = (bytes + page - 1) / page * page;
  if (bytes >= kAvailabilityCheckBytes) {
    const MemoryStatus memory = read_memory_status();
    if (memory.total_bytes != 0 && length > memory.available_bytes) {
      return set_error(ANYDEV_ERROR_OUT_OF_MEMORY, op() + ": only " +
                                                       std::to_string(memory.available_bytes) +
                                                       " of " + std::to_string(memory.total_bytes) +
                                                       " bytes of host memory are available");
    }
  }
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
  if (kind == MemoryKind::kPinnedHost) flags |= MAP_POPULATE;
  void* address = mmap(nullptr, length, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (address == MAP_FAILED) {
    const int error = errno;
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY, op() + ": mmap of " + std::to_string(length) +
                                                     " bytes failed: " + errno_text(error));
  }
  if (kind == MemoryKind::kPinnedHost && lock_pinned_memory()) lock_or_log(address, length);
  try {
    Registry& reg = registry();
    std::lock_guard<std::mutex> hold(reg.mutex);
    reg.mappings.emplace(address, Mapping{.length = length, .kind = kind});
  } catch (const std::bad_alloc&) {
    munmap(address, length);
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                     op() + ": out of host memory for the allocation registry");
  }
  *out = address;
  return ANYDEV_SUCCESS;
}

anydev_status_t free_pages(MemoryKind kind, void* address) {
  Mapping mapping{};
  {
    Registry& reg = registry();
    std::lock_guard<std::mutex> hold(reg.mutex);
    const auto it = reg.mappings.find(address);
    if (it == reg.mappings.end()) {
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                       "cpu memory_free(" + address_text(address) + ", " + kind_name(kind) +
                           "): not a live allocation of the cpu backend");
    }
    if (it->second.kind != kind) {
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                       "cpu memory_free(" + address_text(address) + ", " + kind_name(kind) +
                           "): the allocation is " + kind_name(it->second.kind));
    }
    mapping = it->second;
    reg.mappings.erase(it);
  }
  if (munmap(address, mapping.length) != 0) {
    const int error = errno;
    return set_error(ANYDEV_ERROR_INTERNAL, "cpu memory_free(" + address_text(address) +
                                                "): munmap of " + std::to_string(mapping.length) +
                                                " bytes failed: " + errno_text(error));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cpu
