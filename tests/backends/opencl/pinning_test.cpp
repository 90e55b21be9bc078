// SPDX-License-Identifier: Apache-2.0
// opencl pinning: memory_is_locked tells the truth about pinned
// host buffers. PoCL does not lock CL_MEM_ALLOC_HOST_PTR memory, so the
// backend must say 0 there; after the test mlock()s the buffer it must say 1.
// The test's own reading of /proc/self/smaps ("Locked:" = "Size:" of every
// mapping over the buffer) is the reference.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "plugin_fixture.h"

namespace {

using anydev_test::last_error;

// Whether every mapping overlapping [begin, begin + bytes) is locked entirely.
bool kernel_says_locked(const void* begin, std::size_t bytes) {
  const auto low = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t high = low + bytes;
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool overlapping = false;
  std::uintmax_t size_kb = 0;
  bool all_locked = true;
  bool any = false;
  while (std::getline(smaps, line)) {
    std::uintmax_t from = 0;
    std::uintmax_t to = 0;
    char dash = 0;
    if (std::sscanf(line.c_str(), "%jx%c%jx", &from, &dash, &to) == 3 && dash == '-' &&
        line.find(':') > line.find(' ')) {
      overlapping = from < high && to > low;
      any = any || overlapping;
      continue;
    }
    std::uintmax_t kb = 0;
    if (overlapping && std::sscanf(line.c_str(), "Size: %ju kB", &kb) == 1) size_kb = kb;
    if (overlapping && std::sscanf(line.c_str(), "Locked: %ju kB", &kb) == 1 && kb != size_kb) {
      all_locked = false;
    }
  }
  return any && all_locked;
}

int backend_says_locked(const anydev_backend_table_t& table, void* handle) {
  int locked = -1;
  EXPECT_EQ(table.memory_is_locked(table.instance, 0, handle, &locked), ANYDEV_SUCCESS)
      << last_error();
  return locked;
}

TEST(OpenclPinning, MemoryIsLockedMatchesTheKernel) {
  ANYDEV_REQUIRE_OPENCL(plugin);
  const anydev_backend_table_t& table = *plugin.table;
  ASSERT_NE(table.memory_is_locked, nullptr)
      << "without the entry the core reports every opencl host buffer as locked";
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  void* handle = nullptr;
  void* address = nullptr;
  ASSERT_EQ(table.host_alloc(table.instance, 0, kBytes, &handle, &address), ANYDEV_SUCCESS)
      << last_error();
  std::memset(address, 1, kBytes);
  EXPECT_EQ(backend_says_locked(table, handle), kernel_says_locked(address, kBytes) ? 1 : 0);

  if (mlock(address, kBytes) != 0) {
    const int error = errno;
    table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_HOST, handle);
    GTEST_SKIP() << "mlock of 1 MiB failed (" << std::strerror(error)
                 << "; RLIMIT_MEMLOCK too low?): the locked case is not checked";
  }
  const bool locked_now = kernel_says_locked(address, kBytes);
  EXPECT_EQ(backend_says_locked(table, handle), locked_now ? 1 : 0);
  munlock(address, kBytes);
  if (!locked_now) {
    table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_HOST, handle);
    // AddressSanitizer's mlock interceptor returns 0 without locking.
    GTEST_SKIP() << "mlock returned 0 but the kernel shows the pages unlocked (a sanitizer "
                    "build makes mlock a no-op): only the unlocked case was checked";
  }
  EXPECT_EQ(backend_says_locked(table, handle), kernel_says_locked(address, kBytes) ? 1 : 0);
  EXPECT_EQ(table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_HOST, handle), ANYDEV_SUCCESS);
}

TEST(OpenclPinning, MemoryIsLockedRejectsWhatIsNotAHostBuffer) {
  ANYDEV_REQUIRE_OPENCL(plugin);
  const anydev_backend_table_t& table = *plugin.table;
  ASSERT_NE(table.memory_is_locked, nullptr);
  void* device_buffer = nullptr;
  void* address = nullptr;
  ASSERT_EQ(table.device_alloc(table.instance, 0, 4096, nullptr, &device_buffer, &address),
            ANYDEV_SUCCESS);
  int locked = -1;
  EXPECT_EQ(table.memory_is_locked(table.instance, 0, device_buffer, &locked),
            ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("device buffer"), std::string::npos) << last_error();
  int on_stack = 0;
  EXPECT_EQ(table.memory_is_locked(table.instance, 0, &on_stack, &locked),
            ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table.memory_is_locked(table.instance, 0, nullptr, &locked),
            ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(locked, -1) << "a refused query wrote its output";
  void* host = nullptr;
  ASSERT_EQ(table.host_alloc(table.instance, 0, 4096, &host, &address), ANYDEV_SUCCESS);
  EXPECT_EQ(table.memory_is_locked(table.instance, 0, host, nullptr),
            ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_HOST, host), ANYDEV_SUCCESS);
  EXPECT_EQ(table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_DEVICE, device_buffer),
            ANYDEV_SUCCESS);
}

}  // namespace
