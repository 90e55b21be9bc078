// SPDX-License-Identifier: Apache-2.0
// The core's services (set_error, log, getenv) as the cuda backend sees them:
// the backend kit's services (backends/common/kit_services.h) under the name
// "cuda".
//
// initialize stores the core's table (owned by the core, alive for the whole
// process); every function here is thread-safe, and before a table is stored
// errors are only returned and logs dropped.
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_SERVICES_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_SERVICES_H_

#include <string>

#include "anydev/backend.h"
#include "kit_services.h"

namespace anydev::cuda {

// kBackendName ("cuda"), set_core_services, set_error (cold), log, get_env.
ANYDEV_KIT_BACKEND_SERVICES("cuda")

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_SERVICES_H_
