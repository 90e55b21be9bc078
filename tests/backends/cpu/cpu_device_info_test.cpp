// SPDX-License-Identifier: Apache-2.0
// The cpu backend's parsing of what the OS reports about the processor:
// sysfs cache sizes.
#include "cpu_device_info.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

namespace anydev::cpu {
namespace {

TEST(CpuDeviceInfo, CacheSizesInSysfsUnits) {
  EXPECT_EQ(parse_cache_size("32768K\n"), std::optional<std::size_t>(std::size_t{32} << 20));
  EXPECT_EQ(parse_cache_size("1M"), std::optional<std::size_t>(std::size_t{1} << 20));
  EXPECT_EQ(parse_cache_size("2G"), std::optional<std::size_t>(std::size_t{2} << 30));
  EXPECT_EQ(parse_cache_size("512"), std::optional<std::size_t>(512));
}

TEST(CpuDeviceInfo, CacheSizeThatIsNotOneIsRefused) {
  EXPECT_EQ(parse_cache_size(""), std::nullopt);
  EXPECT_EQ(parse_cache_size("K"), std::nullopt);
  EXPECT_EQ(parse_cache_size("32 KB"), std::nullopt);
  EXPECT_EQ(parse_cache_size("-1K"), std::nullopt);
  EXPECT_EQ(parse_cache_size("12T"), std::nullopt);
}

TEST(CpuDeviceInfo, HugeCacheSizeSaturates) {
  EXPECT_EQ(parse_cache_size("18446744073709551615G"), std::optional<std::size_t>(SIZE_MAX));
}

TEST(CpuDeviceInfo, LastLevelCacheIsReadOnThisMachine) {
  // Every Linux machine CI runs on reports at least one data cache through
  // sysfs or sysconf; 0 would mean both readings were lost.
  EXPECT_GT(read_last_level_cache_bytes(), 0u);
}

}  // namespace
}  // namespace anydev::cpu
