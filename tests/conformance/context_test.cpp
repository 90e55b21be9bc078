// SPDX-License-Identifier: Apache-2.0
// DeviceContext: identity, memory, device count, sharing, peers, native
// handles.
#include <cstdint>
#include <string>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceContext;
using anydev::Status;

class ContextTest : public DeviceTest {};

TEST_P(ContextTest, NamesItsBackendAndDevice) {
  EXPECT_EQ(ctx().api(), GetParam().api);
  EXPECT_EQ(ctx().id(), GetParam().device);
  const std::string name = ctx().name();
  EXPECT_FALSE(name.empty());
  if (api() == "cpu") {
    EXPECT_NE(name.find("cpu"), std::string::npos)
        << "a CPU device's name contains \"cpu\": " << name;
    EXPECT_EQ(ctx().id(), 0);
  }
}

TEST_P(ContextTest, DescribesItsDevice) {
  // Every backend says something about its device for anydev-info; CUDA's
  // description names the compute capability and the PCI bus id.
  const std::string description = ctx().description();
  EXPECT_FALSE(description.empty());
  if (api() == "cuda") {
    EXPECT_NE(description.find("compute capability "), std::string::npos) << description;
    EXPECT_NE(description.find("PCI bus id "), std::string::npos) << description;
  }
}

TEST_P(ContextTest, MemoryInfo) {
  const anydev::MemoryInfo info = ctx().memory_info();
  EXPECT_GT(info.total, 0u);
  EXPECT_LE(info.free, info.total);
}

TEST_P(ContextTest, NumberOfDevicesCountsThisDevice) {
  EXPECT_GT(DeviceContext::number_of_devices(api()), GetParam().device);
}

TEST_P(ContextTest, DeviceIndexPastTheLastIsOutOfRange) {
  const int count = DeviceContext::number_of_devices(api());
  EXPECT_TRUE(Fails(Status::out_of_range, [&] { DeviceContext past(count, api()); },
                    {api(), std::to_string(count)}));
  EXPECT_TRUE(Fails(Status::out_of_range, [&] { DeviceContext past(1 << 30, api()); }));
}

// DeviceContext() is the default device; a negative index (-5 must not mean
// device 0 in silence) is refused by the C++ API and, below -1, by the C ABI.
TEST_P(ContextTest, NegativeDeviceIndexIsInvalidArgument) {
  for (const int index : {-1, -5, -(1 << 30)}) {
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { DeviceContext negative(index, api()); },
                      {"DeviceContext", std::to_string(index)}));
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { DeviceContext negative(index); },
                      {std::to_string(index)}));
    int not_a_stream = 0;
    EXPECT_TRUE(Fails(Status::invalid_argument,
                      [&] { DeviceContext::wrap_native_stream(api(), index, &not_a_stream); },
                      {std::to_string(index)}));
  }
}

TEST_P(ContextTest, CopiesShareTheContextAndItsStream) {
  const DeviceContext copy = ctx();
  EXPECT_EQ(copy.handle(), ctx().handle());
  // Work enqueued through the copy is finished by synchronizing the original.
  const anydev::HostBuffer<std::uint32_t> buffer =
      copy.enqueue_create_host_buffer<std::uint32_t>(1 << 20);
  copy.enqueue_memset(buffer, 0xA5A5F00Du);
  ctx().synchronize();
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(buffer.as_span()), 0xA5A5F00Du));
}

TEST_P(ContextTest, MovedFromContextIsInvalidState) {
  DeviceContext a = ctx();
  const DeviceContext b = std::move(a);
  EXPECT_EQ(b.api(), api());
  EXPECT_EQ(a.handle(), nullptr);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)a.api(); }));
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { a.synchronize(); }));
  EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)a.enqueue_create_host_buffer<int>(1); }));
}

TEST_P(ContextTest, AdoptTakesOverOneReference) {
  ASSERT_EQ(anydev_context_retain(ctx().handle()), ANYDEV_SUCCESS);
  const DeviceContext adopted = DeviceContext::adopt(ctx().handle());
  EXPECT_EQ(adopted.handle(), ctx().handle());
  EXPECT_EQ(adopted.api(), api());
}

TEST_P(ContextTest, SynchronizeWithNothingQueued) {
  ctx().synchronize();
  ctx().synchronize();
  ctx().stream().synchronize();
}

TEST_P(ContextTest, CannotAccessItself) { EXPECT_FALSE(ctx().can_access(ctx())); }

TEST_P(ContextTest, PeerAccessBetweenTwoDevices) {
  const int count = DeviceContext::number_of_devices(api());
  if (count < 2) {
    GTEST_SKIP() << "peer access needs two devices of " << api() << "; it has " << count;
  }
  const DeviceContext peer((GetParam().device + 1) % count, api());
  if (ctx().can_access(peer)) {
    ctx().enable_peer_access(peer);
  } else {
    EXPECT_THROW(ctx().enable_peer_access(peer), anydev::Error)
        << "can_access says no, so enabling must fail";
  }
}

// Native handles exist on vendor backends; a backend without such an object
// says unsupported, never anything else.
TEST_P(ContextTest, NativeHandlesAreValidOrUnsupported) {
  const bool vendor =
      api() == "cuda" || api() == "hip" || api() == "level_zero" || api() == "opencl";
  auto check = [&](const char* what, auto get) {
    SCOPED_TRACE(what);
    try {
      void* handle = get();
      if (vendor) {
        EXPECT_NE(handle, nullptr);
      }
    } catch (const anydev::Error& e) {
      EXPECT_EQ(e.status(), Status::unsupported) << e.what();
      EXPECT_FALSE(vendor) << api() << " has a native " << what << ": " << e.what();
    }
  };
  if (api() == "hip") {  // HIP's runtime API has no context object: its context is the device
    try {
      static_cast<void>(ctx().native_handle(ANYDEV_NATIVE_CONTEXT));
      ADD_FAILURE() << "hip has no native context";
    } catch (const anydev::Error& e) {
      EXPECT_EQ(e.status(), Status::unsupported) << e.what();
    }
  } else {
    check("context", [&] { return ctx().native_handle(ANYDEV_NATIVE_CONTEXT); });
  }
  check("stream", [&] { return ctx().stream().native_handle(); });
  const anydev::DeviceEvent event = ctx().create_event();
  ctx().stream().record_event(event);
  check("event", [&] { return event.native_handle(); });
  ctx().synchronize();
}

ANYDEV_CONFORMANCE_SUITE(ContextTest);

}  // namespace
}  // namespace anydev_conformance
