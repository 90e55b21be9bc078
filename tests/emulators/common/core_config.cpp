// SPDX-License-Identifier: Apache-2.0
#include "core_config.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace anydev_emu::core {
namespace {

std::string variable(const char* suffix) { return std::string(kIdentity.env_prefix) + suffix; }

Config load() {
  Config c;
  c.devices = static_cast<int>(read_setting("DEVICES", 1, 0, 16));
  c.delay_us = static_cast<unsigned>(read_setting("DELAY_US", 0, 0, 1000000));
  c.memory_pools = read_setting("MEMORY_POOLS", 1, 0, 1) != 0;
  c.memory_bytes = static_cast<std::size_t>(read_setting("MEMORY_MB", 4096, 1, 1 << 20)) << 20;
  c.quiet = read_setting("QUIET", 0, 0, 1) != 0;
  c.huge_is_invalid = read_setting("HUGE_IS_INVALID", 0, 0, 1) != 0;
  return c;
}

}  // namespace

long long read_setting(const char* suffix, long long fallback, long long min, long long max) {
  const std::string name = variable(suffix);
  const char* text = std::getenv(name.c_str());
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < min || value > max) {
    std::fprintf(stderr, "%s: ignoring %s=\"%s\" (want %lld..%lld)\n", kIdentity.report_prefix,
                 name.c_str(), text, min, max);
    return fallback;
  }
  return value;
}

std::vector<std::string> read_setting_list(const char* suffix) {
  std::vector<std::string> names;
  if (const char* text = std::getenv(variable(suffix).c_str())) {
    std::stringstream list(text);
    for (std::string item; std::getline(list, item, ',');) {
      if (!item.empty()) names.push_back(item);
    }
  }
  return names;
}

const Config& get_config() {
  static const Config config = load();
  return config;
}

void report_misuse(const std::string& message) {
  if (!get_config().quiet) {
    std::fprintf(stderr, "%s: %s\n", kIdentity.report_prefix, message.c_str());
  }
}

Status misuse(Status status, const std::string& message) {
  report_misuse(message);
  return status;
}

const char* status_text(Status status) {
  switch (status) {
    case Status::success:
      return "success";
    case Status::invalid_value:
      return "invalid value";
    case Status::invalid_handle:
      return "invalid handle";
    case Status::invalid_device:
      return "invalid device";
    case Status::invalid_context:
      return "invalid context";
    case Status::out_of_memory:
      return "out of memory";
    case Status::not_initialized:
      return "not initialized";
    case Status::no_device:
      return "no device";
    case Status::not_ready:
      return "not ready";
    case Status::illegal_address:
      return "illegal address";
    case Status::not_supported:
      return "not supported";
    case Status::peer_already_enabled:
      return "peer access already enabled";
  }
  return "unknown status";
}

}  // namespace anydev_emu::core
