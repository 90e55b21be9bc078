// SPDX-License-Identifier: Apache-2.0
// The core's services (set_error, log, getenv) as the level_zero backend sees
// them: the backend kit's services (include/anydev/kit/services.h) under the
// name "level_zero". Thread-safe; the core's table lives for the process.
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_SERVICES_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_SERVICES_H_

#include <string>

#include "anydev/backend.h"
#include "anydev/kit/services.h"

namespace anydev::level_zero {

// kBackendName ("level_zero"), set_core_services, set_error (cold), log, get_env.
ANYDEV_KIT_BACKEND_SERVICES("level_zero")

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_SERVICES_H_
