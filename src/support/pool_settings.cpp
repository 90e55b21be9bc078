// SPDX-License-Identifier: Apache-2.0
#include "support/pool_settings.h"

#include <charconv>
#include <system_error>

namespace anydev::core {

std::optional<bool> parse_pool_setting(std::string_view value) noexcept {
  if (value == "1") return true;
  if (value == "0") return false;
  return std::nullopt;
}

std::optional<std::size_t> parse_release_threshold(std::string_view value) noexcept {
  if (value.empty() || value.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  std::size_t bytes = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), bytes);
  if (error != std::errc() || end != value.data() + value.size()) return std::nullopt;
  return bytes;
}

}  // namespace anydev::core
