// SPDX-License-Identifier: Apache-2.0
// The emulated driver, through Debian's real loader (linked here; the backend
// never links it): ctest names the driver in ZE_ENABLE_ALT_DRIVERS. Checks the
// loader's handshake, copies and fills, event rules, regular lists executed
// on a queue, the misuse the driver reports, and that the validation layer
// (when enabled) stops a malformed call before the driver sees it.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <level_zero/ze_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// The emulator-only functions, found in the driver the loader opened.
struct EmulatorProbe {
  unsigned long long (*misuse_count)() = nullptr;
  unsigned long long (*call_count)(const char*) = nullptr;
  void find() {
    const char* path = std::getenv("ZE_ENABLE_ALT_DRIVERS");
    void* self = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
    if (self == nullptr) return;
    misuse_count = reinterpret_cast<unsigned long long (*)()>(
        dlsym(self, "anydev_level_zero_emulator_misuse_count"));
    call_count = reinterpret_cast<unsigned long long (*)(const char*)>(
        dlsym(self, "anydev_level_zero_emulator_call_count"));
  }
};

class Emulator : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(zeInit(ZE_INIT_FLAG_GPU_ONLY), ZE_RESULT_SUCCESS)
        << "is ZE_ENABLE_ALT_DRIVERS the emulated driver?";
    std::uint32_t count = 1;
    ASSERT_EQ(zeDriverGet(&count, &driver_), ZE_RESULT_SUCCESS);
    ASSERT_EQ(count, 1u);
    count = 1;
    ASSERT_EQ(zeDeviceGet(driver_, &count, &device_), ZE_RESULT_SUCCESS);
    ASSERT_GE(count, 1u);
    ze_context_desc_t cdesc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ASSERT_EQ(zeContextCreate(driver_, &cdesc, &context_), ZE_RESULT_SUCCESS);
    ze_command_queue_desc_t qdesc = {};
    qdesc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
    qdesc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    ASSERT_EQ(zeCommandListCreateImmediate(context_, device_, &qdesc, &list_), ZE_RESULT_SUCCESS);
    ze_event_pool_desc_t pdesc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                  ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 2};
    ASSERT_EQ(zeEventPoolCreate(context_, &pdesc, 0, nullptr, &pool_), ZE_RESULT_SUCCESS);
    ze_event_desc_t edesc = {ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                             ZE_EVENT_SCOPE_FLAG_HOST};
    ASSERT_EQ(zeEventCreate(pool_, &edesc, &event_), ZE_RESULT_SUCCESS);
    probe_.find();  // the loader has opened the driver by now
  }
  void TearDown() override {
    if (event_ != nullptr) {
      EXPECT_EQ(zeEventDestroy(event_), ZE_RESULT_SUCCESS);
    }
    if (pool_ != nullptr) {
      EXPECT_EQ(zeEventPoolDestroy(pool_), ZE_RESULT_SUCCESS);
    }
    if (list_ != nullptr) {
      EXPECT_EQ(zeCommandListDestroy(list_), ZE_RESULT_SUCCESS);
    }
    if (context_ != nullptr) {
      EXPECT_EQ(zeContextDestroy(context_), ZE_RESULT_SUCCESS);
    }
  }
  void* device_alloc(std::size_t bytes) {
    ze_device_mem_alloc_desc_t desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
    void* p = nullptr;
    EXPECT_EQ(zeMemAllocDevice(context_, &desc, bytes, 64, device_, &p), ZE_RESULT_SUCCESS);
    return p;
  }
  // The pool's other event (index 1), for a gate the test signals itself;
  // the test destroys it.
  ze_event_handle_t second_event() {
    ze_event_handle_t e = nullptr;
    ze_event_desc_t edesc = {ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 1, ZE_EVENT_SCOPE_FLAG_HOST,
                             ZE_EVENT_SCOPE_FLAG_HOST};
    EXPECT_EQ(zeEventCreate(pool_, &edesc, &e), ZE_RESULT_SUCCESS);
    return e;
  }
  // Appends a barrier signalling event_ and waits for it, then resets it.
  void finish() {
    ASSERT_EQ(zeCommandListAppendBarrier(list_, event_, 0, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zeEventHostSynchronize(event_, UINT64_MAX), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zeEventHostReset(event_), ZE_RESULT_SUCCESS);
  }

  ze_driver_handle_t driver_ = nullptr;
  ze_device_handle_t device_ = nullptr;
  ze_context_handle_t context_ = nullptr;
  ze_command_list_handle_t list_ = nullptr;
  ze_event_pool_handle_t pool_ = nullptr;
  ze_event_handle_t event_ = nullptr;
  EmulatorProbe probe_;
};

TEST_F(Emulator, TheLoaderFindsTheEmulatedDevice) {
  ze_device_properties_t props = {};
  props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  ASSERT_EQ(zeDeviceGetProperties(device_, &props), ZE_RESULT_SUCCESS);
  EXPECT_STREQ(props.name, "anydev Level Zero emulator");
  EXPECT_EQ(props.type, ZE_DEVICE_TYPE_GPU);
  ASSERT_NE(probe_.call_count, nullptr) << "the driver's probe functions were not found";
  EXPECT_GE(probe_.call_count("zeDeviceGetProperties"), 1u);
}

TEST_F(Emulator, CopiesRoundTripThroughDeviceMemory) {
  std::vector<std::uint32_t> in(1024), out(1024, 0);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint32_t>(i * 2654435761u);
  void* d = device_alloc(in.size() * 4);
  ASSERT_EQ(zeCommandListAppendMemoryCopy(list_, d, in.data(), in.size() * 4, nullptr, 0, nullptr),
            ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeCommandListAppendBarrier(list_, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
  ASSERT_EQ(
      zeCommandListAppendMemoryCopy(list_, out.data(), d, out.size() * 4, nullptr, 0, nullptr),
      ZE_RESULT_SUCCESS);
  finish();
  EXPECT_EQ(in, out);
  EXPECT_EQ(zeMemFree(context_, d), ZE_RESULT_SUCCESS);
}

// Without a barrier the two commands are one batch, which the driver runs in
// reverse: the copy back reads the device memory before it was written.
TEST_F(Emulator, CommandsWithoutABarrierBetweenThemAreUnordered) {
  std::uint32_t in = 0x12345678u;
  std::uint32_t out = 0;
  void* d = device_alloc(4);
  const std::uint32_t zero = 0;
  ASSERT_EQ(zeCommandListAppendMemoryFill(list_, d, &zero, 4, 4, nullptr, 0, nullptr),
            ZE_RESULT_SUCCESS);
  finish();
  ASSERT_EQ(zeCommandListAppendMemoryCopy(list_, d, &in, 4, nullptr, 0, nullptr),
            ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeCommandListAppendMemoryCopy(list_, &out, d, 4, nullptr, 0, nullptr),
            ZE_RESULT_SUCCESS);
  finish();
  EXPECT_EQ(out, 0u) << "a batch ran in the order of appending";
  EXPECT_EQ(zeMemFree(context_, d), ZE_RESULT_SUCCESS);
}

// ZE_COMMAND_QUEUE_FLAG_IN_ORDER (ZE_BIT(1)) is an enumerator of API 1.7: a
// driver reporting 1.7 or later (ANYDEV_LEVEL_ZERO_EMULATOR_API_MINOR) takes
// it, and then runs the list's commands in the order of appending without
// barriers; an older one refuses it, and so does the 1.8 loader's validation
// layer (it knows API 1.4), before the driver sees the call.
TEST_F(Emulator, InOrderListsComeWithApi1_7) {
  constexpr ze_command_queue_flags_t kInOrder = 1u << 1;
  ze_api_version_t version = {};
  ASSERT_EQ(zeDriverGetApiVersion(driver_, &version), ZE_RESULT_SUCCESS);
  const char* layer = std::getenv("ZE_ENABLE_VALIDATION_LAYER");
  const bool validated = layer != nullptr && std::strcmp(layer, "1") == 0;
  const bool knows = ZE_MINOR_VERSION(version) >= 7 && !validated;
  ASSERT_NE(probe_.call_count, nullptr);
  const auto creates = probe_.call_count("zeCommandListCreateImmediate");
  ze_command_queue_desc_t qdesc = {};
  qdesc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  qdesc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  qdesc.flags = kInOrder;
  ze_command_list_handle_t in_order = nullptr;
  const ze_result_t r = zeCommandListCreateImmediate(context_, device_, &qdesc, &in_order);
  EXPECT_EQ(probe_.call_count("zeCommandListCreateImmediate"), creates + (validated ? 0 : 1));
  if (!knows) {
    EXPECT_EQ(r, ZE_RESULT_ERROR_INVALID_ENUMERATION)
        << "API 1." << ZE_MINOR_VERSION(version) << (validated ? ", validation layer on" : "");
    return;
  }
  ASSERT_EQ(r, ZE_RESULT_SUCCESS);
  // The two copies of CommandsWithoutABarrierBetweenThemAreUnordered, now in order.
  std::uint32_t in = 0x12345678u;
  std::uint32_t out = 0;
  void* d = device_alloc(4);
  ASSERT_EQ(zeCommandListAppendMemoryCopy(in_order, d, &in, 4, nullptr, 0, nullptr),
            ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeCommandListAppendMemoryCopy(in_order, &out, d, 4, nullptr, 0, nullptr),
            ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeCommandListAppendBarrier(in_order, event_, 0, nullptr), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeEventHostSynchronize(event_, UINT64_MAX), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeEventHostReset(event_), ZE_RESULT_SUCCESS);
  EXPECT_EQ(out, in) << "an in-order list ran its copies out of order";
  EXPECT_EQ(zeMemFree(context_, d), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeCommandListDestroy(in_order), ZE_RESULT_SUCCESS);
}

TEST_F(Emulator, FillsWidePatternsOnlyUpToTheGroupsMaximum) {
  std::uint32_t count = 1;
  ze_command_queue_group_properties_t group = {};
  group.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  ASSERT_EQ(zeDeviceGetCommandQueueGroupProperties(device_, &count, &group), ZE_RESULT_SUCCESS);
  void* d = device_alloc(256);
  unsigned char pattern[256];
  for (int i = 0; i < 256; ++i) pattern[i] = static_cast<unsigned char>(i);
  const std::size_t max = group.maxMemoryFillPatternSize;
  ASSERT_EQ(zeCommandListAppendMemoryFill(list_, d, pattern, max, 256, nullptr, 0, nullptr),
            ZE_RESULT_SUCCESS);
  finish();
  if (max < 256) {
    ASSERT_NE(probe_.misuse_count, nullptr);
    const auto before = probe_.misuse_count();
    EXPECT_EQ(zeCommandListAppendMemoryFill(list_, d, pattern, max * 2, 256, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(probe_.misuse_count(), before + 1);
  }
  std::vector<unsigned char> out(256);
  ASSERT_EQ(zeCommandListAppendMemoryCopy(list_, out.data(), d, 256, nullptr, 0, nullptr),
            ZE_RESULT_SUCCESS);
  finish();
  for (std::size_t i = 0; i < 256; ++i) ASSERT_EQ(out[i], pattern[i % max]) << i;
  EXPECT_EQ(zeMemFree(context_, d), ZE_RESULT_SUCCESS);
}

// The rules the specification leaves undefined, enforced: each is misuse.
TEST_F(Emulator, ResettingAnEventAQueuedCommandWillSignalIsMisuse) {
  ASSERT_NE(probe_.misuse_count, nullptr);
  ze_event_handle_t gate = second_event();
  ASSERT_NE(gate, nullptr);
  // The list waits for `gate`, then signals event_: neither may be reset now.
  ASSERT_EQ(zeCommandListAppendWaitOnEvents(list_, 1, &gate), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeCommandListAppendBarrier(list_, event_, 0, nullptr), ZE_RESULT_SUCCESS);
  const auto before = probe_.misuse_count();
  EXPECT_EQ(zeEventHostReset(event_), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
  EXPECT_EQ(zeEventHostReset(gate), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
  EXPECT_EQ(zeEventDestroy(gate), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
  EXPECT_EQ(probe_.misuse_count(), before + 3);
  EXPECT_EQ(zeEventQueryStatus(event_), ZE_RESULT_NOT_READY);
  ASSERT_EQ(zeEventHostSignal(gate), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeEventHostSynchronize(event_, UINT64_MAX), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventHostReset(event_), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventDestroy(gate), ZE_RESULT_SUCCESS);
}

// Interprocess event pools (api_ipc_events.cpp) follow
// ANYDEV_LEVEL_ZERO_EMULATOR_IPC: without it the flag and the calls are
// unsupported; with it an opened pool's event is the exporter's event (one
// state), and each call misused answers its error and counts as misuse.
TEST_F(Emulator, InterprocessEventPoolsFollowTheIpcSetting) {
  ASSERT_NE(probe_.misuse_count, nullptr);
  const char* setting = std::getenv("ANYDEV_LEVEL_ZERO_EMULATOR_IPC");
  const bool ipc = setting != nullptr && std::string(setting) == "1";
  ze_event_pool_desc_t pdesc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_IPC, 2};
  ze_event_pool_handle_t shared = nullptr;
  ze_ipc_event_pool_handle_t handle = {};
  if (!ipc) {
    EXPECT_EQ(zeEventPoolCreate(context_, &pdesc, 0, nullptr, &shared),
              ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(zeEventPoolGetIpcHandle(pool_, &handle), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    return;
  }
  ASSERT_EQ(zeEventPoolCreate(context_, &pdesc, 0, nullptr, &shared), ZE_RESULT_SUCCESS);
  const auto before = probe_.misuse_count();
  EXPECT_EQ(zeEventPoolGetIpcHandle(pool_, &handle), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(zeEventPoolGetIpcHandle(shared, &handle), ZE_RESULT_SUCCESS);
  ze_event_pool_handle_t opened = nullptr;
  ASSERT_EQ(zeEventPoolOpenIpcHandle(context_, handle, &opened), ZE_RESULT_SUCCESS);
  ze_event_desc_t edesc = {ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 1, ZE_EVENT_SCOPE_FLAG_HOST,
                           ZE_EVENT_SCOPE_FLAG_HOST};
  ze_event_handle_t mine = nullptr;
  ze_event_handle_t theirs = nullptr;
  ASSERT_EQ(zeEventCreate(shared, &edesc, &mine), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeEventCreate(opened, &edesc, &theirs), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventQueryStatus(theirs), ZE_RESULT_NOT_READY);
  ASSERT_EQ(zeCommandListAppendBarrier(list_, mine, 0, nullptr), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeEventHostSynchronize(theirs, 5'000'000'000ull), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventHostReset(theirs), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventQueryStatus(mine), ZE_RESULT_NOT_READY);
  EXPECT_EQ(zeEventPoolDestroy(opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeEventPoolCloseIpcHandle(shared), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeEventPoolCloseIpcHandle(opened), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
  ze_ipc_event_pool_handle_t garbage = {};
  ze_event_pool_handle_t none = nullptr;
  EXPECT_EQ(zeEventPoolOpenIpcHandle(context_, garbage, &none), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(probe_.misuse_count(), before + 5);
  EXPECT_EQ(zeEventDestroy(theirs), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventDestroy(mine), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventPoolCloseIpcHandle(opened), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventPoolDestroy(shared), ZE_RESULT_SUCCESS);
}

// The specification leaves freeing memory that a queued command uses
// undefined: the emulator's core reports the command as misuse when it runs
// (ctest fails on that line everywhere else).
TEST_F(Emulator, AFillOfMemoryFreedBeforeItRanIsMisuse) {
  ze_event_handle_t gate = second_event();
  ASSERT_NE(gate, nullptr);
  void* d = device_alloc(64);
  ASSERT_EQ(zeCommandListAppendWaitOnEvents(list_, 1, &gate), ZE_RESULT_SUCCESS);
  const unsigned char byte = 7;
  ASSERT_EQ(zeCommandListAppendMemoryFill(list_, d, &byte, 1, 64, nullptr, 0, nullptr),
            ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeCommandListAppendBarrier(list_, event_, 0, nullptr), ZE_RESULT_SUCCESS);
  testing::internal::CaptureStderr();
  EXPECT_EQ(zeMemFree(context_, d), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeEventHostSignal(gate), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeEventHostSynchronize(event_, UINT64_MAX), ZE_RESULT_SUCCESS);
  // A freed device address is never handed out again: using it is misuse.
  EXPECT_EQ(zeCommandListAppendMemoryFill(list_, d, &byte, 1, 64, nullptr, 0, nullptr),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("anydev-level-zero-emulator: zeCommandListAppendMemoryFill"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("was freed before the fill ran"), std::string::npos) << err;
  ASSERT_EQ(zeEventHostReset(event_), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventDestroy(gate), ZE_RESULT_SUCCESS);
}

// The deliberate misuse that proves the validation layer is on (ctest runs
// this with ZE_ENABLE_VALIDATION_LAYER=1 and ZE_ENABLE_PARAMETER_VALIDATION=1):
// a null context is refused by the layer, which prints nothing but answers
// ZE_RESULT_ERROR_INVALID_NULL_HANDLE, and the driver never sees the call.
TEST_F(Emulator, TheValidationLayerStopsANullContextBeforeTheDriver) {
  const char* layer = std::getenv("ZE_ENABLE_VALIDATION_LAYER");
  const char* params = std::getenv("ZE_ENABLE_PARAMETER_VALIDATION");
  if (layer == nullptr || std::strcmp(layer, "1") != 0 || params == nullptr ||
      std::strcmp(params, "1") != 0) {
    GTEST_SKIP() << "needs ZE_ENABLE_VALIDATION_LAYER=1 and ZE_ENABLE_PARAMETER_VALIDATION=1";
  }
  ASSERT_NE(probe_.call_count, nullptr);
  const auto before = probe_.call_count("zeMemAllocDevice");
  ze_device_mem_alloc_desc_t desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
  void* p = nullptr;
  EXPECT_EQ(zeMemAllocDevice(nullptr, &desc, 64, 64, device_, &p),
            ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(zeMemAllocDevice(context_, nullptr, 64, 64, device_, &p),
            ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(probe_.call_count("zeMemAllocDevice"), before) << "the call reached the driver";
}

}  // namespace

namespace {

// Events of a ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP pool: NOT_READY before
// their signal, then the device time of the barrier that signalled them.
TEST_F(Emulator, KernelTimestampEventsGiveTheTimeOfTheirSignal) {
  ze_event_pool_desc_t pdesc = {
      ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
      ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 2};
  ze_event_pool_handle_t pool = nullptr;
  ASSERT_EQ(zeEventPoolCreate(context_, &pdesc, 0, nullptr, &pool), ZE_RESULT_SUCCESS);
  ze_event_handle_t first = nullptr;
  ze_event_handle_t second = nullptr;
  ze_event_desc_t edesc = {ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                           ZE_EVENT_SCOPE_FLAG_HOST};
  ASSERT_EQ(zeEventCreate(pool, &edesc, &first), ZE_RESULT_SUCCESS);
  edesc.index = 1;
  ASSERT_EQ(zeEventCreate(pool, &edesc, &second), ZE_RESULT_SUCCESS);
  ze_kernel_timestamp_result_t a = {};
  ze_kernel_timestamp_result_t b = {};
  EXPECT_EQ(zeEventQueryKernelTimestamp(first, &a), ZE_RESULT_NOT_READY);
  ASSERT_EQ(zeCommandListAppendBarrier(list_, first, 0, nullptr), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeCommandListAppendBarrier(list_, second, 0, nullptr), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeEventHostSynchronize(second, UINT64_MAX), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeEventHostSynchronize(first, UINT64_MAX), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeEventQueryKernelTimestamp(first, &a), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeEventQueryKernelTimestamp(second, &b), ZE_RESULT_SUCCESS);
  EXPECT_LE(a.global.kernelEnd, b.global.kernelEnd) << "signalled in list order";
  EXPECT_EQ(a.global.kernelStart, a.global.kernelEnd);
  ASSERT_NE(probe_.call_count, nullptr);
  EXPECT_GE(probe_.call_count("zeEventQueryKernelTimestamp"), 3u);
  EXPECT_EQ(zeEventDestroy(first), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventDestroy(second), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventPoolDestroy(pool), ZE_RESULT_SUCCESS);
}

TEST_F(Emulator, ImmediateListsAcceptQueuePriorities) {
  for (const ze_command_queue_priority_t priority :
       {ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH, ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW}) {
    ze_command_queue_desc_t qdesc = {};
    qdesc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
    qdesc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    qdesc.priority = priority;
    ze_command_list_handle_t list = nullptr;
    ASSERT_EQ(zeCommandListCreateImmediate(context_, device_, &qdesc, &list), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeCommandListDestroy(list), ZE_RESULT_SUCCESS);
  }
}

// A regular list with its queue, for the tests of regular lists.
class RegularList : public Emulator {
 protected:
  void SetUp() override {
    Emulator::SetUp();
    if (HasFatalFailure()) return;
    ze_command_queue_desc_t qdesc = {};
    qdesc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
    qdesc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    ASSERT_EQ(zeCommandQueueCreate(context_, device_, &qdesc, &queue_), ZE_RESULT_SUCCESS);
    ze_command_list_desc_t ldesc = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ASSERT_EQ(zeCommandListCreate(context_, device_, &ldesc, &regular_), ZE_RESULT_SUCCESS);
  }
  void TearDown() override {
    if (regular_ != nullptr) {
      EXPECT_EQ(zeCommandListDestroy(regular_), ZE_RESULT_SUCCESS);
    }
    if (queue_ != nullptr) {
      EXPECT_EQ(zeCommandQueueDestroy(queue_), ZE_RESULT_SUCCESS);
    }
    Emulator::TearDown();
  }
  ze_command_queue_handle_t queue_ = nullptr;
  ze_command_list_handle_t regular_ = nullptr;
};

// Recorded once, run by every execute: the appends are not made again.
TEST_F(RegularList, EveryExecuteRunsTheRecordedCommands) {
  ASSERT_NE(probe_.call_count, nullptr);
  void* d = device_alloc(256);
  std::vector<unsigned char> out(256);
  const unsigned char byte = 0x5A;
  ASSERT_EQ(zeCommandListAppendMemoryFill(regular_, d, &byte, 1, 256, nullptr, 0, nullptr),
            ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeCommandListAppendBarrier(regular_, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeCommandListAppendMemoryCopy(regular_, out.data(), d, 256, nullptr, 0, nullptr),
            ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeCommandListAppendBarrier(regular_, event_, 0, nullptr), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeCommandListClose(regular_), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventQueryStatus(event_), ZE_RESULT_NOT_READY) << "recorded, not run";
  const auto fills = probe_.call_count("zeCommandListAppendMemoryFill");
  const auto executes = probe_.call_count("zeCommandQueueExecuteCommandLists");
  for (int run = 0; run < 3; ++run) {
    std::fill(out.begin(), out.end(), 0);
    ASSERT_EQ(zeCommandQueueExecuteCommandLists(queue_, 1, &regular_, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zeEventHostSynchronize(event_, UINT64_MAX), ZE_RESULT_SUCCESS);
    for (unsigned char b : out) ASSERT_EQ(b, byte) << "run " << run;
    ASSERT_EQ(zeEventHostReset(event_), ZE_RESULT_SUCCESS);
  }
  EXPECT_EQ(probe_.call_count("zeCommandQueueExecuteCommandLists"), executes + 3);
  EXPECT_EQ(probe_.call_count("zeCommandListAppendMemoryFill"), fills);
  EXPECT_EQ(zeCommandQueueSynchronize(queue_, UINT64_MAX), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeMemFree(context_, d), ZE_RESULT_SUCCESS);
}

// Executing a list that is not closed, or an immediate one, appending to a
// closed one, and executing it again while it runs: each answers its code
// and counts as misuse.
TEST_F(RegularList, MisusedListsAnswerTheirErrors) {
  ASSERT_NE(probe_.misuse_count, nullptr);
  ze_event_handle_t gate = second_event();
  ASSERT_NE(gate, nullptr);
  ASSERT_EQ(zeCommandListAppendBarrier(regular_, nullptr, 1, &gate), ZE_RESULT_SUCCESS);
  const auto before = probe_.misuse_count();
  EXPECT_EQ(zeCommandQueueExecuteCommandLists(queue_, 1, &regular_, nullptr),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeCommandQueueExecuteCommandLists(queue_, 1, &list_, nullptr),
            ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
  ASSERT_EQ(zeCommandListClose(regular_), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeCommandListAppendBarrier(regular_, nullptr, 0, nullptr),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);
  // Held at the gate: a second execute, and destroying the list or the
  // queue, would find it running.
  ASSERT_EQ(zeCommandQueueExecuteCommandLists(queue_, 1, &regular_, nullptr), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeCommandQueueExecuteCommandLists(queue_, 1, &regular_, nullptr),
            ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
  EXPECT_EQ(zeCommandListDestroy(regular_), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
  EXPECT_EQ(zeCommandQueueDestroy(queue_), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
  EXPECT_EQ(probe_.misuse_count(), before + 6);
  ASSERT_EQ(zeEventHostSignal(gate), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeCommandQueueSynchronize(queue_, UINT64_MAX), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventDestroy(gate), ZE_RESULT_SUCCESS);
}

}  // namespace
