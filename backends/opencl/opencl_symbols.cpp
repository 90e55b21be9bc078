// SPDX-License-Identifier: Apache-2.0
#include "opencl_symbols.h"

#include "anydev/kit/library.h"
#include "opencl_services.h"

namespace anydev::opencl {
namespace {

OpenClApi g_api;

}  // namespace

anydev_status_t load_opencl(std::string* library) {
  const char* override_path = get_env(kLibraryVariable);
  if (override_path != nullptr && *override_path == '\0') {
    // Refused like every malformed variable (docs/environment.md), never
    // taken as unset.
    return set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                     cat(kLibraryVariable,
                         " is set but empty: expected the path or file name of the OpenCL "
                         "library (unset it for ",
                         kDefaultLibrary, ")"));
  }
  const std::string path = override_path != nullptr ? override_path : kDefaultLibrary;
  *library = path;
  std::string error;
  void* handle = kit::open_library(
      path, "OpenCL library",
      override_path != nullptr
          ? cat("from ", kLibraryVariable)
          : cat("is an OpenCL ICD loader installed? ", kLibraryVariable, " overrides the path"),
      &error);
  if (handle == nullptr) return set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE, error);
  OpenClApi api;
  kit::missing_symbol<const char*> missing;
  if (!ANYDEV_KIT_RESOLVE_SYMBOLS(ANYDEV_OPENCL_SYMBOLS, api, kit::dlsym_resolver(handle),
                                  &missing)) {
    dlclose(handle);
    return set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                     kit::symbol_failure("OpenCL library", path, missing.key, missing.why));
  }
  g_api = api;
  log(ANYDEV_LOG_DEBUG, cat("opened ", path));
  return ANYDEV_SUCCESS;
}

const OpenClApi& cl() { return g_api; }

}  // namespace anydev::opencl
