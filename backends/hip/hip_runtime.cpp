// SPDX-License-Identifier: Apache-2.0
#include "hip_runtime.h"

#include <dlfcn.h>

#include "anydev/kit/cat.h"
#include "anydev/kit/library.h"

namespace anydev::hip {
namespace {

// dlsym of the key's name, else of its alternative: the backend kit's
// resolver for ANYDEV_HIP_SYMBOLS. Holds the handle, does not own it.
class AlternativeResolver {
 public:
  using key_type = HipSymbolKey;

  explicit AlternativeResolver(void* library) : plain_(library) {}

  void* operator()(const HipSymbolKey& key, std::string* why) const {
    void* symbol = plain_(key.name, why);
    if (symbol != nullptr || key.alternative == nullptr) return symbol;
    std::string alternative_why;
    symbol = plain_(key.alternative, &alternative_why);
    if (symbol == nullptr) *why = kit::cat(*why, "; nor ", key.alternative, ": ", alternative_why);
    return symbol;
  }

 private:
  kit::dlsym_resolver plain_;
};

}  // namespace

std::string hip_version_text(int version) {
  return kit::cat(version / 10000000, ".", (version / 100000) % 100);
}

bool load_hip_runtime(void* library, const std::string& path, const std::string& opened,
                      HipRuntime* runtime, std::string* reason) {
  HipRuntime loaded;
  loaded.requested_path = path;
  loaded.opened_path = opened;
  kit::missing_symbol<HipSymbolKey> missing;
  if (!ANYDEV_KIT_RESOLVE_SYMBOLS(ANYDEV_HIP_SYMBOLS, loaded, AlternativeResolver(library),
                                  &missing)) {
    *reason = kit::symbol_failure("HIP runtime library", path, missing.key.name, missing.why,
                                  opened != path ? opened : "");
    return false;
  }
  loaded.host_alloc = dlsym(library, "hipHostMalloc") != nullptr ? "hipHostMalloc" : "hipHostAlloc";
  // Versions need no device; a runtime that cannot say is still usable.
  if (loaded.RuntimeGetVersion(&loaded.runtime_version) != hipSuccess) loaded.runtime_version = 0;
  if (loaded.DriverGetVersion(&loaded.driver_version) != hipSuccess) loaded.driver_version = 0;
  *runtime = std::move(loaded);
  return true;
}

}  // namespace anydev::hip
