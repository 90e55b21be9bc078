// SPDX-License-Identifier: Apache-2.0
#include "cpu_registered.h"

#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cpu_pages.h"
#include "cpu_services.h"

namespace anydev::cpu {
namespace {

struct Registration {
  void* page_begin;
  std::size_t page_bytes;
  bool locked;
};

std::mutex g_mutex;
std::unordered_map<void*, Registration>* g_registrations = nullptr;  // leaked: outlives exit
std::once_flag g_once;
std::atomic<bool> g_lock_failure_logged{false};

std::unordered_map<void*, Registration>& registrations() {
  std::call_once(g_once, [] {
    g_registrations = new std::unordered_map<void*, Registration>;
    ::pthread_atfork([] { g_mutex.lock(); }, [] { g_mutex.unlock(); }, [] { g_mutex.unlock(); });
  });
  return *g_registrations;
}

std::string range_text(void* pointer, std::size_t bytes) {
  char text[96];
  std::snprintf(text, sizeof text, "%zu bytes at %p", bytes, pointer);
  return text;
}

}  // namespace

anydev_status_t register_host(void* pointer, std::size_t bytes, void** handle) {
  const std::size_t page = page_bytes();
  const auto start = reinterpret_cast<std::uintptr_t>(pointer);
  const std::uintptr_t page_start = start & ~(std::uintptr_t{page} - 1);
  const std::size_t length =
      ((start + bytes + page - 1) & ~(std::uintptr_t{page} - 1)) - page_start;
  void* const pages = reinterpret_cast<void*>(page_start);
  // msync fails with ENOMEM when part of the range is not mapped: the one
  // check that tells unmapped memory from a lock limit (mlock answers ENOMEM
  // for both).
  if (::msync(pages, length, MS_ASYNC) != 0 && errno == ENOMEM) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     "cpu host_register of " + range_text(pointer, bytes) +
                         ": part of the range is not mapped memory of this process");
  }
  bool locked = false;
  if (lock_pinned_memory()) {
    locked = ::mlock(pages, length) == 0;
    if (!locked) {
      const int error = errno;
      if (!g_lock_failure_logged.exchange(true, std::memory_order_relaxed)) {
        log(ANYDEV_LOG_WARN, "host_register: mlock of " + std::to_string(length) +
                                 " bytes failed: " + errno_text(error) + "; RLIMIT_MEMLOCK is " +
                                 memlock_limit_text() +
                                 ". Registered memory that cannot be locked stays pageable "
                                 "(anydev_buffer_is_locked says 0; logged once)");
      }
    }
  }
  {
    std::lock_guard lock(g_mutex);
    auto& live = registrations();
    if (!live.emplace(pointer, Registration{pages, length, locked}).second) {
      if (locked) ::munlock(pages, length);
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "cpu host_register of " +
                                                          range_text(pointer, bytes) +
                                                          ": the pointer is already registered");
    }
  }
  *handle = pointer;
  return ANYDEV_SUCCESS;
}

anydev_status_t unregister_host(void* handle) {
  Registration registration{};
  {
    std::lock_guard lock(g_mutex);
    auto& live = registrations();
    auto it = live.find(handle);
    if (it == live.end()) {
      char text[64];
      std::snprintf(text, sizeof text, "%p", handle);
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                       std::string("cpu host_unregister(") + text + "): not registered memory");
    }
    registration = it->second;
    live.erase(it);
  }
  if (registration.locked) ::munlock(registration.page_begin, registration.page_bytes);
  return ANYDEV_SUCCESS;
}

bool registered_memory_locked(void* handle, bool* locked) {
  std::lock_guard lock(g_mutex);
  auto& live = registrations();
  auto it = live.find(handle);
  if (it == live.end()) return false;
  *locked = it->second.locked;
  return true;
}

}  // namespace anydev::cpu
