// SPDX-License-Identifier: Apache-2.0
// Overflow-checked size arithmetic (src/support/range_check.h): products and sums at
// the edge of size_t, views inside, at and past the end of their parent,
// misaligned views, and copies from a short side.
#include "support/range_check.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace anydev::core {
namespace {

constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();

::testing::AssertionResult Mentions(const std::string& message,
                                    std::initializer_list<std::string> parts) {
  for (const std::string& part : parts) {
    if (message.find(part) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "message \"" << message << "\" does not mention \"" << part << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(CheckedArithmetic, Mul) {
  EXPECT_EQ(checked_mul(0, kMax), 0u);
  EXPECT_EQ(checked_mul(kMax, 1), kMax);
  EXPECT_EQ(checked_mul(kMax / 2, 2), kMax - 1);
  EXPECT_EQ(checked_mul(std::size_t{1} << 32, std::size_t{1} << 31), std::size_t{1} << 63);
  EXPECT_FALSE(checked_mul(kMax, 2).has_value());
  EXPECT_FALSE(checked_mul(std::size_t{1} << 32, std::size_t{1} << 32).has_value());
  EXPECT_FALSE(checked_mul(kMax / 4 + 1, 4).has_value());  // wraps to exactly 0
}

TEST(CheckedArithmetic, Add) {
  EXPECT_EQ(checked_add(kMax - 1, 1), kMax);
  EXPECT_EQ(checked_add(0, 0), 0u);
  EXPECT_FALSE(checked_add(kMax, 1).has_value());
  EXPECT_FALSE(checked_add(kMax / 2 + 1, kMax / 2 + 1).has_value());
}

TEST(CheckByteCount, FitsAndOverflows) {
  std::size_t bytes = 12345;
  EXPECT_FALSE(check_byte_count("create", 1000, 8, &bytes).has_value());
  EXPECT_EQ(bytes, 8000u);
  EXPECT_FALSE(check_byte_count("create", 0, 16, &bytes).has_value());
  EXPECT_EQ(bytes, 0u);

  bytes = 12345;
  const auto error = check_byte_count("anydev_buffer_create", kMax / 4 + 1, 4, &bytes);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->status, ANYDEV_ERROR_OUT_OF_RANGE);
  EXPECT_TRUE(Mentions(error->message, {"anydev_buffer_create", std::to_string(kMax / 4 + 1)}));
  EXPECT_EQ(bytes, 12345u) << "a failed check must not write its output";
}

// Parent: 64 bytes at the start of its allocation unless a case says otherwise.
TEST(CheckSubBuffer, Inside) {
  std::size_t offset_bytes = 999;
  EXPECT_FALSE(check_sub_buffer("view", 64, 0, 2, 4, 4, 4, &offset_bytes).has_value());
  EXPECT_EQ(offset_bytes, 8u);
}

TEST(CheckSubBuffer, OffsetCountsInTheViewsElementsAndAddsTheParentsOffset) {
  std::size_t offset_bytes = 999;
  EXPECT_FALSE(check_sub_buffer("view", 48, 16, 3, 2, 8, 8, &offset_bytes).has_value());
  EXPECT_EQ(offset_bytes, 16u + 3u * 8u);
}

TEST(CheckSubBuffer, EndingExactlyAtTheEnd) {
  std::size_t offset_bytes = 999;
  EXPECT_FALSE(check_sub_buffer("view", 64, 0, 8, 8, 4, 4, &offset_bytes).has_value());
  EXPECT_EQ(offset_bytes, 32u);
  EXPECT_FALSE(check_sub_buffer("view", 64, 0, 0, 16, 4, 4, &offset_bytes).has_value());
  EXPECT_EQ(offset_bytes, 0u);
}

TEST(CheckSubBuffer, ZeroSizeAtTheEnd) {
  std::size_t offset_bytes = 999;
  EXPECT_FALSE(check_sub_buffer("view", 64, 0, 16, 0, 4, 4, &offset_bytes).has_value());
  EXPECT_EQ(offset_bytes, 64u);
}

TEST(CheckSubBuffer, ZeroSizePastTheEnd) {
  std::size_t offset_bytes = 999;
  const auto error = check_sub_buffer("view", 64, 0, 17, 0, 4, 4, &offset_bytes);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->status, ANYDEV_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(offset_bytes, 999u);
}

TEST(CheckSubBuffer, OneElementTooMany) {
  std::size_t offset_bytes = 999;
  const auto error = check_sub_buffer("create_sub_buffer", 64, 0, 8, 9, 4, 4, &offset_bytes);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->status, ANYDEV_ERROR_OUT_OF_RANGE);
  EXPECT_TRUE(Mentions(error->message, {"create_sub_buffer", "8", "9", "64"}));
  EXPECT_EQ(offset_bytes, 999u);
}

TEST(CheckSubBuffer, MisalignedStart) {
  // A float view at byte 2 of the allocation (the parent starts at byte 2).
  std::size_t offset_bytes = 999;
  const auto error = check_sub_buffer("create_sub_buffer", 62, 2, 0, 4, 4, 4, &offset_bytes);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->status, ANYDEV_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Mentions(error->message, {"create_sub_buffer", "2", "4"}));
  EXPECT_EQ(offset_bytes, 999u);
  // The same view one float later in a parent at byte 4 is fine.
  EXPECT_FALSE(check_sub_buffer("create_sub_buffer", 60, 4, 1, 4, 4, 4, &offset_bytes).has_value());
  EXPECT_EQ(offset_bytes, 8u);
}

TEST(CheckSubBuffer, OffsetTimesSizeOverflows) {
  // offset * 4 wraps to exactly 0: a wrapping check would accept it.
  std::size_t offset_bytes = 999;
  const auto error = check_sub_buffer("view", 64, 0, kMax / 4 + 1, 1, 4, 4, &offset_bytes);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->status, ANYDEV_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(offset_bytes, 999u);
}

TEST(CheckSubBuffer, CountTimesSizeOverflows) {
  std::size_t offset_bytes = 999;
  const auto error = check_sub_buffer("view", 64, 0, 0, kMax / 8 + 1, 8, 8, &offset_bytes);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->status, ANYDEV_ERROR_OUT_OF_RANGE);
}

TEST(CheckSubBuffer, OffsetPlusCountOverflows) {
  // 2 + kMax wraps to 1 byte: a wrapping check would accept it.
  std::size_t offset_bytes = 999;
  const auto error = check_sub_buffer("view", 64, 0, 2, kMax, 1, 1, &offset_bytes);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->status, ANYDEV_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(offset_bytes, 999u);
}

TEST(CheckCopySize, ShortSideIsOutOfRange) {
  const auto error = check_copy_size("enqueue_copy", "source", 100, 99);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->status, ANYDEV_ERROR_OUT_OF_RANGE);
  EXPECT_TRUE(Mentions(error->message, {"enqueue_copy", "source", "100", "99"}));
}

TEST(CheckCopySize, EqualOrLargerSideIsFine) {
  EXPECT_FALSE(check_copy_size("enqueue_copy", "source", 100, 100).has_value());
  EXPECT_FALSE(check_copy_size("enqueue_copy", "span", 100, kMax).has_value());
  EXPECT_FALSE(check_copy_size("enqueue_copy", "span", 0, 0).has_value());
}

}  // namespace
}  // namespace anydev::core
