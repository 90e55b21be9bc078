// SPDX-License-Identifier: Apache-2.0
#include "cpu_attributes.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "cpu_device_info.h"
#include "cpu_services.h"

namespace anydev::cpu {
namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The highest clock of CPU 0 in kHz: cpufreq's cpuinfo_max_freq, else the
// first "cpu MHz" of /proc/cpuinfo; 0 when neither is there.
std::int64_t clock_khz() {
  const std::string max = read_file("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  if (!max.empty()) {
    const long long khz = std::atoll(max.c_str());
    if (khz > 0) return khz;
  }
  const std::string cpuinfo = read_file("/proc/cpuinfo");
  const auto at = cpuinfo.find("cpu MHz");
  if (at == std::string::npos) return 0;
  const auto colon = cpuinfo.find(':', at);
  if (colon == std::string::npos) return 0;
  const double mhz = std::atof(cpuinfo.c_str() + colon + 1);
  return mhz > 0 ? static_cast<std::int64_t>(mhz * 1000.0) : 0;
}

// The level-2 data or unified cache of CPU 0 from sysfs; 0 when not found.
std::int64_t l2_bytes() {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string level = read_file((dir + "/level").c_str());
    if (level.empty()) break;
    if (std::atoi(level.c_str()) != 2) continue;
    const std::string type = read_file((dir + "/type").c_str());
    if (type.rfind("Instruction", 0) == 0) continue;
    const auto size = parse_cache_size(read_file((dir + "/size").c_str()));
    if (size) return static_cast<std::int64_t>(*size);
  }
  return 0;
}

anydev_status_t none(int attribute, const char* why) {
  return set_error(ANYDEV_ERROR_UNSUPPORTED,
                   "cpu: attribute " + std::to_string(attribute) + ": " + why);
}

}  // namespace

anydev_status_t read_attribute(int attribute, std::int64_t* value) {
  switch (attribute) {
    case ANYDEV_ATTRIBUTE_COMPUTE_UNITS: {
      const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
      *value = online > 0 ? online : 1;
      return ANYDEV_SUCCESS;
    }
    case ANYDEV_ATTRIBUTE_CLOCK_RATE_KHZ:
      *value = clock_khz();
      if (*value == 0) {
        return none(attribute, "neither cpufreq nor /proc/cpuinfo gives the processor's clock");
      }
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_L2_CACHE_BYTES:
      *value = l2_bytes();
      if (*value == 0) return none(attribute, "sysfs lists no level-2 cache for CPU 0");
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_MAX_ALLOCATION_BYTES:
    case ANYDEV_ATTRIBUTE_TOTAL_MEMORY_BYTES:
      *value = static_cast<std::int64_t>(read_memory_status().total_bytes);
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_UNIFIED_ADDRESSING:
    case ANYDEV_ATTRIBUTE_INTEGRATED:
      *value = 1;  // device memory is host memory
      return ANYDEV_SUCCESS;
    case ANYDEV_ATTRIBUTE_MEMORY_CLOCK_RATE_KHZ:
    case ANYDEV_ATTRIBUTE_MEMORY_BUS_WIDTH_BITS:
      return none(attribute, "the OS does not tell the memory's clock or bus width");
    case ANYDEV_ATTRIBUTE_PCI_DOMAIN:
    case ANYDEV_ATTRIBUTE_PCI_BUS:
    case ANYDEV_ATTRIBUTE_PCI_DEVICE:
    case ANYDEV_ATTRIBUTE_PCI_FUNCTION:
      return none(attribute, "the host processor is not a PCI device");
    default:
      return none(attribute, "not a value the host processor has");
  }
}

anydev_status_t read_uuid(std::uint8_t*) {
  return set_error(ANYDEV_ERROR_UNSUPPORTED, "cpu: the host processor has no device UUID");
}

anydev_status_t read_api_version(char* out, std::size_t capacity) {
  struct utsname name {};
  std::string text = "cpu backend (built in)";
  if (::uname(&name) == 0) text += std::string(", ") + name.sysname + " " + name.release;
  std::snprintf(out, capacity, "%s", text.c_str());
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::cpu
