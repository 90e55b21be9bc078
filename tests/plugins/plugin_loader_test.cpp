// The plugin loader, with the test plugins of this folder on
// ANYDEV_PLUGIN_PATH (ctest sets the environment per entry; see
// CMakeLists.txt): broken plugins are listed as unavailable with the precise
// reason, never fatal; a valid one works; only the backends named are opened.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "../process/fork_child.h"
#include "anydev/anydev.hpp"
#include "anydev/backend.h"

// The fork test's child abandons what the parent made (it must not free it).
extern "C" __attribute__((visibility("default"))) int __lsan_is_turned_off() {
  return anydev_test::g_in_forked_child;
}

namespace {

using anydev::BackendInfo;
using anydev::DeviceContext;
using anydev::Status;

const std::string kDir = ANYDEV_TEST_PLUGIN_DIR;
const std::string kShadowDir = ANYDEV_TEST_PLUGIN_SHADOW_DIR;

std::string PluginPath(const std::string& dir, const std::string& name) {
  return dir + "/libanydev-backend-" + name + ".so";
}

#define REQUIRE_ENV(name)                                                           \
  do {                                                                              \
    if (std::getenv(name) == nullptr) {                                             \
      GTEST_SKIP() << name << " is not set: run this through ctest, which sets it"; \
    }                                                                               \
  } while (false)

std::optional<BackendInfo> Find(const std::string& name) {
  for (const BackendInfo& b : DeviceContext::backends()) {
    if (b.name == name) return b;
  }
  return std::nullopt;
}

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// Expects `name` listed, unavailable, with a reason containing every part.
void ExpectUnavailable(const std::string& name, std::initializer_list<std::string> parts) {
  SCOPED_TRACE(name);
  const std::optional<BackendInfo> info = Find(name);
  ASSERT_TRUE(info.has_value()) << name << " is not listed by DeviceContext::backends()";
  EXPECT_FALSE(info->available);
  EXPECT_EQ(info->device_count, 0);
  EXPECT_EQ(DeviceContext::number_of_devices(name), 0);
  for (const std::string& part : parts) EXPECT_TRUE(Contains(info->reason, part));
  // Asking for it by name says why.
  try {
    const DeviceContext ctx(0, name);
    ADD_FAILURE() << "DeviceContext(0, \"" << name << "\") succeeded";
  } catch (const anydev::Error& e) {
    EXPECT_EQ(e.status(), Status::backend_unavailable) << e.what();
    EXPECT_TRUE(Contains(e.what(), name));
  }
}

bool MarkerExists(const char* plugin) {
  const char* dir = std::getenv("ANYDEV_TEST_PLUGIN_MARKER_DIR");
  return dir != nullptr &&
         std::filesystem::exists(std::string(dir) + "/" + plugin + "." + std::to_string(getpid()));
}

TEST(PluginListing, WrongAbiVersionNamesThePluginAndBothVersions) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  ExpectUnavailable("testversion", {PluginPath(kDir, "testversion"),
                                    std::to_string(ANYDEV_BACKEND_ABI_VERSION + 1000)});
}

TEST(PluginListing, MissingEntrySymbolIsNamed) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  ExpectUnavailable("testnoentry", {PluginPath(kDir, "testnoentry"), ANYDEV_BACKEND_ENTRY_SYMBOL});
}

TEST(PluginListing, MissingDependencyGivesTheDlerrorText) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  ExpectUnavailable("testmissingdep", {PluginPath(kDir, "testmissingdep"), "libanydev-test-dep.so",
                                       "cannot open shared object file"});
}

TEST(PluginListing, BuiltInBackendsAreStillListedAndCpuWorks) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  for (const char* name : {"cpu", "cuda", "hip", "level_zero", "opencl"}) {
    EXPECT_TRUE(Find(name).has_value()) << name;
  }
  const std::optional<BackendInfo> cpu = Find("cpu");
  ASSERT_TRUE(cpu.has_value());
  EXPECT_TRUE(cpu->available) << cpu->reason;
  const DeviceContext ctx(0, "cpu");
  const anydev::HostBuffer<std::uint8_t> buffer = ctx.enqueue_create_host_buffer<std::uint8_t>(16);
  buffer.enqueue_fill(0x3C);
  ctx.synchronize();
  EXPECT_EQ(buffer[15], 0x3C);
}

TEST(TestgoodBackend, IsAvailableWithItsOneDevice) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  const std::optional<BackendInfo> info = Find("testgood");
  ASSERT_TRUE(info.has_value());
  EXPECT_TRUE(info->available) << info->reason;
  EXPECT_EQ(info->device_count, 1);
  EXPECT_TRUE(info->reason.empty()) << info->reason;
  EXPECT_TRUE(Contains(info->library, PluginPath(kDir, "testgood")));
  EXPECT_EQ(DeviceContext::number_of_devices("testgood"), 1);
}

TEST(TestgoodBackend, RunsWork) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  const DeviceContext ctx(0, "testgood");
  EXPECT_EQ(ctx.api(), "testgood");
  EXPECT_EQ(ctx.name(), "testgood: fake device 0 (host memory)");
  const anydev::HostBuffer<std::uint64_t> host =
      ctx.enqueue_create_host_buffer<std::uint64_t>(1000);
  const anydev::DeviceBuffer<std::uint64_t> device = ctx.enqueue_create_buffer<std::uint64_t>(1000);
  device.enqueue_fill(0x0123456789ABCDEFull);
  device.enqueue_copy_to(host);
  ctx.synchronize();
  for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(host[i], 0x0123456789ABCDEFull) << i;
  EXPECT_TRUE(Contains(
      [&] {
        try {
          DeviceContext past(1, "testgood");
        } catch (const anydev::Error& e) {
          return std::string(anydev::to_string(e.status()));
        }
        return std::string("no error");
      }(),
      "out_of_range"));
}

TEST(EnvTestversion, DefaultConstructorIsBackendUnavailableWithTheReason) {
  REQUIRE_ENV("ANYDEV_BACKEND");
  try {
    const DeviceContext ctx;
    FAIL() << "DeviceContext() chose " << ctx.api() << " for ANYDEV_BACKEND=testversion";
  } catch (const anydev::Error& e) {
    EXPECT_EQ(e.status(), Status::backend_unavailable) << e.what();
    EXPECT_TRUE(Contains(e.what(), "testversion"));
    EXPECT_TRUE(Contains(e.what(), std::to_string(ANYDEV_BACKEND_ABI_VERSION + 1000)));
  }
}

// ANYDEV_BACKEND=cpu: the test plugins are on the path but never opened
// (each plugin's constructor leaves a marker file when it is loaded). Then,
// as a control, probing testgood must leave its marker.
TEST(EnvCpuOnly, OnlyTheNamedBackendIsOpened) {
  REQUIRE_ENV("ANYDEV_BACKEND");
  REQUIRE_ENV("ANYDEV_TEST_PLUGIN_MARKER_DIR");
  const DeviceContext ctx;
  EXPECT_EQ(ctx.api(), "cpu");
  const anydev::HostBuffer<std::uint8_t> buffer = ctx.enqueue_create_host_buffer<std::uint8_t>(16);
  buffer.enqueue_fill(0x11);
  ctx.synchronize();
  for (const char* plugin : {"testgood", "testversion", "testnoentry"}) {
    EXPECT_FALSE(MarkerExists(plugin)) << plugin << " was opened although ANYDEV_BACKEND=cpu";
  }
  EXPECT_EQ(DeviceContext::number_of_devices("testgood"), 1);
  EXPECT_TRUE(MarkerExists("testgood")) << "the marker mechanism itself does not work";
}

// Folders of ANYDEV_PLUGIN_PATH are searched in order, a missing folder is
// skipped, and plugins of later folders are still found.
TEST(PluginSearchOrder, FirstFolderWins) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  const std::optional<BackendInfo> info = Find("testgood");
  ASSERT_TRUE(info.has_value());
  EXPECT_TRUE(info->available) << info->reason;
  EXPECT_TRUE(Contains(info->library, PluginPath(kShadowDir, "testgood")));
  EXPECT_EQ(DeviceContext(0, "testgood").name(), "testgood shadow copy");
  const auto count = [] {
    const auto all = DeviceContext::backends();
    return std::count_if(all.begin(), all.end(),
                         [](const BackendInfo& b) { return b.name == "testgood"; });
  }();
  EXPECT_EQ(count, 1) << "a backend found in two folders must be listed once";
  EXPECT_TRUE(Find("testversion").has_value()) << "plugins of the later folder are found too";
}

// A fill and read-back on device 0 of `backend`; true when right.
bool FillWorks(const std::string& backend) {
  const DeviceContext ctx(0, backend);
  const anydev::DeviceBuffer<std::uint32_t> device = ctx.enqueue_create_buffer<std::uint32_t>(256);
  const anydev::HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(256);
  device.enqueue_fill(0x600dF00Du);
  device.enqueue_copy_to(host);
  ctx.synchronize();
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (host[i] != 0x600dF00Du) return false;
  }
  return true;
}

// In a forked child: `backend` must be backend_unavailable with a reason
// naming it and fork(). 0 or `code`.
int ExpectRetiredInChild(const std::string& backend, int code) {
  try {
    const DeviceContext ctx(0, backend);
    std::fprintf(stderr, "child check %d: DeviceContext(0, \"%s\") succeeded\n", code,
                 backend.c_str());
    return code;
  } catch (const anydev::Error& e) {
    const std::string what = e.what();
    if (e.status() == Status::backend_unavailable &&
        what.find(backend + " was initialized before fork()") != std::string::npos) {
      return 0;
    }
    std::fprintf(stderr, "child check %d: %s: %s\n", code, anydev::to_string(e.status()), e.what());
    return code;
  }
}

// The core's fork rule, on plugins (no vendor driver needed): a backend
// whose table lacks ANYDEV_BK_FLAG_SURVIVES_FORK (testgood; testoldtable,
// whose older table has no flags field at all) and that the parent
// initialized is unavailable in a forked child; one the parent never
// initialized works there; one with the flag (testforksafe) keeps working.
// testoldtable also shows that a table of the first ABI 1 size still loads.
TEST(PluginFork, OnlyBackendsThatSurviveForkStayUsableInTheChild) {
  ANYDEV_SKIP_FORK_UNDER_ASAN();
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  // Before the parent opens testgood, a child may.
  EXPECT_EQ(anydev_test::run_in_forked_child([] {
              try {
                return FillWorks("testgood") ? 0 : 1;
              } catch (const anydev::Error& e) {
                std::fprintf(stderr, "child: testgood: %s\n", e.what());
                return 2;
              }
            }),
            "");

  for (const char* name : {"testgood", "testoldtable", "testforksafe"}) {
    const std::optional<BackendInfo> info = Find(name);
    ASSERT_TRUE(info.has_value()) << name;
    ASSERT_TRUE(info->available) << name << ": " << info->reason;
    ASSERT_TRUE(FillWorks(name)) << name;
  }

  EXPECT_EQ(anydev_test::run_in_forked_child([] {
              if (const int failed = ExpectRetiredInChild("testgood", 1)) return failed;
              if (const int failed = ExpectRetiredInChild("testoldtable", 2)) return failed;
              try {
                if (!FillWorks("testforksafe")) return 3;
                if (!FillWorks("cpu")) return 4;
              } catch (const anydev::Error& e) {
                std::fprintf(stderr, "child: %s\n", e.what());
                return 5;
              }
              const std::optional<BackendInfo> info = Find("testgood");
              if (!info || info->available || info->device_count != 0 ||
                  info->reason.find("fork()") == std::string::npos) {
                std::fprintf(stderr, "child check 6: testgood's listing: %s\n",
                             info ? info->reason.c_str() : "(not listed)");
                return 6;
              }
              return 0;
            }),
            "");

  // The parent keeps all of them.
  for (const char* name : {"testgood", "testoldtable", "testforksafe"}) {
    EXPECT_TRUE(FillWorks(name)) << name;
  }
}

}  // namespace
