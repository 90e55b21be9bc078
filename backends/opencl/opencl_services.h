// SPDX-License-Identifier: Apache-2.0
// The core's services (set_error, log, getenv) as the opencl backend uses
// them, plus `cat` for building messages: the backend kit's services and
// message helper (anydev/kit/) under the name "opencl".
//
// The entry point stores the core's table once; it is owned by the core and
// lives for the whole process. Every function here is thread-safe; before a
// table is stored, errors are only returned and logs are dropped.
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_SERVICES_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_SERVICES_H_

#include <string>

#include "anydev/backend.h"
#include "anydev/kit/cat.h"
#include "anydev/kit/services.h"

namespace anydev::opencl {

// kBackendName ("opencl"), set_core_services, set_error (cold), log, get_env.
ANYDEV_KIT_BACKEND_SERVICES("opencl")

using kit::cat;

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_SERVICES_H_
