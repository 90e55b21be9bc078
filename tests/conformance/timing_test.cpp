// SPDX-License-Identifier: Apache-2.0
// Timed events (create_event(EventOptions), DeviceEvent::elapsed_time,
// execution_time) and stream priorities (stream_priority_range,
// create_stream(priority)) on every backend: what they measure and refuse.
// No timing thresholds: a measured time is only checked to be a finite,
// non-negative number whose sign flips with the order of the events.
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceContext;
using anydev::DeviceEvent;
using anydev::DeviceStream;
using anydev::Error;
using anydev::EventOptions;
using anydev::HostBuffer;
using anydev::Status;

// Skips where a plugin other than the five shipped backends has no timed
// events (its table predates them); the shipped ones must have them.
class TimingTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (shipped()) return;
    try {
      (void)ctx().create_event(anydev::EventOptions{.timing = true});
    } catch (const anydev::Error& e) {
      if (e.status() == anydev::Status::unsupported) {
        GTEST_SKIP() << api() << " offers no timed events: " << e.what();
      }
    }
  }
};

constexpr std::size_t kWords = (4u << 20) / 4;

// The status an operation throws, or success.
template <class Op>
Status StatusOf(Op&& op) {
  try {
    op();
  } catch (const Error& e) {
    return e.status();
  }
  return Status::success;
}

TEST_P(TimingTest, EventsKeepTheirFlags) {
  EXPECT_EQ(ctx().create_event().flags(), 0u);
  EXPECT_TRUE(ctx().create_event(EventOptions{.timing = true}).timing());
  EXPECT_FALSE(ctx().create_event(EventOptions{.timing = true}).blocking_sync());
  const DeviceEvent both = ctx().create_event(EventOptions{.timing = true, .blocking_sync = true});
  EXPECT_EQ(both.flags(), unsigned{ANYDEV_EVENT_TIMING | ANYDEV_EVENT_BLOCKING_SYNC});
}

TEST_P(TimingTest, ElapsedTimeOfRecordedWorkIsFiniteAndAntisymmetric) {
  const DeviceEvent start = ctx().create_event(EventOptions{.timing = true});
  const DeviceEvent end = ctx().create_event(EventOptions{.timing = true});
  const HostBuffer<std::uint32_t> buffer = ctx().enqueue_create_host_buffer<std::uint32_t>(kWords);
  ctx().stream().record_event(start);
  buffer.enqueue_fill(0x11223344u);
  ctx().stream().record_event(end);
  end.synchronize();
  const float ms = start.elapsed_time(end);
  EXPECT_TRUE(std::isfinite(ms));
  EXPECT_GE(ms, 0.0F);
  EXPECT_FLOAT_EQ(DeviceEvent::elapsed_time(end, start), -ms);
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(buffer.as_span()), 0x11223344u));
}

TEST_P(TimingTest, ElapsedTimeBeforeCompletionIsNotReadyThenSucceeds) {
  const DeviceEvent start = ctx().create_event(EventOptions{.timing = true});
  const DeviceEvent end = ctx().create_event(EventOptions{.timing = true});
  const HostBuffer<std::uint32_t> buffer = ctx().enqueue_create_host_buffer<std::uint32_t>(kWords);
  ctx().stream().record_event(start);
  for (int i = 0; i < 8; ++i) buffer.enqueue_fill(static_cast<std::uint32_t>(i));
  ctx().stream().record_event(end);
  // Whether the work is done yet is the device's business; if it is not,
  // the answer must be not_ready (never a wrong time).
  const Status early = StatusOf([&] { static_cast<void>(start.elapsed_time(end)); });
  EXPECT_TRUE(early == Status::success || early == Status::not_ready) << anydev::to_string(early);
  end.synchronize();
  EXPECT_GE(start.elapsed_time(end), 0.0F);
}

TEST_P(TimingTest, ElapsedTimeRefusesEventsWithoutTimingOrNeverRecorded) {
  const DeviceEvent plain = ctx().create_event();
  const DeviceEvent timed = ctx().create_event(EventOptions{.timing = true});
  const DeviceEvent unrecorded = ctx().create_event(EventOptions{.timing = true});
  ctx().stream().record_event(plain);
  ctx().stream().record_event(timed);
  ctx().synchronize();
  EXPECT_EQ(StatusOf([&] { static_cast<void>(plain.elapsed_time(timed)); }),
            Status::invalid_argument);
  EXPECT_EQ(StatusOf([&] { static_cast<void>(timed.elapsed_time(plain)); }),
            Status::invalid_argument);
  EXPECT_EQ(StatusOf([&] { static_cast<void>(timed.elapsed_time(unrecorded)); }),
            Status::invalid_state);
  EXPECT_EQ(StatusOf([&] { static_cast<void>(unrecorded.elapsed_time(timed)); }),
            Status::invalid_state);
}

TEST_P(TimingTest, ElapsedTimeAcrossStreamsOfOneDevice) {
  const DeviceStream other = ctx().create_stream();
  const DeviceEvent start = ctx().create_event(EventOptions{.timing = true});
  const DeviceEvent end = ctx().create_event(EventOptions{.timing = true});
  ctx().stream().record_event(start);
  start.synchronize();
  other.enqueue_wait_for(start);
  other.record_event(end);
  end.synchronize();
  EXPECT_GE(start.elapsed_time(end), 0.0F);
}

TEST_P(TimingTest, BlockingSyncEventWaitsForItsWork) {
  const DeviceEvent event = ctx().create_event(EventOptions{.blocking_sync = true});
  const HostBuffer<std::uint32_t> buffer = ctx().enqueue_create_host_buffer<std::uint32_t>(kWords);
  buffer.enqueue_fill(0xB10C5EEDu);
  ctx().stream().record_event(event);
  event.synchronize();
  EXPECT_TRUE(event.is_complete());
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(buffer.as_span()), 0xB10C5EEDu));
}

TEST_P(TimingTest, ExecutionTimeCallsTheFunctionOncePerIteration) {
  const HostBuffer<std::uint32_t> buffer = ctx().enqueue_create_host_buffer<std::uint32_t>(kWords);
  int calls = 0;
  const std::int64_t once = ctx().execution_time([&](const DeviceContext& c) {
    EXPECT_EQ(c.handle(), ctx().handle());
    buffer.enqueue_fill(7u);
    ++calls;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_GE(once, 0);
  std::size_t seen = 0;
  const std::int64_t five = ctx().execution_time_iter(
      [&](const DeviceContext&, std::size_t i) {
        EXPECT_EQ(i, seen++);
        buffer.enqueue_fill(static_cast<std::uint32_t>(i));
      },
      5);
  EXPECT_EQ(seen, 5u);
  EXPECT_GE(five, 0);
  // execution_time waited for the end: the last fill is done.
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(buffer.as_span()), 4u));
}

TEST_P(TimingTest, ExecutionTimeRefusesZeroIterationsAndPassesExceptionsOn) {
  EXPECT_EQ(
      StatusOf([&] { static_cast<void>(ctx().execution_time([](const DeviceContext&) {}, 0)); }),
      Status::invalid_argument);
  int calls = 0;
  EXPECT_THROW(static_cast<void>(ctx().execution_time(
                   [&](const DeviceContext&) {
                     ++calls;
                     throw std::runtime_error("from the timed function");
                   },
                   3)),
               std::runtime_error);
  EXPECT_EQ(calls, 1) << "the first exception ends the measurement";
  ctx().synchronize();
}

TEST_P(TimingTest, PriorityRangeHasTheNormalPriorityAsLeast) {
  const anydev::StreamPriorityRange range = ctx().stream_priority_range();
  EXPECT_EQ(range.least, 0);
  EXPECT_LE(range.greatest, 0);
  EXPECT_EQ(ctx().stream().priority(), 0);
  EXPECT_EQ(ctx().create_stream().priority(), 0);
}

TEST_P(TimingTest, PrioritiesOutsideTheRangeAreClamped) {
  const anydev::StreamPriorityRange range = ctx().stream_priority_range();
  EXPECT_EQ(ctx().create_stream(range.greatest).priority(), range.greatest);
  EXPECT_EQ(ctx().create_stream(range.greatest - 100).priority(), range.greatest);
  EXPECT_EQ(ctx().create_stream(range.least + 100).priority(), range.least);
  EXPECT_EQ(ctx().create_stream(range.least).priority(), range.least);
}

TEST_P(TimingTest, HighPriorityStreamRunsWork) {
  const anydev::StreamPriorityRange range = ctx().stream_priority_range();
  const DeviceStream high = ctx().create_stream(range.greatest);
  const DeviceContext on_high = ctx().with_stream(high);
  const HostBuffer<std::uint32_t> buffer =
      on_high.enqueue_create_host_buffer<std::uint32_t>(kWords);
  buffer.enqueue_fill(0x0F0F0F0Fu);
  high.synchronize();
  EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(buffer.as_span()), 0x0F0F0F0Fu));
}

}  // namespace

ANYDEV_CONFORMANCE_SUITE(TimingTest);

}  // namespace anydev_conformance
