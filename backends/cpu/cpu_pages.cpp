// SPDX-License-Identifier: Apache-2.0
#include "cpu_pages.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "cpu_services.h"

namespace anydev::cpu {
namespace {

std::atomic<bool> g_lock_pinned{true};
std::atomic<bool> g_lock_failure_logged{false};

// Locks the range; logs the first failure of the process at debug level (the
// core warns once per backend when it learns that host memory is pageable).
bool lock_or_log(void* address, std::size_t length) {
  if (mlock(address, length) == 0) return true;
  const int error = errno;
  if (!g_lock_failure_logged.exchange(true, std::memory_order_relaxed)) {
    log(ANYDEV_LOG_DEBUG,
        "host_alloc: mlock of " + std::to_string(length) + " bytes failed: " + errno_text(error) +
            "; RLIMIT_MEMLOCK is " + memlock_limit_text() +
            ". Pinned host memory that cannot be locked stays populated but pageable (logged "
            "once; set ANYDEV_CPU_MLOCK=0 to stop trying)");
  }
  return false;
}

// Faults in every page of a fresh private anonymous range (which reads as
// zeros, so writing zeros changes nothing).
void populate(void* address, std::size_t length) {
  auto* bytes = static_cast<volatile unsigned char*>(address);
  const std::size_t page = page_bytes();
  for (std::size_t offset = 0; offset < length; offset += page) bytes[offset] = 0;
}

}  // namespace

void set_lock_pinned_memory(bool lock) { g_lock_pinned.store(lock, std::memory_order_relaxed); }

bool lock_pinned_memory() { return g_lock_pinned.load(std::memory_order_relaxed); }

std::size_t page_bytes() {
  // No C++ static guard (fork-safe): racing threads read the same value.
  static std::atomic<std::size_t> page{0};
  std::size_t known = page.load(std::memory_order_relaxed);
  if (known != 0) return known;
  const long value = sysconf(_SC_PAGESIZE);
  known = value > 0 ? static_cast<std::size_t>(value) : std::size_t{4096};
  page.store(known, std::memory_order_relaxed);
  return known;
}

bool map_pages(MemoryKind kind, std::size_t length, std::size_t alignment, PageMapping* out,
               int* error, bool huge_pages) {
  const std::size_t page = page_bytes();
  const bool pinned = kind == MemoryKind::kPinnedHost;
  const bool lock = pinned && lock_pinned_memory();
  // Huge pages leave fewer pages for the kernel to pin or walk when another
  // process reads the buffer (UCX's cma) and fewer TLB misses in copies;
  // with THP set to "madvise" this is what turns them on.
  const auto advise = [&](void* address) {
    if (huge_pages) madvise(address, length, MADV_HUGEPAGE);
  };
  if (alignment <= page) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
    if (pinned && !huge_pages) flags |= MAP_POPULATE;
    void* address = mmap(nullptr, length, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (address == MAP_FAILED) {
      *error = errno;
      return false;
    }
    advise(address);
    out->address = address;
    out->locked = lock && lock_or_log(address, length);
    if (pinned && huge_pages && !out->locked) populate(address, length);
    return true;
  }
  // Over-map by alignment - page, then trim both ends to the aligned range.
  const std::size_t span = length + alignment - page;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    *error = errno;
    return false;
  }
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + alignment - 1) & ~(std::uintptr_t{alignment} - 1);
  const std::size_t head = aligned - start;
  const std::size_t tail = span - head - length;
  if (head != 0) munmap(raw, head);
  if (tail != 0) munmap(reinterpret_cast<void*>(aligned + length), tail);
  void* address = reinterpret_cast<void*>(aligned);
  advise(address);
  out->address = address;
  out->locked = lock && lock_or_log(address, length);  // mlock faults the pages in
  if (pinned && !out->locked) populate(address, length);
  return true;
}

int unmap_pages(void* address, std::size_t length) {
  return munmap(address, length) == 0 ? 0 : errno;
}

std::string errno_text(int error) {
  char buffer[128];
  // GNU strerror_r: returns the text, which may or may not be in `buffer`.
  const char* text = strerror_r(error, buffer, sizeof buffer);
  return std::string(text) + " (errno " + std::to_string(error) + ")";
}

std::string memlock_limit_text() {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0) return "unknown";
  if (limit.rlim_cur == RLIM_INFINITY) return "unlimited";
  return std::to_string(limit.rlim_cur) + " bytes";
}

}  // namespace anydev::cpu
