// SPDX-License-Identifier: Apache-2.0
// The pool settings' parsers: ANYDEV_POOL and ANYDEV_POOL_RELEASE_THRESHOLD
// (pool_registry.h reads them; environment.cpp checks them at startup).
// Pure functions of their argument: thread-safe. Depends on nothing else in
// the core, so the environment check needs no pool.
#ifndef ANYDEV_SRC_SUPPORT_POOL_SETTINGS_H_
#define ANYDEV_SRC_SUPPORT_POOL_SETTINGS_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace anydev::core {

// ANYDEV_POOL parsed: true for "1", false for "0", nullopt for anything else
// (refused: every backend is unavailable, see environment.h).
std::optional<bool> parse_pool_setting(std::string_view value) noexcept;

inline constexpr const char* kEnvPoolReleaseThreshold = "ANYDEV_POOL_RELEASE_THRESHOLD";
// The default release threshold: 16 MiB, low enough that the scale bench's
// random mix (1 B - 64 MiB, at most 32 alive) keeps reserved / live under
// 1.5 at the cost of a few cache hits (docs/performance.md;
// unit.PoolTest.DefaultThresholdKeepsTheScaleMixMedianRatioAtMostOneAndAHalf).
// A loop that releases and re-creates one buffer of any size still hits:
// the block released last is always kept.
inline constexpr std::size_t kPoolDefaultReleaseThreshold = std::size_t{16} << 20;

// ANYDEV_POOL_RELEASE_THRESHOLD parsed: decimal digits only, within size_t;
// nullopt for anything else (the caller logs an error naming the value and
// keeps the default).
std::optional<std::size_t> parse_release_threshold(std::string_view value) noexcept;

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_POOL_SETTINGS_H_
