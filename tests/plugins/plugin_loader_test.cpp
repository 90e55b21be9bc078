// SPDX-License-Identifier: Apache-2.0
// The plugin loader, with the test plugins of this folder on
// ANYDEV_PLUGIN_PATH (ctest sets the environment per entry; see
// CMakeLists.txt): broken plugins are listed as unavailable with the precise
// reason, never fatal; a valid one works; only the backends named are opened.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "../process/fork_child.h"
#include "anydev/anydev.hpp"
#include "anydev/backend.h"
#include "anydev/dlpack.hpp"

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

// A plugin built for an earlier ABI is refused, naming both versions.
TEST(PluginListing, AbiVersion1PluginIsRefusedNamingBothVersions) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  ExpectUnavailable("testv1", {PluginPath(kDir, "testv1"), "backend ABI version 1,",
                               "expects version " + std::to_string(ANYDEV_BACKEND_ABI_VERSION)});
}

TEST(PluginListing, AbiVersion2PluginIsRefusedNamingBothVersions) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  static_assert(ANYDEV_BACKEND_ABI_VERSION == 3);
  ExpectUnavailable("testv2",
                    {PluginPath(kDir, "testv2"), "backend ABI version 2,", "expects version 3"});
}

// The smallest ABI 3 table holds every required entry: it ends with
// enable_peer_access, the last one.
constexpr std::size_t kSmallestTableBytes = offsetof(anydev_backend_table_t, enable_peer_access) +
                                            sizeof(anydev_backend_table_t::enable_peer_access);

// A table that ends before its last required entry is refused with both
// sizes; nothing past its end is read (ASan would say).
TEST(PluginListing, TableWithoutItsLastRequiredEntryIsRefused) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  ExpectUnavailable(
      "testshorttable",
      {PluginPath(kDir, "testshorttable"),
       "backend table of " + std::to_string(offsetof(anydev_backend_table_t, enable_peer_access)) +
           " bytes",
       "needs at least " + std::to_string(kSmallestTableBytes),
       "every required entry of ABI version 3"});
}

// A device capability out of its range makes the backend unavailable, with
// the field and the value named.
TEST(PluginListing, InvalidMaxFillPatternIsRefused) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  ExpectUnavailable("testbigfill", {"device_props(0)", "max_fill_pattern 32"});
}

// A plugin claiming INT_MAX devices is refused at once, naming the count and
// the bound (it used to make 2^31 device_props calls under the registry lock).
TEST(PluginListing, DeviceCountAboveTheBoundIsRefused) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  ExpectUnavailable("testmanydevices",
                    {"device_count reported 2147483647 devices", "at most 4096"});
}

// A fill and read-back on device 0 of `backend`; true when right.
bool FillAndReadBack(const std::string& backend) {
  const DeviceContext ctx(0, backend);
  const anydev::DeviceBuffer<std::uint64_t> device = ctx.enqueue_create_buffer<std::uint64_t>(100);
  const anydev::HostBuffer<std::uint64_t> host = ctx.enqueue_create_host_buffer<std::uint64_t>(100);
  device.enqueue_fill(0x0123456789ABCDEFull);
  device.enqueue_copy_to(host);
  ctx.synchronize();
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (host[i] != 0x0123456789ABCDEFull) return false;
  }
  return true;
}

// The ABI 3 layout: the fixed fields first, at pinned offsets, then the
// entries in list order, so that appending an entry moves no field.
TEST(PluginTableGrowth, FixedFieldsComeFirstAtPinnedOffsets) {
  static_assert(sizeof(void*) == 8 && sizeof(std::size_t) == 8, "offsets of 64-bit platforms");
  EXPECT_EQ(offsetof(anydev_backend_table_t, struct_size), 0u);
  EXPECT_EQ(offsetof(anydev_backend_table_t, abi_version), 8u);
  EXPECT_EQ(offsetof(anydev_backend_table_t, name), 16u);
  EXPECT_EQ(offsetof(anydev_backend_table_t, instance), 24u);
  EXPECT_EQ(offsetof(anydev_backend_table_t, flags), 32u);
  EXPECT_EQ(offsetof(anydev_backend_table_t, initialize), 40u);
  // Entries appended later follow the earlier ones; the last ends the table.
  EXPECT_EQ(offsetof(anydev_backend_table_t, memory_is_locked) +
                sizeof(anydev_backend_table_t::memory_is_locked),
            offsetof(anydev_backend_table_t, shareable_alloc));
  EXPECT_EQ(
      offsetof(anydev_backend_table_t, event_import) + sizeof(anydev_backend_table_t::event_import),
      offsetof(anydev_backend_table_t, event_create_flags));
  EXPECT_EQ(offsetof(anydev_backend_table_t, stream_create_priority) +
                sizeof(anydev_backend_table_t::stream_create_priority),
            offsetof(anydev_backend_table_t, host_register));
  EXPECT_EQ(
      offsetof(anydev_backend_table_t, api_version) + sizeof(anydev_backend_table_t::api_version),
      offsetof(anydev_backend_table_t, graph_create));
  EXPECT_EQ(offsetof(anydev_backend_table_t, graph_destroy) +
                sizeof(anydev_backend_table_t::graph_destroy),
            sizeof(anydev_backend_table_t));
}

// How many times the core called the loaded plugin's memory_is_locked.
long LockQueries(const std::string& name) {
  void* plugin = dlopen(PluginPath(kDir, name).c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(plugin, nullptr) << name << " is not loaded: " << dlerror();
  if (plugin == nullptr) return -1;
  using Count = long (*)();
  const auto count = reinterpret_cast<Count>(dlsym(plugin, "anydev_test_plugin_lock_queries"));
  EXPECT_NE(count, nullptr) << dlerror();
  const long queries = count != nullptr ? count() : -1;
  dlclose(plugin);
  return queries;
}

// A plugin built against an older ABI 3 header: its struct_size ends before
// the optional entries that follow enable_peer_access. It loads and works,
// and the core reads those entries as NULL (declined: host memory counts as
// locked, as for a backend without memory_is_locked), although the plugin's
// memory after struct_size holds a memory_is_locked that would answer 0.
TEST(PluginTableGrowth, OlderTableLoadsWithTheMissingOptionalEntriesDeclined) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  const std::optional<BackendInfo> info = Find("testolder");
  ASSERT_TRUE(info.has_value());
  ASSERT_TRUE(info->available) << info->reason;
  EXPECT_TRUE(FillAndReadBack("testolder"));
  const DeviceContext ctx(0, "testolder");
  const anydev::HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(64);
  int locked = -1;
  ASSERT_EQ(anydev_buffer_is_locked(host.handle(), &locked), ANYDEV_SUCCESS)
      << anydev_last_error_message();
  EXPECT_EQ(locked, 1) << "memory_is_locked past struct_size was not read as NULL";
  EXPECT_EQ(LockQueries("testolder"), 0) << "the core called an entry past struct_size";
  void* native = nullptr;
  EXPECT_EQ(anydev_context_native_handle(ctx.handle(), ANYDEV_NATIVE_DEVICE, &native),
            ANYDEV_ERROR_UNSUPPORTED);
}

// A plugin built against a newer ABI 3 header: its table is longer than the
// core's, with non-NULL entries the core does not know after it. It loads and
// works, the core ignores those entries, and reads its own optional entries
// (memory_is_locked, which answers 0) from the longer table.
TEST(PluginTableGrowth, NewerTableLoadsWithTheUnknownEntriesIgnored) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  const std::optional<BackendInfo> info = Find("testnewer");
  ASSERT_TRUE(info.has_value());
  ASSERT_TRUE(info->available) << info->reason;
  EXPECT_TRUE(FillAndReadBack("testnewer"));
  const DeviceContext ctx(0, "testnewer");
  const anydev::HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(64);
  int locked = -1;
  ASSERT_EQ(anydev_buffer_is_locked(host.handle(), &locked), ANYDEV_SUCCESS)
      << anydev_last_error_message();
  EXPECT_EQ(locked, 0);
  EXPECT_GT(LockQueries("testnewer"), 0);
}

// True while the plugin file at `path` is loaded in this process.
bool IsLoaded(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

// A C++ plugin that throws from its entry point or from initialize: the
// backend is unavailable with the exception's text, and the plugin is closed.
TEST(PluginListing, EntryPointThatThrowsIsCaughtNamedAndClosed) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  ExpectUnavailable("testthrowentry",
                    {PluginPath(kDir, "testthrowentry"),
                     "anydev_backend_entry threw: testthrowentry exploded in its entry point"});
  EXPECT_FALSE(IsLoaded(PluginPath(kDir, "testthrowentry"))) << "the plugin was not dlclosed";
}

TEST(PluginListing, InitializeThatThrowsIsCaughtNamedAndClosed) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  ExpectUnavailable("testthrowinit", {PluginPath(kDir, "testthrowinit"),
                                      "initialize threw: testthrowinit exploded in initialize"});
  EXPECT_FALSE(IsLoaded(PluginPath(kDir, "testthrowinit"))) << "the plugin was not dlclosed";
}

TEST(PluginListing, InitializeThatThrowsANonStdExceptionIsCaughtNamedAndClosed) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  ExpectUnavailable("testthrownonstd",
                    {PluginPath(kDir, "testthrownonstd"),
                     "initialize threw an exception that is not a std::exception"});
  EXPECT_FALSE(IsLoaded(PluginPath(kDir, "testthrownonstd"))) << "the plugin was not dlclosed";
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

// The core takes a device's largest fill pattern from its capabilities: a
// larger pattern is refused before the backend sees it, and nothing changes.
TEST(TestgoodBackend, FillPatternAboveTheDevicesMaximumIsUnsupported) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  const DeviceContext ctx(0, "testsmallfill");
  const anydev::DeviceBuffer<std::uint64_t> device = ctx.enqueue_create_buffer<std::uint64_t>(4);
  const std::uint32_t seven = 7;
  ASSERT_EQ(anydev_enqueue_fill(nullptr, device.handle(), &seven, sizeof seven), ANYDEV_SUCCESS);
  try {
    device.enqueue_fill(0x0123456789ABCDEFull);
    ADD_FAILURE() << "an 8-byte fill on a device of max_fill_pattern 4 succeeded";
  } catch (const anydev::Error& e) {
    EXPECT_EQ(e.status(), Status::unsupported) << e.what();
    EXPECT_TRUE(Contains(e.what(), "8-byte pattern")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "at most 4 bytes")) << e.what();
  }
  const anydev::HostBuffer<std::uint64_t> host = ctx.enqueue_create_host_buffer<std::uint64_t>(4);
  device.enqueue_copy_to(host);
  ctx.synchronize();
  for (std::size_t i = 0; i < host.size(); ++i) EXPECT_EQ(host[i], 0x0000000700000007ull) << i;
  // A 4-byte pattern still works.
  const std::uint32_t five = 5;
  ASSERT_EQ(anydev_enqueue_fill(nullptr, device.handle(), &five, sizeof five), ANYDEV_SUCCESS);
  device.enqueue_copy_to(host);
  ctx.synchronize();
  for (std::size_t i = 0; i < host.size(); ++i) EXPECT_EQ(host[i], 0x0000000500000005ull) << i;
}

// The plugin declares its own DLPack device type (kDLExtDev) in its device
// props; the core, which knows nothing else about it, exports its device
// memory with that type and imports such a tensor back onto it.
TEST(TestgoodBackend, BuffersExportThroughDlpackWithTheDeclaredDeviceType) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  const DeviceContext ctx(0, "testgood");
  const anydev::DeviceBuffer<std::uint32_t> device = ctx.enqueue_create_buffer<std::uint32_t>(6);
  device.enqueue_fill(0xA5A5A5A5u);
  anydev::make_ready(device);
  const DLDevice where = anydev::dlpack_device(device);
  EXPECT_EQ(where.device_type, kDLExtDev);
  EXPECT_EQ(where.device_id, 0);
  anydev::DLPackTensor tensor = anydev::to_dlpack(device, {2, 3});
  EXPECT_EQ(tensor->device.device_type, kDLExtDev);
  EXPECT_EQ(tensor->data, static_cast<void*>(device.unsafe_ptr()));
  EXPECT_EQ(tensor->ndim, 2);
  // The fake device's memory is host memory: the consumer reads it.
  const auto* values = static_cast<const std::uint32_t*>(tensor->data);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(values[i], 0xA5A5A5A5u) << i;
  // And back: a kDLExtDev tensor is device memory of the backend declaring it.
  const anydev::DeviceBuffer<std::uint32_t> back =
      anydev::from_dlpack<std::uint32_t, anydev::DeviceBuffer>(std::move(tensor));
  EXPECT_EQ(back.unsafe_ptr(), device.unsafe_ptr());
  EXPECT_EQ(anydev::dlpack_device(back).device_type, kDLExtDev);
  const anydev::HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(6);
  back.enqueue_copy_to(host);
  ctx.synchronize();
  EXPECT_EQ(host[5], 0xA5A5A5A5u);
  EXPECT_EQ(anydev::dlpack_device(host).device_type, kDLCPU);
  // Another backend's context cannot take it.
  const DeviceContext cpu(0, "cpu");
  anydev::DLPackTensor again = anydev::to_dlpack(device);
  anydev_buffer_t out = nullptr;
  EXPECT_EQ(anydev_buffer_from_dlpack(cpu.handle(), again.get(), &out),
            ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(anydev_last_error_message(), "needs a context on testgood:0, not cpu:0"));
  EXPECT_EQ(out, nullptr);
}

// A backend may decline memory_free_async per call (ANYDEV_BK_DECLINED, the
// way cuda does on a device without memory pools): the core then frees the
// memory through its own stream-ordered release and memory_free, and logs no
// failure (ctest fails the run on "memory_free_async failed").
TEST(PluginDecline, DeclinedFreeAsyncFallsBackToTheCoresRelease) {
  REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
  constexpr long kBuffers = 3;
  {
    const DeviceContext ctx(0, "testdecline");
    for (long i = 0; i < kBuffers; ++i) {
      const anydev::DeviceBuffer<std::uint32_t> device =
          ctx.enqueue_create_buffer<std::uint32_t>(64);
      device.enqueue_fill(0x0D0Cu);
    }
    ctx.synchronize();
  }
  void* plugin = dlopen(PluginPath(kDir, "testdecline").c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(plugin, nullptr) << "testdecline is not loaded: " << dlerror();
  using Counts = void (*)(long*, long*);
  const auto counts = reinterpret_cast<Counts>(dlsym(plugin, "anydev_test_plugin_free_counts"));
  ASSERT_NE(counts, nullptr) << dlerror();
  long declined = 0;
  long freed = 0;
  // The core's reclaimer frees off this thread: wait (bounded) for it.
  for (int i = 0; i < 1000; ++i) {
    counts(&declined, &freed);
    if (freed >= kBuffers) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  dlclose(plugin);
  EXPECT_EQ(declined, kBuffers);
  EXPECT_EQ(freed, kBuffers) << "declined device memory was not freed through memory_free";
}

// teststatus's fill returns what the test scripts (fake_backend.c,
// TEST_PLUGIN_SCRIPTED_FILL). Runs with no layer, ANYDEV_SYNC=1 and
// ANYDEV_VALIDATE=1 (CMakeLists.txt).
class PluginStatuses : public ::testing::Test {
 protected:
  using Script = void (*)(int, const char*);

  void SetUp() override {
    REQUIRE_ENV("ANYDEV_PLUGIN_PATH");
    ctx_.emplace(0, "teststatus");
    buffer_.emplace(ctx_->enqueue_create_buffer<std::uint32_t>(16));
    plugin_ = dlopen(PluginPath(kDir, "teststatus").c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(plugin_, nullptr) << "teststatus is not loaded: " << dlerror();
    script_ = reinterpret_cast<Script>(dlsym(plugin_, "anydev_test_plugin_script_fill"));
    ASSERT_NE(script_, nullptr) << dlerror();
  }

  void TearDown() override {
    if (script_ != nullptr) script_(ANYDEV_SUCCESS, nullptr);
    buffer_.reset();
    if (ctx_) ctx_->synchronize();
    ctx_.reset();
    if (plugin_ != nullptr) dlclose(plugin_);
  }

  // A fill of the buffer, scripted to return `status` (after setting
  // `message` when it is not null): its status and the last error message.
  std::pair<anydev_status_t, std::string> Fill(int status, const char* message) {
    script_(status, message);
    const std::uint32_t pattern = 7;
    const anydev_status_t s =
        anydev_enqueue_fill(nullptr, buffer_->handle(), &pattern, sizeof pattern);
    script_(ANYDEV_SUCCESS, nullptr);
    return {s, anydev_last_error_message()};
  }

  std::optional<DeviceContext> ctx_;
  std::optional<anydev::DeviceBuffer<std::uint32_t>> buffer_;
  void* plugin_ = nullptr;
  Script script_ = nullptr;
};

// ANYDEV_BK_DECLINED is for optional entries only; from fill (required) it
// must not reach the application as "unknown (1262747649)".
TEST_F(PluginStatuses, RequiredEntryReturningDeclinedIsInternal) {
  const auto [status, message] = Fill(static_cast<int>(ANYDEV_BK_DECLINED), nullptr);
  EXPECT_EQ(status, ANYDEV_ERROR_INTERNAL) << message;
  EXPECT_TRUE(Contains(message, "backend teststatus"));
  EXPECT_TRUE(Contains(message, "required entry fill returned ANYDEV_BK_DECLINED (1262747649)"));
}

TEST_F(PluginStatuses, UndefinedStatusIsInternal) {
  const auto [status, message] = Fill(4242, "teststatus: this text comes with status 4242");
  EXPECT_EQ(status, ANYDEV_ERROR_INTERNAL) << message;
  EXPECT_TRUE(Contains(message, "backend teststatus"));
  EXPECT_TRUE(Contains(message, "entry fill returned the undefined status 4242"));
  EXPECT_TRUE(Contains(message, "this text comes with status 4242"));
}

// A failure that sets no message gets one naming the backend and the entry,
// never the text of an earlier failure.
TEST_F(PluginStatuses, FailureWithoutAMessageDoesNotCarryAnEarlierOnesText) {
  const auto [first, first_message] = Fill(ANYDEV_ERROR_DEVICE, "teststatus: the first failure");
  EXPECT_EQ(first, ANYDEV_ERROR_DEVICE);
  EXPECT_TRUE(Contains(first_message, "the first failure"));
  const auto [second, second_message] = Fill(ANYDEV_ERROR_DEVICE, nullptr);
  EXPECT_EQ(second, ANYDEV_ERROR_DEVICE) << second_message;
  EXPECT_FALSE(Contains(second_message, "the first failure")) << second_message;
  EXPECT_TRUE(Contains(second_message, "backend teststatus: fill failed (device_error)"));
  EXPECT_TRUE(Contains(second_message, "set no message"));
  // And the fill works again.
  const auto [third, third_message] = Fill(ANYDEV_SUCCESS, nullptr);
  EXPECT_EQ(third, ANYDEV_SUCCESS) << third_message;
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
// whose table lacks ANYDEV_BK_FLAG_SURVIVES_FORK (testgood) and that the parent
// initialized is unavailable in a forked child; one the parent never
// initialized works there; one with the flag (testforksafe) keeps working.
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

  for (const char* name : {"testgood", "testforksafe"}) {
    const std::optional<BackendInfo> info = Find(name);
    ASSERT_TRUE(info.has_value()) << name;
    ASSERT_TRUE(info->available) << name << ": " << info->reason;
    ASSERT_TRUE(FillWorks(name)) << name;
  }

  EXPECT_EQ(anydev_test::run_in_forked_child([] {
              if (const int failed = ExpectRetiredInChild("testgood", 1)) return failed;
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
  for (const char* name : {"testgood", "testforksafe"}) {
    EXPECT_TRUE(FillWorks(name)) << name;
  }
}

}  // namespace
