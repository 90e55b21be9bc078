// SPDX-License-Identifier: Apache-2.0
// Objects of two different backends cannot be mixed: every such call is
// invalid_argument and changes nothing. Needs a second available backend.
#include <cstdint>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceContext;
using anydev::Status;

class CrossBackendTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    foreign_ = OtherBackendContext(api());
    if (!foreign_) {
      GTEST_SKIP() << "no second backend is available besides " << api()
                   << ": mixing backends cannot be tested";
    }
  }
  const DeviceContext& foreign() const { return *foreign_; }

 private:
  std::optional<DeviceContext> foreign_;
};

TEST_P(CrossBackendTest, CopiesBetweenBackendsAreInvalidArgument) {
  SCOPED_TRACE("foreign backend " + foreign().api());
  ForEachKind([&]<Kind K>() {
    const Array<std::int32_t> mine_values = Pattern<std::int32_t>(256, 801);
    const Array<std::int32_t> theirs_values = Pattern<std::int32_t>(256, 802);
    const Buffer<K, std::int32_t> mine = CreateWith<K>(ctx(), mine_values);
    const anydev::HostBuffer<std::int32_t> theirs_host = HostWith(foreign(), theirs_values);
    const anydev::DeviceBuffer<std::int32_t> theirs_device = DeviceWith(foreign(), theirs_values);
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { mine.enqueue_copy_to(theirs_host); }));
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { mine.enqueue_copy_to(theirs_device); }));
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { mine.enqueue_copy_from(theirs_device); }));
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { theirs_device.enqueue_copy_to(mine); }));
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { ctx().enqueue_copy(theirs_device, mine); }));
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { ctx().enqueue_memset(theirs_device, 5); }));
    ctx().synchronize();
    foreign().synchronize();
    EXPECT_TRUE(BytesEqual(Contents(mine), mine_values));
    EXPECT_TRUE(BytesEqual(Contents(theirs_host), theirs_values));
    EXPECT_TRUE(BytesEqual(Contents(theirs_device), theirs_values));
  });
}

TEST_P(CrossBackendTest, StreamsAndEventsOfAnotherBackendAreInvalidArgument) {
  SCOPED_TRACE("foreign backend " + foreign().api());
  const anydev::DeviceStream their_stream = foreign().create_stream();
  EXPECT_TRUE(Fails(Status::invalid_argument, [&] { (void)ctx().with_stream(their_stream); }));
  const anydev::DeviceEvent their_event = foreign().create_event();
  foreign().stream().record_event(their_event);
  EXPECT_TRUE(
      Fails(Status::invalid_argument, [&] { ctx().stream().enqueue_wait_for(their_event); }));
  const anydev::DeviceEvent my_event = ctx().create_event();
  EXPECT_TRUE(Fails(Status::invalid_argument, [&] { their_stream.record_event(my_event); }));
  foreign().synchronize();
}

TEST_P(CrossBackendTest, FreeOfAnotherBackendsPointerIsInvalidArgument) {
  anydev::HostBuffer<int> buffer = foreign().enqueue_create_host_buffer<int>(16);
  int* const taken = std::move(buffer).take_ptr();
  EXPECT_TRUE(Fails(Status::invalid_argument, [&] { ctx().free(taken); }));
  foreign().free(taken);
  foreign().synchronize();
}

ANYDEV_CONFORMANCE_SUITE(CrossBackendTest);

}  // namespace
}  // namespace anydev_conformance
