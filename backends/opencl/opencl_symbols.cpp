#include "opencl_symbols.h"

#include <dlfcn.h>

#include "opencl_services.h"

namespace anydev::opencl {
namespace {

OpenClApi g_api;

std::string dl_error_text() {
  const char* text = dlerror();
  return text != nullptr ? text : "no dlerror text";
}

template <class Fn>
void* resolve(void* library, const char* name, Fn* slot) {
  dlerror();
  void* symbol = dlsym(library, name);
  *slot = reinterpret_cast<Fn>(symbol);
  return symbol;
}

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
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                     cat("cannot open the OpenCL library ", path,
                         override_path != nullptr ? cat(" (from ", kLibraryVariable, ")") : "",
                         ": ", dl_error_text()));
  }
  OpenClApi api;
#define ANYDEV_OPENCL_RESOLVE_REQUIRED(name)                                                  \
  if (resolve(handle, #name, &api.name) == nullptr) {                                         \
    const std::string why = dl_error_text();                                                  \
    dlclose(handle);                                                                          \
    return set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,                                        \
                     cat("the OpenCL library ", path, " lacks the symbol " #name ": ", why)); \
  }
  ANYDEV_OPENCL_REQUIRED_SYMBOLS(ANYDEV_OPENCL_RESOLVE_REQUIRED)
#undef ANYDEV_OPENCL_RESOLVE_REQUIRED
#define ANYDEV_OPENCL_RESOLVE_OPTIONAL(name) resolve(handle, #name, &api.name);
  ANYDEV_OPENCL_OPTIONAL_SYMBOLS(ANYDEV_OPENCL_RESOLVE_OPTIONAL)
#undef ANYDEV_OPENCL_RESOLVE_OPTIONAL
  g_api = api;
  log(ANYDEV_LOG_DEBUG, cat("opened ", path));
  return ANYDEV_SUCCESS;
}

const OpenClApi& cl() { return g_api; }

}  // namespace anydev::opencl
