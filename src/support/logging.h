// SPDX-License-Identifier: Apache-2.0
// The core's logger. Threshold from ANYDEV_LOG_LEVEL (trace, debug, info,
// warn (default), error, critical, off) until anydev_set_log_level overrides
// it. Messages go to the embedder's callback when one is installed
// (log_sink.h), else to stderr as "[anydev] [level] message" (spdlog, kept
// out of every public header). Thread-safe.
#ifndef ANYDEV_SRC_SUPPORT_LOGGING_H_
#define ANYDEV_SRC_SUPPORT_LOGGING_H_

#include <string_view>

#include "anydev/anydev.h"
#include "anydev/backend.h"

namespace anydev::core {

void log(anydev_log_level_t level, std::string_view message);
bool log_enabled(anydev_log_level_t level);

// The threshold, trace (0) .. off (6). Setting one outside that range
// returns false and changes nothing.
anydev_log_severity_t log_threshold() noexcept;
bool set_log_threshold(int threshold) noexcept;

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_LOGGING_H_
