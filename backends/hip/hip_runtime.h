// SPDX-License-Identifier: Apache-2.0
// The HIP runtime library (libamdhip64), opened with dlopen by the GPU core,
// and the entry points that hip_symbols.h lists, resolved with dlsym.
//
// A HipRuntime is filled once by HipApi::load (hip_runtime.cpp) (during the backend's
// initialize, under the core's registry lock) and only read afterwards, so it
// may be read from any thread. The library stays open for the life of the
// process: the runtime's own threads may outlive any point where closing it
// would be safe.
#ifndef ANYDEV_BACKENDS_HIP_HIP_RUNTIME_H_
#define ANYDEV_BACKENDS_HIP_HIP_RUNTIME_H_

#include <string>

#include "anydev/kit/symbols.h"
#include "gpu_api.h"
#include "hip_symbols.h"

namespace anydev::hip {

// The name messages give an entry point ("hipMalloc").
constexpr const char* symbol_name(const HipSymbolKey& key) { return key.name; }

struct HipRuntime {
  ANYDEV_KIT_SYMBOL_FIELDS(ANYDEV_HIP_SYMBOLS)
  ANYDEV_GPU_SYMBOL_NAMES(ANYDEV_HIP_SYMBOLS)

  std::string requested_path;   // what dlopen was given ("libamdhip64.so.5")
  std::string opened_path;      // the file the dynamic loader opened
  int runtime_version = 0;      // hipRuntimeGetVersion: 50222153 for 5.2.x
  int driver_version = 0;       // hipDriverGetVersion
  const char* host_alloc = "";  // the pinned allocator found: "hipHostMalloc" or "hipHostAlloc"
};

// Resolves every symbol of `library`, opened from `path` (found by the loader
// at `opened`), and reads the versions. Calls nothing that needs a device. On
// failure returns false and sets *reason to the file, the symbol and the
// loader's words; the caller closes the library.
bool load_hip_runtime(void* library, const std::string& path, const std::string& opened,
                      HipRuntime* runtime, std::string* reason);

// "5.2" for a HIP version number (major * 10000000 + minor * 100000 + patch).
std::string hip_version_text(int version);

}  // namespace anydev::hip

#endif  // ANYDEV_BACKENDS_HIP_HIP_RUNTIME_H_
