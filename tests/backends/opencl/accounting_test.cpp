// SPDX-License-Identifier: Apache-2.0
// OpenCL device memory is accounted and refused at
// allocation time (docs/backends.md, "Memory accounting"). Runs twice from
// ctest: once against the device's own CL_DEVICE_GLOBAL_MEM_SIZE and once
// with ANYDEV_OPENCL_MEMORY_LIMIT=67108864, so that reaching the limit costs
// 64 MiB (PoCL backs buffers lazily; nothing is touched past that).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "plugin_fixture.h"

namespace {

using anydev_test::device_ref;
using anydev_test::last_error;

constexpr std::size_t kMiB = std::size_t{1} << 20;

// The limit ctest set, 0 when it set none.
std::size_t limit_from_env() {
  const char* text = std::getenv("ANYDEV_OPENCL_MEMORY_LIMIT");
  return text != nullptr ? static_cast<std::size_t>(std::strtoull(text, nullptr, 10)) : 0;
}

struct MemoryInfo {
  std::size_t free = 0;
  std::size_t total = 0;
};

MemoryInfo memory_info(const anydev_backend_table_t& table) {
  MemoryInfo info;
  EXPECT_EQ(table.memory_info(table.instance, 0, &info.free, &info.total), ANYDEV_SUCCESS)
      << last_error();
  return info;
}

bool host_unified_memory(const anydev_test::Plugin& plugin) {
  void* id = nullptr;
  if (plugin.table->native_handle(plugin.table->instance, 0, ANYDEV_NATIVE_DEVICE, nullptr, &id) !=
          ANYDEV_SUCCESS ||
      plugin.cl.get_device_info == nullptr) {
    return false;
  }
  cl_bool unified = CL_FALSE;
  plugin.cl.get_device_info(static_cast<cl_device_id>(id), CL_DEVICE_HOST_UNIFIED_MEMORY,
                            sizeof(unified), &unified, nullptr);
  return unified == CL_TRUE;
}

// Whether device 0 reports its own free memory (AMD's extension): then
// memory_info's free follows the driver, not only anydev's accounting.
bool reports_own_free_memory(const anydev_test::Plugin& plugin) {
  void* id = nullptr;
  if (plugin.table->native_handle(plugin.table->instance, 0, ANYDEV_NATIVE_DEVICE, nullptr, &id) !=
          ANYDEV_SUCCESS ||
      plugin.cl.get_device_info == nullptr) {
    return false;
  }
  char extensions[8192] = {};
  plugin.cl.get_device_info(static_cast<cl_device_id>(id), CL_DEVICE_EXTENSIONS,
                            sizeof(extensions) - 1, extensions, nullptr);
  return std::string(extensions).find("cl_amd_device_attribute_query") != std::string::npos;
}

TEST(OpenclAccounting, MemoryInfoReportsTotalMinusAllocated) {
  ANYDEV_REQUIRE_OPENCL(plugin);
  if (reports_own_free_memory(plugin)) {
    GTEST_SKIP() << "device 0 reports its own free memory (cl_amd_device_attribute_query)";
  }
  const anydev_backend_table_t& table = *plugin.table;
  const MemoryInfo before = memory_info(table);
  if (limit_from_env() != 0) {
    EXPECT_EQ(before.total, limit_from_env());
  }
  ASSERT_GE(before.free, 2 * kMiB);
  void* handle = nullptr;
  void* address = nullptr;
  ASSERT_EQ(table.device_alloc(table.instance, 0, kMiB, nullptr, &handle, &address), ANYDEV_SUCCESS)
      << last_error();
  const MemoryInfo during = memory_info(table);
  EXPECT_EQ(during.total, before.total);
  EXPECT_EQ(during.free, before.free - kMiB);
  ASSERT_EQ(table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_DEVICE, handle), ANYDEV_SUCCESS)
      << last_error();
  EXPECT_EQ(memory_info(table).free, before.free);
}

TEST(OpenclAccounting, HostBuffersCountOnlyOnDevicesSharingHostMemory) {
  ANYDEV_REQUIRE_OPENCL(plugin);
  if (reports_own_free_memory(plugin)) {
    GTEST_SKIP() << "device 0 reports its own free memory (cl_amd_device_attribute_query)";
  }
  const anydev_backend_table_t& table = *plugin.table;
  const MemoryInfo before = memory_info(table);
  void* handle = nullptr;
  void* address = nullptr;
  ASSERT_EQ(table.host_alloc(table.instance, 0, kMiB, &handle, &address), ANYDEV_SUCCESS)
      << last_error();
  const std::size_t expected = host_unified_memory(plugin) ? before.free - kMiB : before.free;
  EXPECT_EQ(memory_info(table).free, expected);
  ASSERT_EQ(table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_HOST, handle), ANYDEV_SUCCESS)
      << last_error();
  EXPECT_EQ(memory_info(table).free, before.free);
}

// Fills the device up to its limit in 4 MiB buffers, then asks for more.
TEST(OpenclAccounting, DeviceAllocationsPastTheLimitAreRefused) {
  ANYDEV_REQUIRE_OPENCL(plugin);
  const std::size_t limit = limit_from_env();
  if (limit == 0) GTEST_SKIP() << "needs ANYDEV_OPENCL_MEMORY_LIMIT (the ctest entry sets it)";
  const anydev_backend_table_t& table = *plugin.table;
  ASSERT_EQ(memory_info(table).free, limit) << "another allocation is still live";
  std::vector<void*> buffers;
  void* address = nullptr;
  for (std::size_t taken = 0; taken + 4 * kMiB <= limit; taken += 4 * kMiB) {
    void* handle = nullptr;
    ASSERT_EQ(table.device_alloc(table.instance, 0, 4 * kMiB, nullptr, &handle, &address),
              ANYDEV_SUCCESS)
        << last_error();
    buffers.push_back(handle);
  }
  const std::size_t left = limit - buffers.size() * 4 * kMiB;
  EXPECT_EQ(memory_info(table).free, left);

  // One byte more than what is left: refused, naming the sizes and the limit.
  void* refused = nullptr;
  EXPECT_EQ(table.device_alloc(table.instance, 0, left + 1, nullptr, &refused, &address),
            ANYDEV_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(refused, nullptr);
  const std::string message = last_error();
  EXPECT_NE(message.find("device_alloc of " + std::to_string(left + 1) + " bytes"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(std::to_string(limit)), std::string::npos) << message;
  EXPECT_NE(message.find("ANYDEV_OPENCL_MEMORY_LIMIT"), std::string::npos) << message;
  EXPECT_EQ(memory_info(table).free, left) << "a refused allocation changed the accounting";

  // Every buffer up to the limit is usable: a fill of each completes.
  anydev_bk_stream_t stream = nullptr;
  ASSERT_EQ(table.stream_create(table.instance, 0, &stream), ANYDEV_SUCCESS) << last_error();
  const unsigned pattern = 0x5a5a5a5au;
  for (void* handle : buffers) {
    EXPECT_EQ(
        table.fill(table.instance, stream, device_ref(handle), &pattern, sizeof(pattern), 4 * kMiB),
        ANYDEV_SUCCESS)
        << last_error();
  }
  EXPECT_EQ(table.stream_synchronize(table.instance, stream), ANYDEV_SUCCESS) << last_error();
  EXPECT_EQ(table.stream_destroy(table.instance, stream), ANYDEV_SUCCESS) << last_error();

  // Freeing one buffer makes exactly its room again.
  ASSERT_EQ(table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_DEVICE, buffers.back()),
            ANYDEV_SUCCESS);
  buffers.pop_back();
  EXPECT_EQ(memory_info(table).free, left + 4 * kMiB);
  void* again = nullptr;
  EXPECT_EQ(table.device_alloc(table.instance, 0, 4 * kMiB, nullptr, &again, &address),
            ANYDEV_SUCCESS)
      << last_error();
  buffers.push_back(again);
  for (void* handle : buffers) {
    EXPECT_EQ(table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_DEVICE, handle),
              ANYDEV_SUCCESS);
  }
  EXPECT_EQ(memory_info(table).free, limit);
}

// Pinned host buffers on a device that shares the host's memory come out of
// the same limit.
TEST(OpenclAccounting, HostAllocationsPastTheLimitAreRefusedOnSharedMemory) {
  ANYDEV_REQUIRE_OPENCL(plugin);
  const std::size_t limit = limit_from_env();
  if (limit == 0) GTEST_SKIP() << "needs ANYDEV_OPENCL_MEMORY_LIMIT (the ctest entry sets it)";
  if (!host_unified_memory(plugin)) {
    GTEST_SKIP() << "device 0 does not share the host's memory: host buffers do not count";
  }
  const anydev_backend_table_t& table = *plugin.table;
  void* device_buffer = nullptr;
  void* address = nullptr;
  ASSERT_EQ(table.device_alloc(table.instance, 0, limit - kMiB, nullptr, &device_buffer, &address),
            ANYDEV_SUCCESS)
      << last_error();
  void* host = nullptr;
  EXPECT_EQ(table.host_alloc(table.instance, 0, 2 * kMiB, &host, &address),
            ANYDEV_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(last_error().find("host_alloc of " + std::to_string(2 * kMiB) + " bytes"),
            std::string::npos)
      << last_error();
  ASSERT_EQ(table.host_alloc(table.instance, 0, kMiB, &host, &address), ANYDEV_SUCCESS)
      << last_error();
  EXPECT_EQ(memory_info(table).free, 0u);
  EXPECT_EQ(table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_HOST, host), ANYDEV_SUCCESS);
  EXPECT_EQ(table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_DEVICE, device_buffer),
            ANYDEV_SUCCESS);
  EXPECT_EQ(memory_info(table).free, limit);
}

// Threads racing for the last bytes never take the device past its limit.
TEST(OpenclAccounting, ConcurrentAllocationsNeverExceedTheLimit) {
  ANYDEV_REQUIRE_OPENCL(plugin);
  const std::size_t limit = limit_from_env();
  if (limit == 0) GTEST_SKIP() << "needs ANYDEV_OPENCL_MEMORY_LIMIT (the ctest entry sets it)";
  const anydev_backend_table_t& table = *plugin.table;
  constexpr int kThreads = 4;
  const std::size_t piece = 4 * kMiB;
  const std::size_t fits = limit / piece;
  std::atomic<std::size_t> granted{0};
  std::vector<std::vector<void*>> held(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < fits; ++i) {
        void* handle = nullptr;
        void* address = nullptr;
        if (table.device_alloc(table.instance, 0, piece, nullptr, &handle, &address) ==
            ANYDEV_SUCCESS) {
          held[static_cast<std::size_t>(t)].push_back(handle);
          granted.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(granted.load(), fits);
  EXPECT_EQ(memory_info(table).free, limit - fits * piece);
  for (auto& list : held) {
    for (void* handle : list) {
      EXPECT_EQ(table.memory_free(table.instance, 0, ANYDEV_BK_MEMORY_DEVICE, handle),
                ANYDEV_SUCCESS);
    }
  }
  EXPECT_EQ(memory_info(table).free, limit);
}

// Run by its own ctest entry with a malformed ANYDEV_OPENCL_MEMORY_LIMIT.
TEST(OpenclLimitVariable, MalformedLimitMakesTheBackendUnavailable) {
  const char* text = std::getenv("ANYDEV_OPENCL_MEMORY_LIMIT");
  if (text == nullptr || std::string(text) != "64MiB") {
    GTEST_SKIP() << "needs ANYDEV_OPENCL_MEMORY_LIMIT=64MiB (the ctest entry sets it)";
  }
  const anydev_test::Plugin& plugin = anydev_test::open_plugin();
  ASSERT_NE(plugin.table, nullptr) << plugin.init_message;
  if (plugin.init_message.find("no OpenCL platform") != std::string::npos) {
    GTEST_SKIP() << "no OpenCL platform: " << plugin.init_message;
  }
  EXPECT_EQ(plugin.init_status, ANYDEV_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(plugin.init_message.find("ANYDEV_OPENCL_MEMORY_LIMIT=\"64MiB\""), std::string::npos)
      << plugin.init_message;
}

}  // namespace
