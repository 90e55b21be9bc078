// SPDX-License-Identifier: Apache-2.0
#include "cpu_config.h"

#include <string>
#include <string_view>

#include "cpu_services.h"

namespace anydev::cpu {

std::optional<bool> parse_switch(const char* value) {
  if (value == nullptr) return std::nullopt;
  const std::string_view text(value);
  if (text == "0") return false;
  if (text == "1") return true;
  return std::nullopt;
}

std::optional<unsigned> parse_thread_count(const char* value) {
  if (value == nullptr || *value == '\0') return std::nullopt;
  unsigned n = 0;
  for (const char* c = value; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return std::nullopt;
    n = n * 10 + static_cast<unsigned>(*c - '0');
    if (n > 1024) return std::nullopt;
  }
  if (n == 0) return std::nullopt;
  return n;
}

std::optional<std::size_t> parse_streaming_bytes(const char* value) {
  if (value == nullptr || *value == '\0') return std::nullopt;
  constexpr std::size_t kMost = std::size_t{1} << 62;
  std::size_t n = 0;
  for (const char* c = value; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return std::nullopt;
    const auto digit = static_cast<std::size_t>(*c - '0');
    if (n > (kMost - digit) / 10) return std::nullopt;  // past 2^62: refused, never wrapped
    n = n * 10 + digit;
  }
  if (n == 0) return std::nullopt;
  return n;
}

CpuConfig read_config() {
  // A malformed value (empty included) is refused, never replaced by the
  // default: the cpu backend is unavailable with the reason
  // (docs/environment.md, one rule for every variable).
  CpuConfig config;
  const auto refuse = [&](const char* variable, const char* value, const char* expected) {
    if (!config.error.empty()) config.error += "; ";
    config.error += std::string(variable) +
                    (*value == '\0' ? std::string(" is set but empty")
                                    : "=\"" + std::string(value) + "\" is not valid") +
                    " (expected " + expected + ")";
  };
  if (const char* value = get_env(kMlockVariable)) {
    if (const std::optional<bool> lock = parse_switch(value)) {
      config.lock_pinned_memory = *lock;
    } else {
      refuse(kMlockVariable, value, "0 or 1");
    }
  }
  if (const char* value = get_env(kThreadsVariable)) {
    if (const std::optional<unsigned> threads = parse_thread_count(value)) {
      config.split_threads = *threads;
    } else {
      refuse(kThreadsVariable, value, "a whole number from 1 to 1024");
    }
  }
  if (const char* value = get_env(kStreamingVariable)) {
    if (const std::optional<std::size_t> bytes = parse_streaming_bytes(value)) {
      config.streaming_bytes = *bytes;
    } else {
      refuse(kStreamingVariable, value, "a whole number of bytes from 1 to 4611686018427387904");
    }
  }
  return config;
}

}  // namespace anydev::cpu
