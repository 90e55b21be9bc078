// SPDX-License-Identifier: Apache-2.0
// The settings every emulator shares, read once from environment variables
// named by the face, and the one way misuse is reported.
//
// With the face's prefix P (ANYDEV_CUDA_EMULATOR_, ANYDEV_HIP_EMULATOR_):
//   P DEVICES            number of devices (default 1; 0: no device)
//   P DELAY_US           microseconds each stream operation waits before it
//                        runs (default 0)
//   P MEMORY_POOLS       1: devices support stream-ordered pools (default); 0: not
//   P MEMORY_MB          device memory per device and pinned host memory in
//                        all, in mib (default 4096)
//   P HUGE_IS_INVALID    1: an allocation larger than all the memory there is
//                        fails with invalid_value, not out_of_memory (default 0)
//   P QUIET              1: do not print misuse to stderr
//
// Thread-safe: the settings are read once, at first use, and never change.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_CONFIG_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_CONFIG_H_

#include <cstddef>
#include <string>
#include <vector>

#include "core_status.h"

namespace anydev_emu::core {

// Who the emulator is: kIdentity is defined once by each face (its library
// has exactly one), never by the core, with static strings.
struct Identity {
  const char* env_prefix;     // "ANYDEV_CUDA_EMULATOR_"
  const char* report_prefix;  // "anydev-cuda-emulator": starts every misuse line
};
extern const Identity kIdentity;

struct Config {
  int devices = 1;
  unsigned delay_us = 0;
  bool memory_pools = true;
  std::size_t memory_bytes = std::size_t{4096} << 20;
  bool huge_is_invalid = false;
  bool quiet = false;
};

const Config& get_config();

// The face's own settings: the variable <prefix><suffix>. A number outside
// [min, max] is reported and ignored; a list is comma-separated.
long long read_setting(const char* suffix, long long fallback, long long min, long long max);
std::vector<std::string> read_setting_list(const char* suffix);

// Prints "<report_prefix>: <message>" to stderr unless quiet: every misuse
// the emulator detects is reported this way as well as by its status.
void report_misuse(const std::string& message);
// report_misuse(message), then `status`.
Status misuse(Status status, const std::string& message);

}  // namespace anydev_emu::core

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_CONFIG_H_
