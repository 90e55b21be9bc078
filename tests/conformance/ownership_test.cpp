// SPDX-License-Identifier: Apache-2.0
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

// Ownership records are per allocation (src/api/taken_memory.h): take_ptr of a
// view, even an empty one whose address is where another allocation starts,
// is refused and changes nothing; only a whole buffer changes hands.
TEST_P(TakePtrTest, TakePtrOfAViewIsRefusedAndChangesNothing) {
  ForEachKind([&]<Kind K>() {
    const Array<std::uint8_t> values = Pattern<std::uint8_t>(64, 651);
    struct Range {
      std::size_t offset;
      std::size_t count;
    };
    for (const Range range :
         {Range{64, 0}, Range{0, 0}, Range{8, 16}, Range{1, 63}, Range{0, 63}}) {
      SCOPED_TRACE(testing::Message() << "view at " << range.offset << ", " << range.count);
      // The view is the only handle left to the memory.
      Buffer<K, std::uint8_t> view = [&] {
        const Buffer<K, std::uint8_t> parent = CreateWith<K>(ctx(), values);
        return parent.template create_sub_buffer<std::uint8_t>(range.offset, range.count);
      }();
      EXPECT_TRUE(Fails(Status::invalid_argument, [&] { (void)std::move(view).take_ptr(); },
                        {"view", "whole allocation"}));
      // NOLINTNEXTLINE(bugprone-use-after-move): the refused take left it intact
      EXPECT_EQ(view.size(), range.count);
      EXPECT_TRUE(
          BytesEqual(Contents(view).cspan(), values.cspan().subspan(range.offset, range.count)));
    }
  });
}

// The collision the per-address table allowed: A is taken, then an empty
// view at the end of B (whose address may be A's) must not replace A's
// record; A's address still frees A, once.
TEST_P(TakePtrTest, AnEmptyViewAtTheEndOfAnotherBufferNeverReplacesARecord) {
  ForEachKind([&]<Kind K>() {
    Buffer<K, std::uint32_t> a = Create<K, std::uint32_t>(ctx(), 256);
    Buffer<K, std::uint32_t> end_of_b = [&] {
      const Buffer<K, std::uint32_t> b = Create<K, std::uint32_t>(ctx(), 256);
      return b.template create_sub_buffer<std::uint32_t>(256, 0);
    }();
    std::uint32_t* const pa = std::move(a).take_ptr();
    ASSERT_NE(pa, nullptr);
    EXPECT_TRUE(
        Fails(Status::invalid_argument, [&] { (void)std::move(end_of_b).take_ptr(); }, {"view"}));
    // B is still B's: a fresh buffer cannot be handed A's memory.
    const Buffer<K, std::uint32_t> fresh = Create<K, std::uint32_t>(ctx(), 256);
    EXPECT_NE(fresh.unsafe_ptr(), pa);
    ctx().free(pa);
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { ctx().free(pa); }));
    ctx().synchronize();
  });
}

// free() of an address inside a taken allocation names the allocation and
// changes nothing: the start address still frees it.
TEST_P(TakePtrTest, FreeOfAnAddressInsideATakenAllocationIsRefused) {
  ForEachKind([&]<Kind K>() {
    Buffer<K, std::uint32_t> buffer = Create<K, std::uint32_t>(ctx(), 64);
    std::uint32_t* const taken = std::move(buffer).take_ptr();
    ASSERT_NE(taken, nullptr);
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { ctx().free(taken + 1); },
                      {"4 bytes inside", "256-byte allocation"}));
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { ctx().free(taken + 64); }));
    ctx().free(taken);
    ctx().synchronize();
  });
}

// An empty buffer owns no memory: take_ptr hands over NULL, records
// nothing, and free(NULL) is refused.
TEST_P(TakePtrTest, AnEmptyBufferHandsOverNull) {
  ForEachKind([&]<Kind K>() {
    Buffer<K, float> first = Create<K, float>(ctx(), 0);
    Buffer<K, float> second = Create<K, float>(ctx(), 0);
    EXPECT_EQ(std::move(first).take_ptr(), nullptr);
    EXPECT_EQ(std::move(second).take_ptr(), nullptr);
    EXPECT_TRUE(Fails(Status::invalid_argument, [&] { ctx().free(static_cast<float*>(nullptr)); }));
  });
}

ANYDEV_CONFORMANCE_SUITE(OwnershipTest);
ANYDEV_CONFORMANCE_SUITE(TakePtrTest);

}  // namespace
}  // namespace anydev_conformance
