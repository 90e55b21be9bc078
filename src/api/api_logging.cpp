// SPDX-License-Identifier: Apache-2.0
// C entry points: the log callback and threshold (logging.h, log_sink.h).
#include "anydev/anydev.h"
#include "api/api_common.h"
#include "support/log_sink.h"
#include "support/logging.h"

using namespace anydev::core;

extern "C" {

anydev_status_t anydev_set_log_callback(anydev_log_callback_t callback, void* user_data) {
  set_log_callback(callback, user_data);
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_set_log_level(anydev_log_severity_t level) {
  static constexpr const char* op = "anydev_set_log_level";
  const int value = static_cast<int>(level);
  if (!set_log_threshold(value)) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "level ", value,
                " is not one of 0 (trace), 1 (debug), 2 (info), 3 (warn), 4 (error), "
                "5 (critical), 6 (off)");
  }
  return ANYDEV_SUCCESS;
}

anydev_log_severity_t anydev_log_level(void) { return log_threshold(); }

}  // extern "C"
