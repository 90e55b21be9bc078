// SPDX-License-Identifier: Apache-2.0
// What the level_zero backend tests read from the emulated driver the loader
// opened (ZE_ENABLE_ALT_DRIVERS): its call counters, its queue group's
// fill limit and whether anydev's fill kernel may load. Stateless apart from the counter's lookup,
// done once; thread-safe.
#ifndef ANYDEV_TESTS_BACKENDS_LEVEL_ZERO_EMULATOR_CALLS_H_
#define ANYDEV_TESTS_BACKENDS_LEVEL_ZERO_EMULATOR_CALLS_H_

#include <dlfcn.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace anydev_test {

// The emulator's count of calls of entry point `name` (0 when the driver's
// counter is not found).
inline unsigned long long calls(const char* name) {
  static auto* count = [] {
    const char* path = std::getenv("ZE_ENABLE_ALT_DRIVERS");
    void* self = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
    return self == nullptr ? nullptr
                           : reinterpret_cast<unsigned long long (*)(const char*)>(
                                 dlsym(self, "anydev_level_zero_emulator_call_count"));
  }();
  return count != nullptr ? count(name) : 0;
}

// The queue group's maxMemoryFillPatternSize the emulator reports
// (ANYDEV_LEVEL_ZERO_EMULATOR_MAX_FILL_PATTERN, default 16).
inline std::size_t native_fill_limit() {
  const char* v = std::getenv("ANYDEV_LEVEL_ZERO_EMULATOR_MAX_FILL_PATTERN");
  return v != nullptr ? std::strtoul(v, nullptr, 10) : 16;
}

// Whether the backend may launch anydev's fill kernel for fills wider than
// the queue group fills: not switched off (ANYDEV_LEVEL_ZERO_FILL_KERNEL=0)
// and modules not refused (ANYDEV_LEVEL_ZERO_EMULATOR_NO_MODULES=1).
inline bool fill_kernel_on() {
  const char* off = std::getenv("ANYDEV_LEVEL_ZERO_FILL_KERNEL");
  const char* refused = std::getenv("ANYDEV_LEVEL_ZERO_EMULATOR_NO_MODULES");
  return !(off != nullptr && std::strcmp(off, "0") == 0) &&
         !(refused != nullptr && std::strcmp(refused, "1") == 0);
}

}  // namespace anydev_test

#endif  // ANYDEV_TESTS_BACKENDS_LEVEL_ZERO_EMULATOR_CALLS_H_
