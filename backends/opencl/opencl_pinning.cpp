// SPDX-License-Identifier: Apache-2.0
// Whether a pinned host buffer's pages are really locked.
//
// OpenCL has no query for it: CL_MEM_ALLOC_HOST_PTR asks for host-accessible
// memory, and whether the driver page-locks it is the driver's business.
// PoCL 3.1 does not: its mapped pointer lies in an ordinary anonymous mapping
// ("Locked: 0 kB" in /proc/self/smaps). So the answer is read from the
// kernel: the buffer is locked when every mapping that covers its bytes has
// the VmFlags `lo` (mlock'ed) or `io` (driver memory that is never paged
// out). When /proc/self/smaps cannot be read the buffer is reported as not
// locked: the backend never claims what it cannot see. Stateless and
// thread-safe (each call reads the file afresh).
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "opencl_entries.h"
#include "opencl_memory.h"
#include "opencl_services.h"

namespace anydev::opencl {
namespace {

// Whether the VmFlags line names `lo` or `io`.
bool flags_pin(const char* line) {
  for (const char* p = std::strchr(line, ':'); p != nullptr && *p != '\0'; ++p) {
    if ((p[0] == 'l' && p[1] == 'o') || (p[0] == 'i' && p[1] == 'o')) {
      const bool starts = p[-1] == ' ' || p[-1] == '\t';
      const bool ends = p[2] == ' ' || p[2] == '\n' || p[2] == '\0';
      if (starts && ends) return true;
    }
  }
  return false;
}

// True when [begin, end) is covered by mappings that are all pinned.
bool range_is_pinned(std::uintptr_t begin, std::uintptr_t end) {
  std::FILE* smaps = std::fopen("/proc/self/smaps", "re");
  if (smaps == nullptr) return false;
  char* line = nullptr;
  std::size_t capacity = 0;
  std::uintptr_t covered = 0;
  bool overlapping = false;
  bool all_pinned = true;
  std::uintptr_t low = 0;
  std::uintptr_t high = 0;
  while (getline(&line, &capacity, smaps) > 0) {
    std::uintmax_t from = 0;
    std::uintmax_t to = 0;
    int consumed = 0;
    if (std::sscanf(line, "%jx-%jx %n", &from, &to, &consumed) == 2 && consumed > 0) {
      low = static_cast<std::uintptr_t>(from);
      high = static_cast<std::uintptr_t>(to);
      overlapping = low < end && high > begin;
      if (overlapping) covered += (high < end ? high : end) - (low > begin ? low : begin);
      continue;
    }
    if (overlapping && std::strncmp(line, "VmFlags:", 8) == 0 && !flags_pin(line)) {
      all_pinned = false;
    }
  }
  std::free(line);
  std::fclose(smaps);
  return all_pinned && covered == end - begin;
}

}  // namespace

anydev_status_t memory_is_locked(int device_index, void* handle, int* locked) {
  if (locked == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "memory_is_locked: the output is NULL");
  }
  Allocation allocation;
  if (handle == nullptr || !find_allocation(handle, &allocation)) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("memory_is_locked: ", handle, " is not a live OpenCL allocation"));
  }
  if (allocation.kind != ANYDEV_BK_MEMORY_HOST) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("memory_is_locked: ", handle,
                         " is a device buffer, not a pinned host buffer from host_alloc"));
  }
  if (allocation.device->index != device_index) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("memory_is_locked: ", handle, " was allocated on OpenCL device ",
                         allocation.device->index, ", not on device ", device_index));
  }
  const auto begin = reinterpret_cast<std::uintptr_t>(allocation.host);
  *locked = range_is_pinned(begin, begin + allocation.bytes) ? 1 : 0;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::opencl
