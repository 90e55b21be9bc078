// SPDX-License-Identifier: Apache-2.0
// The plugin's entry point and table: the GPU core (backends/gpu/)
// instantiated once for CUDA (cuda_api.h).
#include "cuda_api.h"
#include "gpu_table.h"

ANYDEV_GPU_BACKEND_ENTRY(::anydev::cuda::CudaApi)
