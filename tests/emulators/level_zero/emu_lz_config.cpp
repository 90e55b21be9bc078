// SPDX-License-Identifier: Apache-2.0
// The emulator's settings, misuse reporting and call counts.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "emu_lz.h"

namespace anydev_lz_emu {
namespace {

unsigned long read_number(const char* name, unsigned long fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') return fallback;
  char* end = nullptr;
  const unsigned long n = std::strtoul(value, &end, 10);
  if (*end != '\0') {
    std::fprintf(stderr, "anydev-level-zero-emulator: %s=\"%s\" is not a number\n", name, value);
    return fallback;
  }
  return n;
}

std::atomic<unsigned long long> g_misuse{0};

struct Counts {
  std::mutex mutex;
  std::map<std::string, unsigned long long> calls;
};
Counts& counts() {
  static auto* c = new Counts;  // never destroyed: calls may come during exit
  return *c;
}

}  // namespace

const Config& config() {
  static const Config c = [] {
    Config r;
    r.devices = static_cast<int>(read_number("ANYDEV_LEVEL_ZERO_EMULATOR_DEVICES", 1));
    r.delay_us = static_cast<unsigned>(read_number("ANYDEV_LEVEL_ZERO_EMULATOR_DELAY_US", 0));
    r.max_fill_pattern = read_number("ANYDEV_LEVEL_ZERO_EMULATOR_MAX_FILL_PATTERN", 16);
    if (r.max_fill_pattern == 0 || (r.max_fill_pattern & (r.max_fill_pattern - 1)) != 0 ||
        r.max_fill_pattern > 256) {
      std::fprintf(stderr,
                   "anydev-level-zero-emulator: ANYDEV_LEVEL_ZERO_EMULATOR_MAX_FILL_PATTERN=%zu "
                   "is not a power of two up to 256; using 16\n",
                   r.max_fill_pattern);
      r.max_fill_pattern = 16;
    }
    r.memory_bytes = std::size_t{read_number("ANYDEV_LEVEL_ZERO_EMULATOR_MEMORY_MB", 4096)} << 20;
    r.quiet = read_number("ANYDEV_LEVEL_ZERO_EMULATOR_QUIET", 0) != 0;
    return r;
  }();
  return c;
}

ze_result_t misuse(ze_result_t result, const std::string& message) {
  g_misuse.fetch_add(1, std::memory_order_relaxed);
  if (!config().quiet) {
    std::fprintf(stderr, "anydev-level-zero-emulator: %s (returns 0x%08x)\n", message.c_str(),
                 static_cast<unsigned>(result));
  }
  return result;
}

unsigned long long misuse_count() { return g_misuse.load(std::memory_order_relaxed); }

void count_call(const char* name) {
  Counts& c = counts();
  const std::lock_guard<std::mutex> lock(c.mutex);
  ++c.calls[name];
}

}  // namespace anydev_lz_emu

// Emulator-only functions, never named ze* (the loader would not pass them
// on): a test finds them with dlsym in the driver it named in
// ZE_ENABLE_ALT_DRIVERS.
extern "C" {

__attribute__((visibility("default"))) unsigned long long
anydev_level_zero_emulator_misuse_count() {
  return anydev_lz_emu::misuse_count();
}

// Calls of `name` ("zeCommandListAppendMemoryCopy") that reached the driver.
__attribute__((visibility("default"))) unsigned long long anydev_level_zero_emulator_call_count(
    const char* name) {
  auto& c = anydev_lz_emu::counts();
  const std::lock_guard<std::mutex> lock(c.mutex);
  const auto it = c.calls.find(name);
  return it == c.calls.end() ? 0 : it->second;
}

__attribute__((visibility("default"))) void anydev_level_zero_emulator_reset_call_counts() {
  auto& c = anydev_lz_emu::counts();
  const std::lock_guard<std::mutex> lock(c.mutex);
  c.calls.clear();
}

}  // extern "C"
