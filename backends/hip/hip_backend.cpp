// SPDX-License-Identifier: Apache-2.0
// The plugin's entry point and table: the GPU core (backends/gpu/)
// instantiated once for HIP (hip_api.h).
#include "gpu_table.h"
#include "hip_api.h"

ANYDEV_GPU_BACKEND_ENTRY(::anydev::hip::HipApi)
