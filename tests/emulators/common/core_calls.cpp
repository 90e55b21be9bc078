// SPDX-License-Identifier: Apache-2.0
#include "core_calls.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace anydev_emu::core {

void reset_calls(std::span<const CallCounter> table) {
  for (const CallCounter& c : table) c.calls->store(0, std::memory_order_relaxed);
}

std::uint64_t call_count(std::span<const CallCounter> table, const char* name) {
  if (name == nullptr) return 0;
  for (const CallCounter& c : table) {
    if (std::strcmp(c.name, name) == 0) return c.calls->load(std::memory_order_relaxed);
  }
  return 0;
}

std::uint64_t describe_calls(std::span<const CallCounter> table, char* text, std::size_t capacity) {
  std::string all;
  std::uint64_t total = 0;
  for (const CallCounter& c : table) {
    const std::uint64_t n = c.calls->load(std::memory_order_relaxed);
    if (n == 0) continue;
    total += n;
    if (!all.empty()) all += ' ';
    all += std::string(c.name) + "=" + std::to_string(n);
  }
  if (text != nullptr && capacity > 0) {
    const std::size_t n = std::min(all.size(), capacity - 1);
    std::memcpy(text, all.data(), n);
    text[n] = '\0';
  }
  return total;
}

}  // namespace anydev_emu::core
