// Opens one backend plugin and validates the table it hands over.
//
// A plugin is opened with RTLD_NOW | RTLD_LOCAL so that its symbols (and its
// vendor library's) never clash with the application's. Every failure --
// dlopen, a missing entry point, an entry that fails, a table of the wrong
// ABI version, size or name, a required entry left NULL -- comes back as a
// message naming the file and the cause; nothing here is fatal. Thread-safe
// (dlopen is), but the registry calls it under its lock anyway.
#ifndef ANYDEV_SRC_PLUGIN_LOADER_H_
#define ANYDEV_SRC_PLUGIN_LOADER_H_

#include <string>
#include <string_view>

#include "anydev/backend.h"

namespace anydev::core {

struct PluginLoad {
  const anydev_backend_table_t* table = nullptr;  // null on failure
  void* library = nullptr;                        // dlopen handle; never closed once loaded
  std::string error;                              // why it failed
};

// Checks a table from any source (plugin or built in): version, size, name,
// required entries. Returns "" when it is usable.
std::string validate_backend_table(const anydev_backend_table_t* table,
                                   std::string_view expected_name);

PluginLoad load_plugin(const std::string& path, std::string_view expected_name,
                       const anydev_core_services_t* services);

// "libanydev-backend-<name>.so"
std::string plugin_file_name(std::string_view backend_name);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_PLUGIN_LOADER_H_
