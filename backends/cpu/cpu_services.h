// The core's services (set_error, log, getenv) as the cpu backend sees them.
//
// The entry point stores the core's table once; every other file reports
// errors and logs through these functions, which are thread-safe and do
// nothing harmful when no table is stored yet (errors are then only returned,
// logs dropped). The table itself is owned by the core and lives for the
// whole process.
#ifndef ANYDEV_BACKENDS_CPU_CPU_SERVICES_H_
#define ANYDEV_BACKENDS_CPU_CPU_SERVICES_H_

#include <string>

#include "anydev/backend.h"

namespace anydev::cpu {

// The name this backend gives itself in its table and in its logs.
inline constexpr const char* kBackendName = "cpu";

void set_core_services(const anydev_core_services_t* core);

// Records the calling thread's last error through the core; returns `status`.
// Cold: paths that report an error are moved out of the hot code's lines.
[[gnu::cold]] anydev_status_t set_error(anydev_status_t status, const std::string& message);

void log(anydev_log_level_t level, const std::string& message);

// The variable's value through the core's getenv, or nullptr when unset (or
// when the core offers no getenv).
const char* get_env(const char* name);

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_SERVICES_H_
