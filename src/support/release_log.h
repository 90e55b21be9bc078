// SPDX-License-Identifier: Apache-2.0
// Logging from release paths, which never throw: the message is built with
// cat() and logged at `level`, and a message that cannot be built (no
// memory) is dropped. Thread-safe (logging.h).
#ifndef ANYDEV_SRC_SUPPORT_RELEASE_LOG_H_
#define ANYDEV_SRC_SUPPORT_RELEASE_LOG_H_

#include <utility>

#include "anydev/kit/cat.h"
#include "support/logging.h"

namespace anydev::core {

template <class... Args>
void release_log(anydev_log_level_t level, Args&&... args) noexcept {
  try {
    log(level, cat(std::forward<Args>(args)...));
  } catch (...) {
  }
}

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_RELEASE_LOG_H_
