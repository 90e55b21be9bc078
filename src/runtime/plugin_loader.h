// SPDX-License-Identifier: Apache-2.0
// Opens one backend plugin and validates the table it hands over.
//
// A plugin is opened with RTLD_NOW | RTLD_LOCAL so that its symbols (and its
// vendor library's) never clash with the application's. Every failure --
// dlopen, a missing entry point, an entry that fails, a table of the wrong
// ABI version, size or name, a required entry left NULL -- comes back as a
// message naming the file and the cause; nothing here is fatal. Thread-safe
// (dlopen is), but the registry calls it under its lock anyway.
//
// Entries must not throw (backend.h), but a C++ plugin may: every call the
// loader and the registry make while loading and probing (entry point,
// initialize, device_count, device_props) goes through call_catching, and
// the exception becomes the backend's reason; a plugin whose entry point or
// initialize threw is closed again.
//
// Trust. A plugin runs with the process's privileges, so whoever may write
// its file or its folder chooses code the process runs: writable_plugin_reason
// says why a plugin must not be loaded for that reason (the registry refuses
// it unless ANYDEV_PLUGIN_ALLOW_WRITABLE=1).
//
// Table size (backend.h, "Growth within ABI 3"). Entries are appended to
// anydev_backend_table_t within one ABI version, only as optional ones, after
// the fixed fields; a plugin built against an older header hands over a
// shorter table (its struct_size), one built against a newer header a longer
// one. Any size that holds every required entry (kSmallestBackendTableBytes)
// is accepted. A shorter table than the core's is copied into a full-size one
// whose later entries are NULL (optional entries declined); of a longer one
// the core reads only its own entries. So the core and its layers only ever
// see full-size tables.
#ifndef ANYDEV_SRC_RUNTIME_PLUGIN_LOADER_H_
#define ANYDEV_SRC_RUNTIME_PLUGIN_LOADER_H_

#include <algorithm>
#include <cstddef>
#include <exception>
#include <string>
#include <string_view>

#include "anydev/backend.h"
#include "anydev/kit/table.h"
#include "support/status.h"

namespace anydev::core {

// The smallest struct_size a backend may report: the table through the end
// of its last required entry (every fixed field comes before the entries).
#define ANYDEV_REQUIRED_ENTRY_END_(name) \
  offsetof(anydev_backend_table_t, name) + sizeof(anydev_backend_table_t::name),
inline constexpr std::size_t kSmallestBackendTableBytes =
    std::max({ANYDEV_KIT_REQUIRED_ENTRIES(ANYDEV_REQUIRED_ENTRY_END_)});
#undef ANYDEV_REQUIRED_ENTRY_END_

// What load_plugin found. Owned by the caller; `table` is full-size (see
// above) and lives for the process.
struct PluginLoad {
  const anydev_backend_table_t* table = nullptr;  // null on failure
  void* library = nullptr;                        // dlopen handle (see above)
  std::string error;                              // why it failed
};

// Checks a table from any source (plugin or built in): version, size, name,
// required entries. Returns "" when it is usable.
std::string validate_backend_table(const anydev_backend_table_t* table,
                                   std::string_view expected_name);

PluginLoad load_plugin(const std::string& path, std::string_view expected_name,
                       const anydev_core_services_t* services);

// Empty when only its owner may write the plugin file at `path` and the
// folder that holds it (as named, and where symbolic links lead); otherwise
// why it must not be loaded, naming the file or folder and its mode. A path
// that cannot be examined gives "" (opening it will say why).
std::string writable_plugin_reason(const std::string& path);

// Runs `call`, a call into a backend while it is loaded or probed. An
// exception escaping it is caught (after which nothing of it is used, so
// that the plugin can be closed): *thrown becomes "threw: <what()>" or
// "threw an exception that is not a std::exception", and the result is
// ANYDEV_ERROR_INTERNAL.
template <class Call>
anydev_status_t call_catching(Call&& call, std::string* thrown) {
  try {
    return call();
  } catch (const std::exception& e) {
    *thrown = cat("threw: ", e.what());
  } catch (...) {
    *thrown = "threw an exception that is not a std::exception";
  }
  return ANYDEV_ERROR_INTERNAL;
}

// "libanydev-backend-<name>.so"
std::string plugin_file_name(std::string_view backend_name);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_RUNTIME_PLUGIN_LOADER_H_
