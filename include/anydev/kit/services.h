// SPDX-License-Identifier: Apache-2.0
// The core's services (set_error, log, getenv) as a backend sees them.
//
// kit::core_services holds the core's table, stored once by the backend's
// entry point (or initialize); the table is the core's and lives for the
// whole process. Every member is thread-safe; before a table is stored, or
// when the core's table is too short or lacks an entry, errors are only
// returned, logs dropped and getenv answers nullptr.
//
// ANYDEV_KIT_BACKEND_SERVICES("name") declares, in the backend's namespace,
// kBackendName, its one core_services and the free functions the backend's
// files call: set_core_services, set_error, log, get_env.
#ifndef ANYDEV_KIT_SERVICES_H_
#define ANYDEV_KIT_SERVICES_H_

#include <atomic>
#include <string>

#include "anydev/backend.h"
#include "anydev/kit/structs.h"

namespace anydev::kit {

class core_services {
 public:
  explicit constexpr core_services(const char* backend_name) : name_(backend_name) {}
  core_services(const core_services&) = delete;
  core_services& operator=(const core_services&) = delete;

  void store(const anydev_core_services_t* core) { core_.store(core, std::memory_order_release); }

  // Records the calling thread's last error through the core; returns `status`.
  anydev_status_t set_error(anydev_status_t status, const std::string& message) const {
    const anydev_core_services_t* core = core_.load(std::memory_order_acquire);
    if (auto fn = field_or(core, &anydev_core_services_t::set_error, {}))
      fn(status, message.c_str());
    return status;
  }

  void log(anydev_log_level_t level, const std::string& message) const {
    const anydev_core_services_t* core = core_.load(std::memory_order_acquire);
    if (auto fn = field_or(core, &anydev_core_services_t::log, {})) {
      fn(level, name_, message.c_str());
    }
  }

  // The variable's value through the core's getenv, or nullptr when unset
  // (or when the core offers no getenv).
  const char* get_env(const char* name) const {
    const anydev_core_services_t* core = core_.load(std::memory_order_acquire);
    if (auto fn = field_or(core, &anydev_core_services_t::getenv, {})) return fn(name);
    return nullptr;
  }

 private:
  const char* name_;
  std::atomic<const anydev_core_services_t*> core_{nullptr};
};

}  // namespace anydev::kit

// set_error is cold: paths that report an error move out of the hot code.
#define ANYDEV_KIT_BACKEND_SERVICES(backend_name)                              \
  inline constexpr const char* kBackendName = backend_name;                    \
  inline ::anydev::kit::core_services g_core_services{backend_name};           \
  inline void set_core_services(const anydev_core_services_t* core) {          \
    g_core_services.store(core);                                               \
  }                                                                            \
  [[gnu::cold]] inline anydev_status_t set_error(anydev_status_t status,       \
                                                 const std::string& message) { \
    return g_core_services.set_error(status, message);                         \
  }                                                                            \
  inline void log(anydev_log_level_t level, const std::string& message) {      \
    g_core_services.log(level, message);                                       \
  }                                                                            \
  inline const char* get_env(const char* name) { return g_core_services.get_env(name); }

#endif  // ANYDEV_KIT_SERVICES_H_
