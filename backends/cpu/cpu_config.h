// SPDX-License-Identifier: Apache-2.0
// The cpu backend's environment switches, read once at initialize.
//
//   ANYDEV_CPU_MLOCK  "1" (default): lock pinned host memory with mlock while
//                     RLIMIT_MEMLOCK allows; "0": never lock.
//   ANYDEV_CPU_THREADS  threads that one large copy or fill is split across
//                     (1 to 1024; default: the online CPUs; 1 never
//                     splits).
//   ANYDEV_CPU_STREAMING_BYTES  the footprint (bytes written, plus bytes read
//                     for a copy) above which copies and fills use streaming
//                     stores (1 to 2^62; default: half the last-level cache,
//                     cpu_streaming.h).
//
// Strict: any other value (including "") is refused: `error` names it and
// initialize fails, so the cpu backend is unavailable with that reason
// (docs/environment.md). read_config is thread-safe; the core calls
// initialize once.
#ifndef ANYDEV_BACKENDS_CPU_CPU_CONFIG_H_
#define ANYDEV_BACKENDS_CPU_CPU_CONFIG_H_

#include <cstddef>
#include <optional>
#include <string>

namespace anydev::cpu {

inline constexpr const char* kMlockVariable = "ANYDEV_CPU_MLOCK";

// The switches' values (defaults when unset or invalid).
struct CpuConfig {
  bool lock_pinned_memory = true;
  unsigned split_threads = 0;       // 0: the online CPUs
  std::size_t streaming_bytes = 0;  // 0: derived from the last-level cache
  std::string error;                // non-empty: a malformed variable, the backend is unavailable
};

inline constexpr const char* kThreadsVariable = "ANYDEV_CPU_THREADS";
inline constexpr const char* kStreamingVariable = "ANYDEV_CPU_STREAMING_BYTES";

// "1".."1024" -> that number, anything else -> nullopt.
std::optional<unsigned> parse_thread_count(const char* value);

// "1".."4611686018427387904" (2^62, decimal digits only) -> that number,
// anything else -> nullopt.
std::optional<std::size_t> parse_streaming_bytes(const char* value);

// "0" -> false, "1" -> true, anything else -> nullopt.
std::optional<bool> parse_switch(const char* value);

// Reads the variables through the core's getenv.
CpuConfig read_config();

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_CONFIG_H_
