// SPDX-License-Identifier: Apache-2.0
// Caller-struct checks of the backend kit (include/anydev/kit/structs.h): a
// field is touched only when the caller's struct_size holds all of it. And
// the kit's one check of the fill pattern sizes (kit_capabilities.h).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "anydev/backend.h"
#include "anydev/kit/capabilities.h"
#include "anydev/kit/structs.h"

namespace {

struct caller_struct {
  std::size_t struct_size;
  std::uint32_t a;
  std::uint64_t b;
  char text[8];
};

TEST(KitStructs, HasFieldIsTrueOnlyWhenTheWholeFieldFits) {
  caller_struct s{};
  s.struct_size = sizeof(s);
  EXPECT_TRUE(anydev::kit::has_field(&s, &caller_struct::a));
  EXPECT_TRUE(anydev::kit::has_field(&s, &caller_struct::text));
  s.struct_size = offsetof(caller_struct, b) + sizeof(s.b) - 1;
  EXPECT_TRUE(anydev::kit::has_field(&s, &caller_struct::a));
  EXPECT_FALSE(anydev::kit::has_field(&s, &caller_struct::b));
  EXPECT_FALSE(anydev::kit::has_field(&s, &caller_struct::text));
  s.struct_size = 0;
  EXPECT_FALSE(anydev::kit::has_field(&s, &caller_struct::a));
}

TEST(KitStructs, NullStructHasNoField) {
  const caller_struct* none = nullptr;
  EXPECT_FALSE(anydev::kit::has_field(none, &caller_struct::a));
  EXPECT_EQ(anydev::kit::field_or(none, &caller_struct::a, 7u), 7u);
}

TEST(KitStructs, FieldOrReadsOnlyAFieldThatFits) {
  anydev_core_services_t core{};
  core.struct_size = offsetof(anydev_core_services_t, set_error);  // an older, shorter table
  core.set_error = [](anydev_status_t status, const char*) { return status; };
  EXPECT_EQ(anydev::kit::field_or(&core, &anydev_core_services_t::set_error, {}), nullptr);
  core.struct_size = sizeof(core);
  EXPECT_NE(anydev::kit::field_or(&core, &anydev_core_services_t::set_error, {}), nullptr);
}

TEST(KitStructs, CopyTextCutsToFitAndTerminates) {
  char field[6];
  anydev::kit::copy_text(field, "abcdefgh");
  EXPECT_STREQ(field, "abcde");
  anydev::kit::copy_text(field, "ab");
  EXPECT_STREQ(field, "ab");
}

// The core (public call, max_fill_pattern) and every backend's fill use this
// one check.
TEST(KitCapabilities, FillPatternSizesAreOneTwoFourEightOrSixteen) {
  for (std::size_t bytes = 0; bytes <= 64; ++bytes) {
    const bool allowed = bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16;
    EXPECT_EQ(anydev::kit::valid_fill_pattern_size(bytes), allowed) << bytes;
  }
  EXPECT_FALSE(anydev::kit::valid_fill_pattern_size(SIZE_MAX));
  static_assert(anydev::kit::valid_fill_pattern_size(16));
  EXPECT_STREQ(anydev::kit::kFillPatternSizes, "1, 2, 4, 8 or 16");
}

}  // namespace
