#include "logging.h"

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <array>
#include <memory>
#include <string>

#include "environment.h"
#include "format.h"

namespace anydev::core {
namespace {

constexpr std::array<std::string_view, 7> kLevelNames = {"trace", "debug",    "info", "warn",
                                                         "error", "critical", "off"};

spdlog::logger& logger() {
  // Never destroyed: a backend or a late release may log during exit.
  static spdlog::logger* instance = [] {
    auto* created = new spdlog::logger("anydev", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    created->set_pattern("[anydev] [%l] %v");
    spdlog::level::level_enum level = spdlog::level::warn;
    if (const auto value = env(kEnvLogLevel)) {
      bool known = false;
      for (std::size_t i = 0; i < kLevelNames.size(); ++i) {
        if (*value == kLevelNames[i]) {
          level = static_cast<spdlog::level::level_enum>(i);
          known = true;
        }
      }
      if (!known) {
        created->warn(
            "ANYDEV_LOG_LEVEL=\"{}\" is not one of trace, debug, info, warn, error, critical, "
            "off; using warn",
            *value);
      }
    }
    created->set_level(level);
    created->flush_on(spdlog::level::trace);
    return created;
  }();
  return *instance;
}

}  // namespace

bool log_enabled(anydev_log_level_t level) {
  return logger().should_log(static_cast<spdlog::level::level_enum>(level));
}

void log(anydev_log_level_t level, std::string_view message) {
  logger().log(static_cast<spdlog::level::level_enum>(level), "{}",
               controls_escaped(std::string(message)));
}

}  // namespace anydev::core
