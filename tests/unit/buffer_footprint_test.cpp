// SPDX-License-Identifier: Apache-2.0
// Host memory per live buffer handle (goal: <= 256 bytes): the heap
// bytes that creating buffers adds, counted by glibc's allocator
// (mallinfo2: chunk sizes with their headers), and the record slab's bytes
// in use (anydev_record_memory), per buffer. Deterministic: a
// count of bytes, not a time. What it guards: the handle (objects.h), its
// Allocation record with the release strategy and the shared_ptr control
// block in one chunk (allocation.h), and no pool node while the block is in
// use (pool/caching_pool.h).
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstddef>
#include <vector>

#include "anydev/anydev.h"

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerAllocator = true;
#else
constexpr bool kSanitizerAllocator = false;
#endif

// The heap's bytes in use plus the records anydev keeps in its record slab
// (memory/record_slab.h) instead of the heap.
std::size_t heap_bytes() {
  const struct mallinfo2 info = mallinfo2();
  anydev_record_memory_t records{};
  records.struct_size = sizeof(records);
  EXPECT_EQ(anydev_record_memory(&records), ANYDEV_SUCCESS);
  return info.uordblks + info.hblkhd + records.bytes_in_use;
}

// Buffers of fresh pool blocks (cache misses, as a program that grows to
// many live buffers makes them): the pool's bookkeeping is counted too.
TEST(BufferFootprint, HeapBytesPerLiveBufferAtMost256) {
  if (kSanitizerAllocator) {
    GTEST_SKIP() << "the sanitizer's allocator replaces glibc's: mallinfo2 does not count it";
  }
  anydev_context_t ctx = nullptr;
  ASSERT_EQ(anydev_context_create("cpu", 0, &ctx), ANYDEV_SUCCESS);
  // One buffer first: the context's one-time records (size class, events).
  anydev_buffer_t warm = nullptr;
  ASSERT_EQ(anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 64, &warm),
            ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_buffer_release(warm), ANYDEV_SUCCESS);
  ASSERT_EQ(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);

  constexpr std::size_t kBuffers = 8192;
  std::vector<anydev_buffer_t> buffers(kBuffers, nullptr);
  const std::size_t before = heap_bytes();
  for (anydev_buffer_t& b : buffers) {
    ASSERT_EQ(anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 64, &b),
              ANYDEV_SUCCESS);
  }
  ASSERT_EQ(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  const std::size_t after = heap_bytes();
  const double per_buffer =
      (static_cast<double>(after) - static_cast<double>(before)) / static_cast<double>(kBuffers);
  for (anydev_buffer_t b : buffers) EXPECT_EQ(anydev_buffer_release(b), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  EXPECT_EQ(anydev_context_release(ctx), ANYDEV_SUCCESS);
  EXPECT_LE(per_buffer, 256.0) << "heap bytes per live buffer handle: see docs/reliability.md";
  // The handle alone is 88 bytes: less means records escaped the count.
  EXPECT_GE(per_buffer, 88.0) << "records not counted (anydev_record_memory)";
}

}  // namespace
