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

spdlog::logger& logger() {
  // Never destroyed: a backend or a late release may log during exit.
  static spdlog::logger* instance = [] {
    auto* created = new spdlog::logger("anydev", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    created->set_pattern("[anydev] [%l] %v");
    spdlog::level::level_enum level = spdlog::level::warn;
    if (const auto value = env(kEnvLogLevel)) {
      if (const std::optional<int> parsed = parse_log_level(*value)) {
        level = static_cast<spdlog::level::level_enum>(*parsed);
      } else {
        // Refused like every malformed variable: every backend is
        // unavailable with this reason (environment.h); said here once too.
        created->error("{}; every backend is unavailable", check_log_level(*value));
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
