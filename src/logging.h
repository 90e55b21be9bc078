// The core's logger (spdlog, kept out of every public header). Level from
// ANYDEV_LOG_LEVEL: trace, debug, info, warn (default), error, critical, off.
// Messages go to stderr as "[anydev] [level] message". Thread-safe.
#ifndef ANYDEV_SRC_LOGGING_H_
#define ANYDEV_SRC_LOGGING_H_

#include <string_view>

#include "anydev/backend.h"

namespace anydev::core {

void log(anydev_log_level_t level, std::string_view message);
bool log_enabled(anydev_log_level_t level);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_LOGGING_H_
