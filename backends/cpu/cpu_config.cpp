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

CpuConfig read_config() {
  CpuConfig config;
  if (const char* value = get_env(kMlockVariable)) {
    if (const std::optional<bool> lock = parse_switch(value)) {
      config.lock_pinned_memory = *lock;
    } else {
      log(ANYDEV_LOG_WARN, std::string(kMlockVariable) + "=\"" + value +
                               "\" is not valid (expected 0 or 1); keeping the default, " +
                               (config.lock_pinned_memory ? "1 (lock pinned host memory)"
                                                          : "0 (do not lock pinned host memory)"));
    }
  }
  return config;
}

}  // namespace anydev::cpu
