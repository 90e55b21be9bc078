// The core's services (set_error, log, getenv) as the opencl backend uses
// them, plus `cat` for building messages.
//
// The entry point stores the core's table once; it is owned by the core and
// lives for the whole process. Every function here is thread-safe; before a
// table is stored, errors are only returned and logs are dropped.
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_SERVICES_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_SERVICES_H_

#include <sstream>
#include <string>

#include "anydev/backend.h"

namespace anydev::opencl {

inline constexpr const char* kBackendName = "opencl";

void set_core_services(const anydev_core_services_t* core);

// Records the calling thread's last error through the core; returns `status`.
anydev_status_t set_error(anydev_status_t status, const std::string& message);

void log(anydev_log_level_t level, const std::string& message);

// The variable's value through the core's getenv (nullptr when unset).
const char* get_env(const char* name);

// Concatenates anything printable with operator<<.
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_SERVICES_H_
