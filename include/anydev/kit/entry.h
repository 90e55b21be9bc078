// SPDX-License-Identifier: Apache-2.0
// The checks every backend's entry point makes, answered the same way by all:
// a core that speaks another backend ABI gets ANYDEV_ERROR_BACKEND_UNAVAILABLE
// (as the core answers a plugin of another ABI), naming both versions; a null
// output gets ANYDEV_ERROR_INVALID_ARGUMENT. Stateless, thread-safe.
#ifndef ANYDEV_KIT_ENTRY_H_
#define ANYDEV_KIT_ENTRY_H_

#include <cstdint>

#include "anydev/backend.h"
#include "anydev/kit/cat.h"
#include "anydev/kit/services.h"

namespace anydev::kit {

// ANYDEV_SUCCESS when the entry point may hand out its table; otherwise the
// error, recorded through `services`.
inline anydev_status_t check_entry(const core_services& services, const char* backend_name,
                                   std::uint32_t core_abi_version,
                                   const anydev_backend_table_t* const* out) {
  if (core_abi_version != ANYDEV_BACKEND_ABI_VERSION) {
    return services.set_error(
        ANYDEV_ERROR_BACKEND_UNAVAILABLE,
        cat(backend_name, " backend entry: the core speaks backend ABI version ", core_abi_version,
            ", the ", backend_name, " backend was built for version ", ANYDEV_BACKEND_ABI_VERSION));
  }
  if (out == nullptr) {
    return services.set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                              cat(backend_name, " backend entry: the output is NULL"));
  }
  return ANYDEV_SUCCESS;
}

// The whole of a backend's entry point: stores the core's services (when
// given), makes check_entry's checks and hands out `table`.
inline anydev_status_t backend_entry(core_services& services, const anydev_backend_table_t& table,
                                     std::uint32_t core_abi_version,
                                     const anydev_core_services_t* core,
                                     const anydev_backend_table_t** out) {
  if (core != nullptr) services.store(core);
  if (anydev_status_t s = check_entry(services, table.name, core_abi_version, out);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  *out = &table;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::kit

// Defines the extern "C" entry point `entry_name` (with `attributes`, e.g.
// ANYDEV_BACKEND_EXPORT for a plugin, nothing for a built-in backend) of the
// backend whose namespace anydev::<ns> holds g_core_services (from
// ANYDEV_KIT_BACKEND_SERVICES) and its table kTable.
#define ANYDEV_KIT_BACKEND_ENTRY(attributes, entry_name, ns)                                 \
  extern "C" attributes anydev_status_t entry_name(uint32_t core_abi_version,                \
                                                   const anydev_core_services_t* core,       \
                                                   const anydev_backend_table_t** out) {     \
    return ::anydev::kit::backend_entry(::anydev::ns::g_core_services, ::anydev::ns::kTable, \
                                        core_abi_version, core, out);                        \
  }

#endif  // ANYDEV_KIT_ENTRY_H_
