// SPDX-License-Identifier: Apache-2.0
// The core's services (set_error, log, getenv) as the cpu backend sees them:
// the backend kit's services (include/anydev/kit/services.h) under the name
// "cpu".
//
// The entry point stores the core's table once; every other file reports
// errors and logs through these functions, which are thread-safe and do
// nothing harmful when no table is stored yet (errors are then only returned,
// logs dropped). The table itself is owned by the core and lives for the
// whole process.
#ifndef ANYDEV_BACKENDS_CPU_CPU_SERVICES_H_
#define ANYDEV_BACKENDS_CPU_CPU_SERVICES_H_

#include <string>

#include "anydev/backend.h"
#include "anydev/kit/services.h"

namespace anydev::cpu {

// kBackendName ("cpu"), set_core_services, set_error (cold), log, get_env.
ANYDEV_KIT_BACKEND_SERVICES("cpu")

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_SERVICES_H_
