// SPDX-License-Identifier: Apache-2.0
// What the cpu backend reports about its one device: the processor's name
// and core counts (from /proc/cpuinfo and the scheduler), the host's memory
// (from /proc/meminfo, else sysinfo(2)) and its largest cache (sysfs).
//
// The parse_* functions are pure and thread-safe. The read_* functions read
// the OS on every call and are thread-safe; they never fail, falling back on
// documented defaults.
#ifndef ANYDEV_BACKENDS_CPU_CPU_DEVICE_INFO_H_
#define ANYDEV_BACKENDS_CPU_CPU_DEVICE_INFO_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace anydev::cpu {

// The host's memory, in bytes, at the time it was read.
struct MemoryStatus {
  std::size_t available_bytes = 0;  // what new allocations can use without swapping
  std::size_t total_bytes = 0;
};

// MemTotal and MemAvailable of /proc/meminfo text (MemAvailable missing, as on
// kernels before 3.14: MemFree + Buffers + Cached). nullopt when MemTotal or
// every "available" figure is missing.
std::optional<MemoryStatus> parse_meminfo(std::string_view text);

// The processor's model name from /proc/cpuinfo text: the first of the keys
// "model name" (x86), "cpu model" (MIPS), "Processor" (older ARM), "cpu"
// (POWER), "Hardware" (ARM boards) that has a non-empty value. "" when none.
std::string parse_cpu_model_name(std::string_view cpuinfo);

// /proc/meminfo, else sysinfo(2); zeros when both fail.
MemoryStatus read_memory_status();

// A sysfs cache size ("32768K", "1M", "512"), in bytes; nullopt when it is
// not one.
std::optional<std::size_t> parse_cache_size(std::string_view text);

// The largest data or unified cache of CPU 0, in bytes: from sysfs
// (/sys/devices/system/cpu/cpu0/cache/index*/), else sysconf, else 0.
// sysfs comes first because glibc's sysconf can be far off in a virtual
// machine (ten times the L3 that sysfs reports has been seen).
std::size_t read_last_level_cache_bytes();

// The device description, read once at initialize and kept for the process.
struct CpuDeviceInfo {
  std::string name;         // "cpu: <model name>" or "cpu: unknown processor"
  std::string description;  // model, core counts, memory, page size
  std::size_t total_memory = 0;
};

CpuDeviceInfo read_cpu_device_info();

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_DEVICE_INFO_H_
