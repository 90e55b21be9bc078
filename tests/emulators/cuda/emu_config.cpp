// SPDX-License-Identifier: Apache-2.0
#include "emu_config.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace anydev_emu {
namespace {

long long read_number(const char* name, long long fallback, long long min, long long max) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < min || value > max) {
    std::fprintf(stderr, "anydev-cuda-emulator: ignoring %s=\"%s\" (want %lld..%lld)\n", name, text,
                 min, max);
    return fallback;
  }
  return value;
}

std::vector<std::string> read_list(const char* name) {
  std::vector<std::string> names;
  if (const char* text = std::getenv(name)) {
    std::stringstream list(text);
    for (std::string item; std::getline(list, item, ',');) {
      if (!item.empty()) names.push_back(item);
    }
  }
  return names;
}

Config load() {
  Config c;
  c.devices = static_cast<int>(read_number("ANYDEV_CUDA_EMULATOR_DEVICES", 1, 0, 16));
  c.delay_us = static_cast<unsigned>(read_number("ANYDEV_CUDA_EMULATOR_DELAY_US", 0, 0, 1000000));
  c.memory_pools = read_number("ANYDEV_CUDA_EMULATOR_MEMORY_POOLS", 1, 0, 1) != 0;
  c.memory_bytes =
      static_cast<std::size_t>(read_number("ANYDEV_CUDA_EMULATOR_MEMORY_MB", 4096, 1, 1 << 20))
      << 20;
  c.quiet = read_number("ANYDEV_CUDA_EMULATOR_QUIET", 0, 0, 1) != 0;
  c.huge_is_invalid = read_number("ANYDEV_CUDA_EMULATOR_HUGE_IS_INVALID", 0, 0, 1) != 0;
  c.stream_context = static_cast<int>(read_number("ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT", 0, 0, 2));
  c.hidden_symbols = read_list("ANYDEV_CUDA_EMULATOR_HIDE_SYMBOLS");
  c.null_symbols = read_list("ANYDEV_CUDA_EMULATOR_NULL_SYMBOLS");
  return c;
}

}  // namespace

const Config& get_config() {
  static const Config config = load();
  return config;
}

void report_misuse(const std::string& message) {
  if (!get_config().quiet) std::fprintf(stderr, "anydev-cuda-emulator: %s\n", message.c_str());
}

}  // namespace anydev_emu
