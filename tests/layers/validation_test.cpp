// SPDX-License-Identifier: Apache-2.0
// The validation layer (ANYDEV_VALIDATE=1, set by the ctest entry): released,
// foreign and wrong-kind handles are INVALID_STATE with a precise message
// instead of a crash, and host access to a HostBuffer that an enqueued copy
// is still writing is reported.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <regex>
#include <string>
#include <string_view>

#include "anydev/anydev.h"
#include "anydev/anydev.hpp"

namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::HostBuffer;
using anydev::Status;

#define REQUIRE_VALIDATION()                                                                  \
  if (anydev_validation_enabled() == 0)                                                       \
  GTEST_SKIP() << "needs ANYDEV_VALIDATE=1 (set by its ctest entry); it is \""                \
               << (std::getenv("ANYDEV_VALIDATE") ? std::getenv("ANYDEV_VALIDATE") : "unset") \
               << "\""

std::string LastError() { return anydev_last_error_message(); }

std::string Hex(const void* p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  return text;
}

TEST(Validation, ReleasedBufferIsInvalidStateNamingTheCall) {
  REQUIRE_VALIDATION();
  anydev_context_t ctx = nullptr;
  ASSERT_EQ(anydev_context_create("cpu", 0, &ctx), ANYDEV_SUCCESS) << LastError();
  anydev_buffer_t buf = nullptr;
  ASSERT_EQ(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_FLOAT32, 8, &buf),
            ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_buffer_release(buf), ANYDEV_SUCCESS);
  anydev_buffer_info_t info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(anydev_buffer_get_info(buf, &info), ANYDEV_ERROR_INVALID_STATE);
  EXPECT_EQ(LastError(), "anydev_buffer_get_info: the buffer argument " + Hex(buf) +
                             " was already released (its last reference went): using it is a "
                             "use-after-free [ANYDEV_VALIDATE]");
  const float pattern = 1.0f;
  EXPECT_EQ(anydev_enqueue_fill(ctx, buf, &pattern, sizeof(pattern)), ANYDEV_ERROR_INVALID_STATE);
  EXPECT_NE(LastError().find("anydev_enqueue_fill: the buffer argument " + Hex(buf) +
                             " was already released"),
            std::string::npos)
      << LastError();
  EXPECT_EQ(anydev_buffer_release(buf), ANYDEV_ERROR_INVALID_STATE);  // a double release
  EXPECT_NE(LastError().find("anydev_buffer_release: the handle argument"), std::string::npos)
      << LastError();
  ASSERT_EQ(anydev_context_release(ctx), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_context_synchronize(ctx), ANYDEV_ERROR_INVALID_STATE);
  EXPECT_NE(LastError().find("anydev_context_synchronize: the context argument " + Hex(ctx) +
                             " was already released"),
            std::string::npos)
      << LastError();
}

TEST(Validation, ForeignAndWrongKindHandlesAreInvalidState) {
  REQUIRE_VALIDATION();
  int not_a_handle = 0;
  auto* foreign = reinterpret_cast<anydev_context_t>(&not_a_handle);
  EXPECT_EQ(anydev_context_synchronize(foreign), ANYDEV_ERROR_INVALID_STATE);
  EXPECT_EQ(LastError(), "anydev_context_synchronize: the context argument " + Hex(foreign) +
                             " is not a handle anydev created (a foreign or corrupted pointer) "
                             "[ANYDEV_VALIDATE]");
  const DeviceContext ctx(0, "cpu");
  const anydev::DeviceStream stream = ctx.stream();
  auto* wrong = reinterpret_cast<anydev_event_t>(stream.handle());
  EXPECT_EQ(anydev_event_synchronize(wrong), ANYDEV_ERROR_INVALID_STATE);
  EXPECT_EQ(LastError(), "anydev_event_synchronize: the event argument " + Hex(wrong) +
                             " is a live stream handle, not a event handle [ANYDEV_VALIDATE]");
  stream.synchronize();  // the real stream still works
}

// The planted misuse: reading a HostBuffer while a copy into it is in
// flight. The copy is queued behind large fills so it is still running when
// at() is called; should the machine finish it first anyway, the check
// retries with more work (and fails if the copy was running but unreported).
TEST(Validation, HostAccessDuringACopyIntoTheBufferIsReported) {
  REQUIRE_VALIDATION();
  const DeviceContext ctx(0, "cpu");
  constexpr std::size_t kCount = 4u << 20;  // 16 MiB of uint32
  const DeviceBuffer<std::uint32_t> device = ctx.enqueue_create_buffer<std::uint32_t>(kCount);
  const HostBuffer<std::uint32_t> host = ctx.enqueue_create_host_buffer<std::uint32_t>(kCount);
  host.enqueue_fill(0u);
  ctx.synchronize();
  (void)host.at(kCount - 1);  // nothing in flight: no report
  bool reported = false;
  std::uint32_t last = 0;
  for (int attempt = 1; attempt <= 4 && !reported; ++attempt) {
    for (int i = 0; i < 2 * attempt; ++i) {
      last = static_cast<std::uint32_t>(attempt * 100 + i);
      device.enqueue_fill(last);
    }
    device.enqueue_copy_to(host);
    const anydev::DeviceEvent copied = ctx.create_event();
    ctx.stream().record_event(copied);
    try {
      (void)host.at(kCount - 1);
      ASSERT_TRUE(copied.is_complete()) << "at() during an unfinished copy was not reported";
    } catch (const anydev::Error& e) {
      reported = true;
      EXPECT_EQ(e.status(), Status::invalid_state);
      const std::string expected =
          "anydev_buffer_check_host_access: host access to element " + std::to_string(kCount - 1) +
          " \\(bytes " + std::to_string((kCount - 1) * 4) + ".." + std::to_string(kCount * 4) +
          " of the allocation\\) of host buffer 0x[0-9a-f]+ \\(" + std::to_string(kCount) +
          " uint32 elements\\) while a copy from device memory of " + std::to_string(kCount * 4) +
          " bytes into bytes 0.." + std::to_string(kCount * 4) +
          ", enqueued on cpu:0 stream 0x[0-9a-f]+, has not completed: synchronize the stream "
          "\\(or an event recorded after it\\) first \\[ANYDEV_VALIDATE\\]";
      EXPECT_TRUE(std::regex_match(std::string(e.what()), std::regex(expected))) << e.what();
    }
    ctx.synchronize();
  }
  EXPECT_TRUE(reported) << "the copy always finished before at(): could not plant the misuse";
  EXPECT_EQ(host.at(kCount - 1), last);  // synchronized: no report, the last fill's value
}

// A fill writes device memory from its stream's device: another device's
// memory needs peer access first. Run by the ctest entry
// layers.validate.peer_cuda_emulator (two emulated CUDA devices).
// A range whose end passes SIZE_MAX is out of range, and the message names
// it without the wrapped end ("elements 18446744073709551615..1").
TEST(Validation, HostAccessRangePastSizeMaxIsNamedWithoutWrapping) {
  REQUIRE_VALIDATION();
  anydev_context_t ctx = nullptr;
  ASSERT_EQ(anydev_context_create("cpu", 0, &ctx), ANYDEV_SUCCESS) << LastError();
  anydev_buffer_t buf = nullptr;
  ASSERT_EQ(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_FLOAT32, 4, &buf),
            ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_buffer_check_host_access(buf, SIZE_MAX, 2), ANYDEV_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(LastError(),
            "anydev_buffer_check_host_access: the 2 elements from index " +
                std::to_string(SIZE_MAX) +
                " (their end, offset + count, overflows size_t) lie outside the buffer of 4 "
                "elements");
  EXPECT_EQ(anydev_buffer_check_host_access(buf, 3, 2), ANYDEV_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(LastError(),
            "anydev_buffer_check_host_access: elements 3..5 lie outside the buffer of 4 elements");
  EXPECT_EQ(anydev_buffer_check_host_access(buf, 0, 4), ANYDEV_SUCCESS) << LastError();
  ASSERT_EQ(anydev_buffer_release(buf), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_context_release(ctx), ANYDEV_SUCCESS);
}

TEST(ValidationPeer, FillOfAnotherDevicesMemoryNeedsPeerAccess) {
  REQUIRE_VALIDATION();
  if (DeviceContext::number_of_devices("cuda") < 2) {
    GTEST_SKIP() << "needs two cuda devices (the ctest entry uses the CUDA emulator)";
  }
  const DeviceContext d0(0, "cuda");
  const DeviceContext d1(1, "cuda");
  const DeviceBuffer<std::uint32_t> on_d1 = d1.enqueue_create_buffer<std::uint32_t>(64);
  try {
    d0.enqueue_memset(on_d1, 7u);
    ADD_FAILURE() << "a fill of cuda:1 memory on a cuda:0 stream without peer access was accepted";
  } catch (const anydev::Error& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument);
    EXPECT_EQ(std::string(e.what()),
              "anydev_enqueue_fill: a stream of cuda:0 would write device memory of cuda:1 "
              "without peer access (call enable_peer_access(cuda:0 -> cuda:1) first) "
              "[ANYDEV_VALIDATE]");
  }
  // A copy between the devices needs no peer access; a fill after
  // enable_peer_access is accepted and writes the bytes.
  const DeviceBuffer<std::uint32_t> on_d0 = d0.enqueue_create_buffer<std::uint32_t>(64);
  on_d0.enqueue_fill(3u);
  on_d1.enqueue_copy_from(on_d0);
  d1.synchronize();
  if (!d0.can_access(d1)) GTEST_SKIP() << "cuda:0 cannot access cuda:1 on this machine";
  d0.enable_peer_access(d1);
  d0.enqueue_memset(on_d1, 7u);
  d0.synchronize();
  HostBuffer<std::uint32_t> host = d1.enqueue_create_host_buffer<std::uint32_t>(64);
  on_d1.enqueue_copy_to(host);
  d1.synchronize();
  for (std::size_t i = 0; i < 64; ++i) ASSERT_EQ(host[i], 7u) << "element " << i;
}

}  // namespace
