// SPDX-License-Identifier: Apache-2.0
// Fault injection (ANYDEV_FAULT): each suite runs in its own process with the
// variable set by its ctest entry (tests/layers/CMakeLists.txt), on the cpu
// backend. For every kind of call the injected failure must surface as the
// documented status with a message naming the injected fault, change no
// buffer, and leave the library usable; the ASan build's LeakSanitizer checks
// that nothing leaks. A suite run without its variable fails (the ctest entry
// counts a skip as a failure) rather than passing vacuously.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "anydev/anydev.hpp"

namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::HostBuffer;
using anydev::Status;

constexpr std::size_t kCount = 4096;

bool FaultIs(std::string_view expected) {
  const char* value = std::getenv("ANYDEV_FAULT");
  return value != nullptr && expected == value;
}

#define REQUIRE_FAULT(value) \
  if (!FaultIs(value)) GTEST_SKIP() << "needs ANYDEV_FAULT=" value " (set by its ctest entry)"

// Runs `call`, which must throw Error(status) naming the injected fault and
// `op`.
template <class Call>
void ExpectInjected(Status status, std::string_view op, Call&& call) {
  try {
    call();
    ADD_FAILURE() << "no error: the injected fault did not surface";
  } catch (const anydev::Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    const std::string message = e.what();
    EXPECT_NE(message.find("injected fault (ANYDEV_FAULT="), std::string::npos) << message;
    EXPECT_NE(message.find(op), std::string::npos) << message;
  }
}

template <class T>
void ExpectAll(const DeviceContext& ctx, const DeviceBuffer<T>& buffer, T value) {
  HostBuffer<T> host = ctx.enqueue_create_host_buffer<T>(buffer.size());
  buffer.enqueue_copy_to(host);
  ctx.synchronize();
  for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(host[i], value) << "element " << i;
}

template <class T>
void ExpectAll(const DeviceContext& ctx, const HostBuffer<T>& buffer, T value) {
  ctx.synchronize();
  for (std::size_t i = 0; i < buffer.size(); ++i) ASSERT_EQ(buffer[i], value) << "element " << i;
}

// alloc:3 -- the third allocation that reaches the backend fails.
TEST(FaultAlloc, ThirdAllocationIsOutOfMemoryAndChangesNothing) {
  REQUIRE_FAULT("alloc:3");
  const DeviceContext ctx(0, "cpu");
  const HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(kCount);
  const DeviceBuffer<std::uint32_t> device = ctx.enqueue_create_buffer<std::uint32_t>(kCount + 1);
  host.enqueue_fill(7u);
  device.enqueue_fill(9u);
  ctx.synchronize();
  ExpectInjected(Status::out_of_memory, "anydev_buffer_create",
                 [&] { (void)ctx.enqueue_create_buffer<std::uint32_t>(kCount + 2); });
  ExpectAll(ctx, host, 7u);
  // The fourth allocation (the staging buffer ExpectAll makes) works again.
  ExpectAll(ctx, device, 9u);
  const DeviceBuffer<std::uint32_t> later = ctx.enqueue_create_buffer<std::uint32_t>(kCount + 3);
  later.enqueue_fill(3u);
  ExpectAll(ctx, later, 3u);
}

// copy:2 -- the second copy fails; neither side changes.
TEST(FaultCopy, SecondCopyIsDeviceErrorAndChangesNothing) {
  REQUIRE_FAULT("copy:2");
  const DeviceContext ctx(0, "cpu");
  const HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(kCount);
  const DeviceBuffer<std::uint32_t> device = ctx.enqueue_create_buffer<std::uint32_t>(kCount);
  const HostBuffer<std::uint32_t> check = ctx.enqueue_create_host_buffer<std::uint32_t>(kCount);
  host.enqueue_fill(1u);
  device.enqueue_fill(2u);
  check.enqueue_fill(0u);
  device.enqueue_copy_to(check);  // copy 1
  ctx.synchronize();
  ExpectAll(ctx, check, 2u);
  ExpectInjected(Status::device_error, "anydev_enqueue_copy",
                 [&] { host.enqueue_copy_to(device); });  // copy 2
  ExpectAll(ctx, host, 1u);
  ExpectAll(ctx, device, 2u);  // copy 3 works
  std::vector<std::uint32_t> out(kCount, 0);
  host.enqueue_copy_to(out.data());  // copy 4
  ctx.synchronize();
  for (std::uint32_t v : out) ASSERT_EQ(v, 1u);
}

// fill:2 -- the second fill fails; the buffer keeps what the first wrote.
TEST(FaultFill, SecondFillIsDeviceErrorAndChangesNothing) {
  REQUIRE_FAULT("fill:2");
  const DeviceContext ctx(0, "cpu");
  const DeviceBuffer<std::uint16_t> device = ctx.enqueue_create_buffer<std::uint16_t>(kCount);
  device.enqueue_fill(0x1234);  // fill 1
  ExpectInjected(Status::device_error, "anydev_enqueue_fill",
                 [&] { device.enqueue_fill(0x5678); });  // fill 2
  ExpectAll(ctx, device, std::uint16_t{0x1234});
  device.enqueue_fill(0x4321);  // fill 3
  ExpectAll(ctx, device, std::uint16_t{0x4321});
}

// event:2 -- creating an event is event call 1; recording it is call 2.
TEST(FaultEvent, RecordingIsDeviceErrorThenWorks) {
  REQUIRE_FAULT("event:2");
  const DeviceContext ctx(0, "cpu");
  const anydev::DeviceEvent event = ctx.create_event();  // event 1
  ExpectInjected(Status::device_error, "event_record",
                 [&] { ctx.stream().record_event(event); });  // event 2
  ctx.stream().record_event(event);                           // event 3
  event.synchronize();
  EXPECT_TRUE(event.is_complete());
}

// event:1 -- the first event call is the one the core makes to order a copy
// on a second stream after the buffer's last use on the first: the copy fails
// before it is enqueued and both buffers keep their contents.
TEST(FaultEventOrdering, CrossStreamCopyFailsBeforeItIsEnqueued) {
  REQUIRE_FAULT("event:1");
  const DeviceContext ctx(0, "cpu");
  const DeviceContext other = ctx.with_stream(ctx.create_stream());
  const DeviceBuffer<std::uint32_t> a = ctx.enqueue_create_buffer<std::uint32_t>(kCount);
  const DeviceBuffer<std::uint32_t> b = ctx.enqueue_create_buffer<std::uint32_t>(kCount);
  a.enqueue_fill(5u);
  b.enqueue_fill(6u);
  ctx.synchronize();
  ExpectInjected(Status::device_error, "anydev_enqueue_copy",
                 [&] { other.enqueue_copy(b, a); });  // orders `other` after ctx: event 1
  ExpectAll(ctx, a, 5u);
  ExpectAll(ctx, b, 6u);
  other.enqueue_copy(b, a);
  other.synchronize();
  ExpectAll(ctx, b, 5u);
}

// plugin:1 -- the first probe fails: the cpu backend is unavailable, with a
// reason that says the failure was injected, and selection reports it.
TEST(FaultPlugin, FirstProbeMakesTheBackendUnavailable) {
  REQUIRE_FAULT("plugin:1");
  try {
    const DeviceContext ctx(0, "cpu");
    ADD_FAILURE() << "the cpu backend is available despite plugin:1";
  } catch (const anydev::Error& e) {
    EXPECT_EQ(e.status(), Status::backend_unavailable) << e.what();
    EXPECT_NE(std::string(e.what()).find("injected fault (ANYDEV_FAULT=\"plugin:1\")"),
              std::string::npos)
        << e.what();
  }
  bool found = false;
  for (const anydev::BackendInfo& info : DeviceContext::backends()) {
    if (info.name != "cpu") continue;
    found = true;
    EXPECT_FALSE(info.available);
    EXPECT_NE(info.reason.find("injected fault"), std::string::npos) << info.reason;
  }
  EXPECT_TRUE(found);
}

// A malformed ANYDEV_FAULT makes every backend unavailable with the parse
// error as the reason (never a silent run without the requested faults).
TEST(FaultMalformed, BackendUnavailableNamingTheValue) {
  const char* value = std::getenv("ANYDEV_FAULT");
  if (value == nullptr) GTEST_SKIP() << "needs a malformed ANYDEV_FAULT (set by its ctest entry)";
  try {
    const DeviceContext ctx(0, "cpu");
    ADD_FAILURE() << "ANYDEV_FAULT=\"" << value << "\" was accepted";
  } catch (const anydev::Error& e) {
    EXPECT_EQ(e.status(), Status::backend_unavailable) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::string("ANYDEV_FAULT=\"") + value + "\": entry"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
