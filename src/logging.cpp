#include "logging.h"

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "environment.h"
#include "fork_guard.h"
#include "format.h"

namespace anydev::core {
namespace {

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
        if (const auto value = env(kEnvLogLevel)) {
          if (const std::optional<int> parsed = parse_log_level(*value)) {
            level = static_cast<spdlog::level::level_enum>(*parsed);
          }
        }
        created->set_level(level);
        created->flush_on(spdlog::level::trace);
        return created;
      },
      [](spdlog::logger& made) {
        // Once, by the thread whose logger was kept. A malformed value is
        // refused like every malformed variable: every backend is unavailable
        // with this reason (environment.h); said here once too.
        if (const auto value = env(kEnvLogLevel); value && !parse_log_level(*value)) {
          made.error("{}; every backend is unavailable", check_log_level(*value));
        }
      });
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
