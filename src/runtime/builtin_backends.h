// SPDX-License-Identifier: Apache-2.0
// Backends linked into libanydev.so. The registry treats them exactly like
// plugins: it calls their entry point and uses the table they return.
#ifndef ANYDEV_SRC_RUNTIME_BUILTIN_BACKENDS_H_
#define ANYDEV_SRC_RUNTIME_BUILTIN_BACKENDS_H_

#include <string_view>

#include "anydev/backend.h"

extern "C" anydev_status_t anydev_cpu_backend_entry(uint32_t core_abi_version,
                                                    const anydev_core_services_t* core,
                                                    const anydev_backend_table_t** out);

namespace anydev::core {

// One built-in backend: the name it is known by before it is probed (its
// table's name must match) and its entry point. Immutable.
struct BuiltinBackend {
  const char* name;
  anydev_backend_entry_fn entry;
};

inline constexpr BuiltinBackend kBuiltinBackends[] = {
    {"cpu", &anydev_cpu_backend_entry},
};

// The built-in backend of that name, or nullptr.
inline const BuiltinBackend* find_builtin_backend(std::string_view name) {
  for (const BuiltinBackend& builtin : kBuiltinBackends) {
    if (name == builtin.name) return &builtin;
  }
  return nullptr;
}

}  // namespace anydev::core

#endif  // ANYDEV_SRC_RUNTIME_BUILTIN_BACKENDS_H_
