// SPDX-License-Identifier: Apache-2.0
// The CUDA driver library, opened with dlopen, and the entry points that
// cuda_symbols.h lists, resolved through cuGetProcAddress.
//
// A CudaDriver is filled once by CudaApi::load (cuda_driver.cpp) (during the backend's
// initialize, under the core's registry lock) and only read afterwards, so it
// may be read from any thread. It keeps the library open for the life of the
// process: the driver's own threads may outlive any point where closing it
// would be safe.
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_DRIVER_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_DRIVER_H_

#include <cudaTypedefs.h>

#include <string>

#include "anydev/kit/symbols.h"
#include "cuda_symbols.h"
#include "gpu_api.h"

namespace anydev::cuda {

// The name messages give an entry point ("cuMemAlloc").
constexpr const char* symbol_name(const CudaSymbolKey& key) { return key.base; }

struct CudaDriver {
  ANYDEV_GPU_DRIVER_FIELDS(ANYDEV_CUDA_SYMBOLS)
  int version = 0;            // cuDriverGetVersion: 12080 for CUDA 12.8
  const char* resolver = "";  // "cuGetProcAddress_v2", "cuGetProcAddress" or "dlsym"
};

// Resolves every symbol of `library`, opened (by the GPU core) from `path`,
// which the loader found at `opened_file`, and reads the driver's version
// (CudaApi::load). Does not call cuInit. On failure returns false and sets
// *reason to the file, the symbol and the loader's or driver's own words;
// the caller closes the library.
bool load_cuda_driver(void* library, const std::string& path, const std::string& opened_file,
                      CudaDriver* driver, std::string* reason);

// "12.8" for 12080.
std::string driver_version_text(int version);

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_DRIVER_H_
