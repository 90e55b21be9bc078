// reassign_ownership_to and take_ptr / DeviceContext::free.
#include <cstdint>
#include <sstream>

#include "device_param.h"
#include "element_support.h"

namespace anydev_conformance {
namespace {

using anydev::DeviceBuffer;
using anydev::DeviceContext;
using anydev::HostBuffer;
using anydev::Status;

class OwnershipTest : public DeviceTest {};
class TakePtrTest : public DeviceTest {};

constexpr std::size_t kBusyBytes = 16u << 20;

TEST_P(OwnershipTest, ReassignedBufferRunsOnTheNewContext) {
  ForEachKind([&]<Kind K>() {
    const DeviceContext other = ctx().with_stream(ctx().create_stream());
    const Buffer<K, std::uint32_t> buffer = Create<K, std::uint32_t>(ctx(), 1 << 16);
    buffer.reassign_ownership_to(other);
    EXPECT_TRUE(SharesStream(buffer.context(), other));
    // Keep the old stream busy: work that wrongly went there would not be
    // done when `other` is synchronized.
    const DeviceBuffer<std::uint8_t> busy = ctx().enqueue_create_buffer<std::uint8_t>(kBusyBytes);
    for (int i = 0; i < 4; ++i) busy.enqueue_fill(static_cast<std::uint8_t>(i));
    buffer.enqueue_fill(0xC0FFEE00u);
    const HostBuffer<std::uint32_t> result =
        other.enqueue_create_host_buffer<std::uint32_t>(1 << 16);
    buffer.enqueue_copy_to(result);  // on result's context: other
    other.synchronize();
    EXPECT_TRUE(AllEqual(std::span<const std::uint32_t>(result.as_span()), 0xC0FFEE00u));
    ctx().synchronize();
  });
}

TEST_P(OwnershipTest, ReassignToAnotherContextOfTheSameDevice) {
  const DeviceContext same_device(GetParam().device, api());
  const DeviceBuffer<std::int64_t> buffer = DeviceWith(ctx(), Pattern<std::int64_t>(1000, 501));
  buffer.reassign_ownership_to(same_device);
  EXPECT_TRUE(SharesStream(buffer.context(), same_device));
  buffer.enqueue_fill(-42);
  EXPECT_TRUE(AllEqual(Contents(buffer), std::int64_t{-42}));
}

// After reassigning, dropping the buffer releases it on the new context,
// after the work queued there.
TEST_P(OwnershipTest, ReleaseAfterReassignIsOrderedOnTheNewContext) {
  const DeviceContext other = ctx().with_stream(ctx().create_stream());
  const Array<std::uint8_t> values = Pattern<std::uint8_t>(2u << 20, 511);
  const HostBuffer<std::uint8_t> result = other.enqueue_create_host_buffer<std::uint8_t>(2u << 20);
  {
    const DeviceBuffer<std::uint8_t> device = DeviceWith(ctx(), values);
    device.reassign_ownership_to(other);
    device.enqueue_copy_to(result);
  }
  for (int i = 0; i < 4; ++i) {
    const DeviceBuffer<std::uint8_t> scratch = other.enqueue_create_buffer<std::uint8_t>(2u << 20);
    scratch.enqueue_fill(std::uint8_t{0xEE});
  }
  other.synchronize();
  EXPECT_TRUE(BytesEqual(std::span<const std::uint8_t>(result.as_span()), values.cspan()));
}

TEST_P(OwnershipTest, ReassignToAnotherBackendOrDeviceIsInvalidArgument) {
  std::optional<DeviceContext> foreign = OtherBackendContext(api());
  if (!foreign && DeviceContext::number_of_devices(api()) > 1) {
    foreign.emplace((GetParam().device + 1) % DeviceContext::number_of_devices(api()), api());
  }
  if (!foreign) {
    GTEST_SKIP() << "only one backend and device is available (" << GetParam()
                 << "): no foreign context to reassign to";
  }
  SCOPED_TRACE("foreign context: " + foreign->api() + ":" + std::to_string(foreign->id()));
  ForEachKind([&]<Kind K>() {
    const Array<std::int32_t> values = Pattern<std::int32_t>(64, 521);
    const Buffer<K, std::int32_t> buffer = CreateWith<K>(ctx(), values);
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { buffer.reassign_ownership_to(*foreign); }));
    EXPECT_TRUE(SharesStream(buffer.context(), ctx())) << "a failed reassign changed the owner";
    EXPECT_TRUE(BytesEqual(Contents(buffer), values));
  });
}

TEST_P(TakePtrTest, HostBufferHandsOverItsMemory) {
  ForEachElementType([&]<class T>() {
    const Array<T> values = Pattern<T>(1000, 601);
    HostBuffer<T> buffer = HostWith(ctx(), values);
    T* const address = buffer.unsafe_ptr();
    T* const taken = std::move(buffer).take_ptr();
    EXPECT_EQ(taken, address);
    EXPECT_EQ(buffer.unsafe_ptr(),
              nullptr);  // NOLINT(bugprone-use-after-move): take_ptr empties it
    EXPECT_EQ(buffer.size(), 0u);
    EXPECT_TRUE(BytesEqual(std::span<const T>(taken, values.size()), values.cspan()))
        << "the memory changed hands without its contents";
    ctx().free(taken);
    ctx().synchronize();
  });
}

TEST_P(TakePtrTest, DeviceBufferHandsOverItsMemory) {
  ForEachElementType([&]<class T>() {
    DeviceBuffer<T> buffer = DeviceWith(ctx(), Pattern<T>(1000, 611));
    T* const address = buffer.unsafe_ptr();
    T* const taken = std::move(buffer).take_ptr();
    EXPECT_EQ(taken, address);
    EXPECT_EQ(buffer.unsafe_ptr(), nullptr);  // NOLINT(bugprone-use-after-move)
    ctx().free(taken);
    ctx().synchronize();
  });
}

TEST_P(TakePtrTest, EveryOperationOnATakenBufferIsInvalidState) {
  ForEachKind([&]<Kind K>() {
    Buffer<K, float> buffer = Create<K, float>(ctx(), 16);
    const Buffer<K, float> other = Create<K, float>(ctx(), 16);
    float* const taken = std::move(buffer).take_ptr();
    ASSERT_NE(taken, nullptr);
    const Buffer<K, float>& b = buffer;  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(b.unsafe_ptr(), nullptr);
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { b.enqueue_fill(1.0f); }));
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { b.enqueue_copy_to(other); }));
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { b.enqueue_copy_from(other); }));
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { other.enqueue_copy_to(b); }));
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { ctx().enqueue_copy(other, b); }));
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { ctx().enqueue_memset(b, 2.0f); }));
    EXPECT_TRUE(
        Fails(Status::invalid_state, [&] { (void)b.template create_sub_buffer<float>(0, 0); }));
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)b.context(); }));
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { b.reassign_ownership_to(ctx()); }));
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)std::move(buffer).take_ptr(); }));
    EXPECT_TRUE(Fails(Status::invalid_state, [&] {
      std::ostringstream text;
      text << b;
    }));
    Array<float> host(16);
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { b.enqueue_copy_to(host.span()); }));
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { b.enqueue_copy_from(host.cspan()); }));
    if constexpr (K == Kind::host) {
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)b.at(0); }));
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)b.as_span(); }));
    } else {
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)b.map_to_host(); }));
    }
    ctx().free(taken);
    ctx().synchronize();
  });
}

// Element access of a taken buffer names take_ptr (not "index 0 is out of
// range for a buffer of 0 elements").
TEST_P(TakePtrTest, ElementAccessOfATakenBufferNamesTakePtr) {
  ForEachKind([&]<Kind K>() {
    Buffer<K, float> buffer = Create<K, float>(ctx(), 16);
    float* const taken = std::move(buffer).take_ptr();
    const Buffer<K, float>& b = buffer;  // NOLINT(bugprone-use-after-move)
    if constexpr (K == Kind::host) {
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)b.at(0); }, {"at", "take_ptr"}));
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)b.at(20); }, {"at", "take_ptr"}));
      EXPECT_TRUE(
          Fails(Status::invalid_state, [&] { (void)b.as_span(); }, {"as_span", "take_ptr"}));
    } else {
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)b.map_to_host(); }, {"take_ptr"}));
    }
    EXPECT_TRUE(Fails(Status::invalid_state, [&] { b.enqueue_fill(1.0f); }, {"take_ptr"}));
    ctx().free(taken);
    ctx().synchronize();
  });
}

TEST_P(TakePtrTest, AnotherHandleMakesItInvalidState) {
  ForEachKind([&]<Kind K>() {
    const Array<std::uint16_t> values = Pattern<std::uint16_t>(64, 621);
    Buffer<K, std::uint16_t> buffer = CreateWith<K>(ctx(), values);
    {
      const Buffer<K, std::uint16_t> copy =
          buffer;  // NOLINT(performance-unnecessary-copy-initialization)
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)std::move(buffer).take_ptr(); }));
      // The failed take changed nothing: both handles still work.
      EXPECT_NE(buffer.unsafe_ptr(), nullptr);
      EXPECT_TRUE(BytesEqual(Contents(buffer), values));
      EXPECT_TRUE(BytesEqual(Contents(copy), values));
    }
    std::uint16_t* const taken = std::move(buffer).take_ptr();
    EXPECT_NE(taken, nullptr);
    ctx().free(taken);
    ctx().synchronize();
  });
}

TEST_P(TakePtrTest, ALiveViewMakesItInvalidState) {
  ForEachKind([&]<Kind K>() {
    const Array<std::uint8_t> values = Pattern<std::uint8_t>(64, 631);
    Buffer<K, std::uint8_t> buffer = CreateWith<K>(ctx(), values);
    {
      const Buffer<K, std::uint32_t> view = buffer.template create_sub_buffer<std::uint32_t>(1, 4);
      EXPECT_TRUE(Fails(Status::invalid_state, [&] { (void)std::move(buffer).take_ptr(); }));
      EXPECT_TRUE(BytesEqual(Contents(buffer), values));
      EXPECT_EQ(view.size(), 4u);
    }
    std::uint8_t* const taken = std::move(buffer).take_ptr();
    EXPECT_NE(taken, nullptr);
    ctx().free(taken);
    ctx().synchronize();
  });
}

TEST_P(TakePtrTest, FreeOfAnUnknownPointerIsInvalidArgument) {
  int local = 0;
  EXPECT_TRUE(Fails(Status::invalid_argument, [&] { ctx().free(&local); }));
  EXPECT_TRUE(Fails(Status::invalid_argument, [&] { ctx().free(static_cast<int*>(nullptr)); }));
  // A pointer still owned by a live buffer is not the caller's to free.
  const HostBuffer<int> owned = ctx().enqueue_create_host_buffer<int>(16);
  EXPECT_TRUE(Fails(Status::invalid_argument, [&] { ctx().free(owned.unsafe_ptr()); }));
  owned.enqueue_fill(3);
  EXPECT_TRUE(AllEqual(Contents(owned), 3));
  // Freeing twice: the second time the pointer is unknown.
  HostBuffer<int> buffer = ctx().enqueue_create_host_buffer<int>(16);
  int* const taken = std::move(buffer).take_ptr();
  ctx().free(taken);
  EXPECT_TRUE(Fails(Status::invalid_argument, [&] { ctx().free(taken); }));
  ctx().synchronize();
}

// free() is stream ordered: work already enqueued that reads the memory
// still sees it.
TEST_P(TakePtrTest, FreeIsOrderedAfterQueuedWork) {
  const Array<std::uint8_t> values = Pattern<std::uint8_t>(2u << 20, 641);
  HostBuffer<std::uint8_t> source = HostWith(ctx(), values);
  std::uint8_t* const taken = std::move(source).take_ptr();
  const DeviceBuffer<std::uint8_t> device =
      ctx().enqueue_create_buffer<std::uint8_t>(values.size());
  const HostBuffer<std::uint8_t> result =
      ctx().enqueue_create_host_buffer<std::uint8_t>(values.size());
  ctx().enqueue_copy(device, static_cast<const std::uint8_t*>(taken));
  ctx().free(taken);
  for (int i = 0; i < 4; ++i) {
    const HostBuffer<std::uint8_t> scratch =
        ctx().enqueue_create_host_buffer<std::uint8_t>(values.size());
    scratch.enqueue_fill(std::uint8_t{0xEE});
  }
  device.enqueue_copy_to(result);
  ctx().synchronize();
  EXPECT_TRUE(BytesEqual(std::span<const std::uint8_t>(result.as_span()), values.cspan()));
}

ANYDEV_CONFORMANCE_SUITE(OwnershipTest);
ANYDEV_CONFORMANCE_SUITE(TakePtrTest);

}  // namespace
}  // namespace anydev_conformance
