// SPDX-License-Identifier: Apache-2.0
// One answer to an ABI mismatch from every backend: the kit's check_entry
// (include/anydev/kit/entry.h), and the entry points of cpu, opencl, cuda and hip
// called with a backend ABI version they were not built for.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "anydev/kit/entry.h"
#include "runtime/builtin_backends.h"

namespace {

// The last error the fake core was given (the tests run one at a time).
anydev_status_t g_status = ANYDEV_SUCCESS;
std::string g_message;

anydev_status_t record_error(anydev_status_t status, const char* message) {
  g_status = status;
  g_message = message != nullptr ? message : "";
  return status;
}

const anydev_core_services_t kFakeCore = [] {
  anydev_core_services_t core{};
  core.struct_size = sizeof(core);
  core.set_error = record_error;
  return core;
}();

void reset() {
  g_status = ANYDEV_SUCCESS;
  g_message.clear();
}

constexpr std::uint32_t kOtherAbi = ANYDEV_BACKEND_ABI_VERSION + 1;

void expect_abi_refused(anydev_status_t status, const char* backend) {
  EXPECT_EQ(status, ANYDEV_ERROR_BACKEND_UNAVAILABLE) << backend;
  EXPECT_EQ(g_status, ANYDEV_ERROR_BACKEND_UNAVAILABLE) << backend;
  EXPECT_NE(g_message.find(std::to_string(kOtherAbi)), std::string::npos) << g_message;
  EXPECT_NE(g_message.find(std::to_string(ANYDEV_BACKEND_ABI_VERSION)), std::string::npos)
      << g_message;
  EXPECT_NE(g_message.find(backend), std::string::npos) << g_message;
}

TEST(KitEntry, AbiMismatchIsBackendUnavailableNamingBothVersions) {
  reset();
  anydev::kit::core_services services("kitbackend");
  services.store(&kFakeCore);
  const anydev_backend_table_t* table = nullptr;
  expect_abi_refused(anydev::kit::check_entry(services, "kitbackend", kOtherAbi, &table),
                     "kitbackend");
  EXPECT_EQ(table, nullptr);
}

TEST(KitEntry, NullOutputIsInvalidArgument) {
  reset();
  anydev::kit::core_services services("kitbackend");
  services.store(&kFakeCore);
  EXPECT_EQ(anydev::kit::check_entry(services, "kitbackend", ANYDEV_BACKEND_ABI_VERSION, nullptr),
            ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(g_message.find("NULL"), std::string::npos) << g_message;
}

TEST(KitEntry, MatchingAbiPasses) {
  anydev::kit::core_services services("kitbackend");
  const anydev_backend_table_t* table = nullptr;
  EXPECT_EQ(anydev::kit::check_entry(services, "kitbackend", ANYDEV_BACKEND_ABI_VERSION, &table),
            ANYDEV_SUCCESS);
}

TEST(BackendAbiMismatch, CpuAnswersBackendUnavailable) {
  reset();
  const anydev_backend_table_t* table = nullptr;
  expect_abi_refused(anydev_cpu_backend_entry(kOtherAbi, &kFakeCore, &table), "cpu");
  EXPECT_EQ(table, nullptr);
}

// Calls the plugin's entry point with another ABI version.
void expect_plugin_refuses(const char* backend) {
  const std::string path =
      std::string(ANYDEV_TEST_BACKEND_PLUGIN_DIR) + "/libanydev-backend-" + backend + ".so";
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << "the " << backend << " backend was not built (" << path << " is missing)";
  }
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto entry =
      reinterpret_cast<anydev_backend_entry_fn>(dlsym(library, ANYDEV_BACKEND_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr) << path;
  reset();
  const anydev_backend_table_t* table = nullptr;
  expect_abi_refused(entry(kOtherAbi, &kFakeCore, &table), backend);
  EXPECT_EQ(table, nullptr);
  // Never closed: a backend may have started threads (as the core never closes one).
}

TEST(BackendAbiMismatch, OpenclAnswersBackendUnavailable) { expect_plugin_refuses("opencl"); }

TEST(BackendAbiMismatch, CudaAnswersBackendUnavailable) { expect_plugin_refuses("cuda"); }

TEST(BackendAbiMismatch, HipAnswersBackendUnavailable) { expect_plugin_refuses("hip"); }

TEST(BackendAbiMismatch, LevelZeroAnswersBackendUnavailable) {
  expect_plugin_refuses("level_zero");
}

}  // namespace
