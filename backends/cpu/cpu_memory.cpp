// SPDX-License-Identifier: Apache-2.0
#include "cpu_memory.h"

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "cpu_device_info.h"
#include "cpu_services.h"
#include "cpu_small_blocks.h"

namespace anydev::cpu {
namespace {

// One live large allocation: its page-rounded length, kind and lock state.
struct Mapping {
  std::size_t length;
  MemoryKind kind;
  bool locked;
};

// Live large allocations. Leaked on purpose: frees may come from other
// threads while static destructors run at exit.
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

const char* operation_name(MemoryKind kind) {
  return kind == MemoryKind::kPinnedHost ? "host_alloc" : "device_alloc";
}

const char* kind_name(MemoryKind kind) {
  return kind == MemoryKind::kPinnedHost ? "pinned host memory" : "device memory";
}

std::string address_text(const void* address) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", address);
  return text;
}

anydev_status_t not_live(const char* op, MemoryKind kind, const void* address) {
  return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                   std::string("cpu ") + op + "(" + address_text(address) + ", " + kind_name(kind) +
                       "): not a live allocation of the cpu backend");
}

anydev_status_t wrong_kind(const char* op, MemoryKind kind, const void* address,
                           MemoryKind actual) {
  return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                   std::string("cpu ") + op + "(" + address_text(address) + ", " + kind_name(kind) +
                       "): the allocation is " + kind_name(actual));
}

void lock_before_fork() {
  registry().mutex.lock();
  lock_small_blocks_before_fork();
}
void unlock_after_fork() {
  unlock_small_blocks_after_fork();
  registry().mutex.unlock();
}

}  // namespace

void install_fork_handlers() {
  // Once per process, without a C++ static guard (see registry()).
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  registry();
  small_block_stats();  // creates the allocator's state before any fork
  if (pthread_atfork(lock_before_fork, unlock_after_fork, unlock_after_fork) != 0) {
    log(ANYDEV_LOG_WARN, "pthread_atfork failed: a forked child may not allocate");
  }
}

anydev_status_t allocate_pages(MemoryKind kind, std::size_t bytes, void** out) {
  if (is_small_block(bytes)) return allocate_small_block(kind, bytes, out);
  // Built only when an error is reported.
  const auto op = [&] {
    return std::string("cpu ") + operation_name(kind) +
           "(device=0, bytes=" + std::to_string(bytes) + ")";
  };
  const std::size_t page = page_bytes();
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
  PageMapping mapping;
  int error = 0;
  constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
  if (!map_pages(kind, length, page, &mapping, &error, length >= kHugePageBytes)) {
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY, op() + ": mmap of " + std::to_string(length) +
                                                     " bytes failed: " + errno_text(error));
  }
  try {
    Registry& reg = registry();
    std::lock_guard<std::mutex> hold(reg.mutex);
    reg.mappings.emplace(mapping.address,
                         Mapping{.length = length, .kind = kind, .locked = mapping.locked});
  } catch (const std::bad_alloc&) {
    unmap_pages(mapping.address, length);
    return set_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                     op() + ": out of host memory for the allocation registry");
  }
  *out = mapping.address;
  return ANYDEV_SUCCESS;
}

anydev_status_t free_pages(MemoryKind kind, void* address) {
  MemoryKind actual = kind;
  switch (free_small_block(kind, address, &actual)) {
    case SmallBlockLookup::kFound:
      return ANYDEV_SUCCESS;
    case SmallBlockLookup::kWrongKind:
      return wrong_kind("memory_free", kind, address, actual);
    case SmallBlockLookup::kNotLiveBlock:
      return not_live("memory_free", kind, address);
    case SmallBlockLookup::kNotSmall:
      break;
  }
  Mapping mapping{};
  {
    Registry& reg = registry();
    std::lock_guard<std::mutex> hold(reg.mutex);
    const auto it = reg.mappings.find(address);
    if (it == reg.mappings.end()) return not_live("memory_free", kind, address);
    if (it->second.kind != kind) return wrong_kind("memory_free", kind, address, it->second.kind);
    mapping = it->second;
    reg.mappings.erase(it);
  }
  if (const int error = unmap_pages(address, mapping.length); error != 0) {
    return set_error(ANYDEV_ERROR_INTERNAL, "cpu memory_free(" + address_text(address) +
                                                "): munmap of " + std::to_string(mapping.length) +
                                                " bytes failed: " + errno_text(error));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t memory_locked(MemoryKind kind, void* address, bool* locked) {
  MemoryKind actual = kind;
  switch (small_block_locked(kind, address, locked, &actual)) {
    case SmallBlockLookup::kFound:
      return ANYDEV_SUCCESS;
    case SmallBlockLookup::kWrongKind:
      return wrong_kind("memory_is_locked", kind, address, actual);
    case SmallBlockLookup::kNotLiveBlock:
      return not_live("memory_is_locked", kind, address);
    case SmallBlockLookup::kNotSmall:
      break;
  }
  Registry& reg = registry();
  std::lock_guard<std::mutex> hold(reg.mutex);
  const auto it = reg.mappings.find(address);
  if (it == reg.mappings.end()) return not_live("memory_is_locked", kind, address);
  if (it->second.kind != kind) {
    return wrong_kind("memory_is_locked", kind, address, it->second.kind);
  }
  *locked = it->second.locked;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cpu
