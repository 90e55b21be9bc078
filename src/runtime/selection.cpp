// SPDX-License-Identifier: Apache-2.0
#include "runtime/selection.h"

#include <algorithm>
#include <array>

#include "support/env_list.h"
#include "support/fork_guard.h"
#include "support/status.h"

namespace anydev::core {
namespace {

constexpr int kMaxDeviceIndex = 1 << 20;

}  // namespace

std::span<const std::string> default_backend_order() {
  // Fork-safe (fork_guard.h); never destroyed.
  static ProcessObject<const std::array<std::string, 5>> order;
  return order.get([] {
    return new std::array<std::string, 5>{"cuda", "hip", "level_zero", "opencl", "cpu"};
  });
}

BackendListParse parse_backend_list(std::string_view text, std::span<const std::string> known) {
  BackendListParse result;
  if (text.empty()) {
    result.error =
        "ANYDEV_BACKEND is set but empty: expected a comma-separated list such as "
        "\"cuda:0,cpu\"";
    return result;
  }
  result.error = check_list_entries("ANYDEV_BACKEND", text, [&](std::string_view entry) {
    const std::size_t colon = entry.find(':');
    const std::string_view name = entry.substr(0, colon);
    BackendChoice choice;
    choice.name = std::string(name);
    if (std::find(known.begin(), known.end(), choice.name) == known.end()) {
      return cat("names no known backend (", quoted(name), ")");
    }
    if (colon != std::string_view::npos) {
      const std::string_view index = entry.substr(colon + 1);
      const auto device = parse_decimal(index, 0, kMaxDeviceIndex);
      if (!device) {
        return cat("has a bad device index ", quoted(index),
                   ": expected a decimal number from 0 to ", kMaxDeviceIndex);
      }
      choice.device = static_cast<int>(*device);
      choice.device_given = true;
    }
    for (const BackendChoice& earlier : result.entries) {
      if (earlier.name == choice.name && earlier.device == choice.device) {
        return std::string("repeats an earlier entry");
      }
    }
    result.entries.push_back(std::move(choice));
    return std::string();
  });
  if (!result.ok()) result.entries.clear();
  return result;
}

}  // namespace anydev::core
