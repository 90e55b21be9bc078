// The checks every backend's entry point makes, answered the same way by all:
// a core that speaks another backend ABI gets ANYDEV_ERROR_BACKEND_UNAVAILABLE
// (as the core answers a plugin of another ABI), naming both versions; a null
// output gets ANYDEV_ERROR_INVALID_ARGUMENT. Stateless, thread-safe.
#ifndef ANYDEV_BACKENDS_COMMON_KIT_ENTRY_H_
#define ANYDEV_BACKENDS_COMMON_KIT_ENTRY_H_

#include <cstdint>

#include "anydev/backend.h"
#include "kit_cat.h"
#include "kit_services.h"

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

}  // namespace anydev::kit

#endif  // ANYDEV_BACKENDS_COMMON_KIT_ENTRY_H_
