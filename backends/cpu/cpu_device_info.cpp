// SPDX-License-Identifier: Apache-2.0
#include "cpu_device_info.h"

#include <sched.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>

namespace anydev::cpu {
namespace {

constexpr std::size_t kKiB = 1024;

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Calls `visit(key, value)` for every "key : value" line, both trimmed.
template <class Visit>
void for_each_key_value(std::string_view text, Visit&& visit) {
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    visit(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
}

// "12345 kB" -> bytes; nullopt when it is not a number of kB.
std::optional<std::size_t> parse_kib(std::string_view value) {
  std::size_t kib = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), kib);
  if (ec != std::errc{} || trim(std::string_view(end, value.data() + value.size())) != "kB") {
    return std::nullopt;
  }
  if (kib > SIZE_MAX / kKiB) return SIZE_MAX;
  return kib * kKiB;
}

// The whole file (procfs files report size 0, so read to EOF); "" on failure.
std::string read_small_file(const char* path) {
  std::string text;
  std::FILE* file = std::fopen(path, "re");
  if (file == nullptr) return text;
  std::array<char, 4096> chunk;
  std::size_t got = 0;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), file)) > 0)
    text.append(chunk.data(), got);
  std::fclose(file);
  return text;
}

std::optional<MemoryStatus> memory_status_from_sysinfo() {
  struct sysinfo info {};
  if (sysinfo(&info) != 0) return std::nullopt;
  const std::size_t unit = info.mem_unit == 0 ? 1 : info.mem_unit;
  return MemoryStatus{.available_bytes = static_cast<std::size_t>(info.freeram) * unit +
                                         static_cast<std::size_t>(info.bufferram) * unit,
                      .total_bytes = static_cast<std::size_t>(info.totalram) * unit};
}

long processors_online() {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? online : 1;
}

// Processors this process may run on (its affinity mask); 0 when unknown.
long processors_usable() {
  const long configured = sysconf(_SC_NPROCESSORS_CONF);
  const int max_cpus = static_cast<int>(configured > 1024 ? configured : 1024);
  cpu_set_t* set = CPU_ALLOC(max_cpus);
  if (set == nullptr) return 0;
  const std::size_t set_size = CPU_ALLOC_SIZE(max_cpus);
  long count = 0;
  if (sched_getaffinity(0, set_size, set) == 0) count = CPU_COUNT_S(set_size, set);
  CPU_FREE(set);
  return count;
}

std::string mib_text(std::size_t bytes) { return std::to_string(bytes / (kKiB * kKiB)) + " MiB"; }

}  // namespace

std::optional<MemoryStatus> parse_meminfo(std::string_view text) {
  std::optional<std::size_t> total, available, free, buffers, cached;
  for_each_key_value(text, [&](std::string_view key, std::string_view value) {
    if (key == "MemTotal")
      total = parse_kib(value);
    else if (key == "MemAvailable")
      available = parse_kib(value);
    else if (key == "MemFree")
      free = parse_kib(value);
    else if (key == "Buffers")
      buffers = parse_kib(value);
    else if (key == "Cached")
      cached = parse_kib(value);
  });
  if (!total) return std::nullopt;
  if (!available) {
    if (!free) return std::nullopt;
    available = *free + buffers.value_or(0) + cached.value_or(0);
  }
  return MemoryStatus{.available_bytes = *available, .total_bytes = *total};
}

std::string parse_cpu_model_name(std::string_view cpuinfo) {
  constexpr std::array<std::string_view, 5> kKeys = {"model name", "cpu model", "Processor", "cpu",
                                                     "Hardware"};
  std::array<std::string_view, kKeys.size()> found{};
  for_each_key_value(cpuinfo, [&](std::string_view key, std::string_view value) {
    for (std::size_t i = 0; i < kKeys.size(); ++i) {
      if (key == kKeys[i] && found[i].empty()) found[i] = value;
    }
  });
  for (std::string_view value : found) {
    if (!value.empty()) return std::string(value);
  }
  return {};
}

std::optional<std::size_t> parse_cache_size(std::string_view text) {
  text = trim(text);
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{}) return std::nullopt;
  const std::string_view unit(end, text.data() + text.size());
  int shift = 0;
  if (unit == "K") {
    shift = 10;
  } else if (unit == "M") {
    shift = 20;
  } else if (unit == "G") {
    shift = 30;
  } else if (!unit.empty()) {
    return std::nullopt;
  }
  if (value > (SIZE_MAX >> shift)) return SIZE_MAX;
  return value << shift;
}

std::size_t read_last_level_cache_bytes() {
  std::size_t largest = 0;
  for (int index = 0;; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string type = read_small_file((dir + "/type").c_str());
    if (type.empty()) break;  // no more cache levels (or no sysfs)
    if (trim(type) == "Instruction") continue;
    if (auto bytes = parse_cache_size(read_small_file((dir + "/size").c_str()))) {
      largest = std::max(largest, *bytes);
    }
  }
  if (largest > 0) return largest;
  long llc = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  return llc > 0 ? static_cast<std::size_t>(llc) : 0;
}

MemoryStatus read_memory_status() {
  if (auto status = parse_meminfo(read_small_file("/proc/meminfo"))) return *status;
  if (auto status = memory_status_from_sysinfo()) return *status;
  return {};
}

CpuDeviceInfo read_cpu_device_info() {
  CpuDeviceInfo info;
  std::string model = parse_cpu_model_name(read_small_file("/proc/cpuinfo"));
  if (model.empty()) model = "unknown processor";
  info.name = "cpu: " + model;
  const MemoryStatus memory = read_memory_status();
  info.total_memory = memory.total_bytes;

  const long online = processors_online();
  const long usable = processors_usable();
  info.description = model + "; " + std::to_string(online) + " logical cores online";
  if (usable > 0) info.description += " (" + std::to_string(usable) + " usable by this process)";
  info.description += "; " + mib_text(memory.total_bytes) + " of host memory";
  const long page = sysconf(_SC_PAGESIZE);
  if (page > 0) info.description += "; page size " + std::to_string(page) + " bytes";
  return info;
}

}  // namespace anydev::cpu
