#include "logging.h"

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "environment.h"
#include "fork_guard.h"

namespace anydev::core {
namespace {

constexpr std::array<std::string_view, 7> kLevelNames = {"trace", "debug",    "info", "warn",
                                                         "error", "critical", "off"};

// The level ANYDEV_LOG_LEVEL names; nullopt when it names none.
std::optional<spdlog::level::level_enum> parse_level(const std::string& value) {
  for (std::size_t i = 0; i < kLevelNames.size(); ++i) {
    if (value == kLevelNames[i]) return static_cast<spdlog::level::level_enum>(i);
  }
  return std::nullopt;
}

spdlog::logger& logger() {
  // Never destroyed: a backend or a late release may log during exit. A
  // ProcessObject, not a guarded static: fork-safe (fork_guard.h).
  static ProcessObject<spdlog::logger> instance;
  return instance.get(
      [] {
        auto* created =
            new spdlog::logger("anydev", std::make_shared<spdlog::sinks::stderr_sink_mt>());
        created->set_pattern("[anydev] [%l] %v");
        spdlog::level::level_enum level = spdlog::level::warn;
        if (const auto value = env(kEnvLogLevel)) level = parse_level(*value).value_or(level);
        created->set_level(level);
        created->flush_on(spdlog::level::trace);
        return created;
      },
      [](spdlog::logger& made) {
        // Once, by the thread whose logger was kept.
        if (const auto value = env(kEnvLogLevel); value && !parse_level(*value)) {
          made.warn(
              "ANYDEV_LOG_LEVEL=\"{}\" is not one of trace, debug, info, warn, error, critical, "
              "off; using warn",
              *value);
        }
      });
}

}  // namespace

bool log_enabled(anydev_log_level_t level) {
  return logger().should_log(static_cast<spdlog::level::level_enum>(level));
}

void log(anydev_log_level_t level, std::string_view message) {
  logger().log(static_cast<spdlog::level::level_enum>(level), "{}", message);
}

}  // namespace anydev::core
