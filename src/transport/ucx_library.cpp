// SPDX-License-Identifier: Apache-2.0
#include "transport/ucx_library.h"

#include <dlfcn.h>

#include <mutex>
#include <optional>

#include "support/environment.h"

namespace anydev::core::transport {
namespace {

struct Opened {
  UcxLibrary library;
  bool ok = false;
  std::string reason;
};

Opened open_library() {
  Opened out;
  const std::optional<std::string> chosen = env("ANYDEV_UCX_LIBRARY");
  out.library.path = chosen && !chosen->empty() ? *chosen : "libucp.so.0";
  // RTLD_LOCAL: UCX's symbols stay out of the global namespace.
  void* handle = dlopen(out.library.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    out.reason = "cannot open " + out.library.path + ": " + (err != nullptr ? err : "unknown");
    return out;
  }
#define ANYDEV_UCX_RESOLVE_(name)                                                              \
  out.library.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));                \
  if (out.library.name == nullptr) {                                                           \
    const char* err = dlerror();                                                               \
    out.reason = out.library.path + " lacks symbol " #name ": " + (err != nullptr ? err : ""); \
    return out;                                                                                \
  }
  ANYDEV_UCX_SYMBOLS(ANYDEV_UCX_RESOLVE_)
#undef ANYDEV_UCX_RESOLVE_
#define ANYDEV_UCX_RESOLVE_OPTIONAL_(name) \
  out.library.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));
  ANYDEV_UCX_OPTIONAL_SYMBOLS(ANYDEV_UCX_RESOLVE_OPTIONAL_)
#undef ANYDEV_UCX_RESOLVE_OPTIONAL_
  out.ok = true;
  return out;
}

}  // namespace

const UcxLibrary* ucx_library(std::string* reason) {
  static std::once_flag once;
  static Opened* opened = nullptr;  // lives for the process
  std::call_once(once, [] { opened = new Opened(open_library()); });
  if (!opened->ok) {
    if (reason != nullptr) *reason = opened->reason;
    return nullptr;
  }
  return &opened->library;
}

}  // namespace anydev::core::transport
