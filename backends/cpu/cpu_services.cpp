#include "cpu_services.h"

#include <atomic>
#include <cstddef>

namespace anydev::cpu {
namespace {

std::atomic<const anydev_core_services_t*> g_core{nullptr};

// True when the core's table is recent enough to hold the field that ends at
// `field_end` (the table may come from an older core with fewer entries).
bool has_field(const anydev_core_services_t* core, std::size_t field_end) {
  return core != nullptr && core->struct_size >= field_end;
}

constexpr std::size_t kSetErrorEnd =
    offsetof(anydev_core_services_t, set_error) + sizeof(anydev_core_services_t::set_error);
constexpr std::size_t kLogEnd =
    offsetof(anydev_core_services_t, log) + sizeof(anydev_core_services_t::log);
constexpr std::size_t kGetenvEnd =
    offsetof(anydev_core_services_t, getenv) + sizeof(anydev_core_services_t::getenv);

}  // namespace

void set_core_services(const anydev_core_services_t* core) {
  g_core.store(core, std::memory_order_release);
}

anydev_status_t set_error(anydev_status_t status, const std::string& message) {
  const anydev_core_services_t* core = g_core.load(std::memory_order_acquire);
  if (has_field(core, kSetErrorEnd) && core->set_error != nullptr) {
    core->set_error(status, message.c_str());
  }
  return status;
}

void log(anydev_log_level_t level, const std::string& message) {
  const anydev_core_services_t* core = g_core.load(std::memory_order_acquire);
  if (has_field(core, kLogEnd) && core->log != nullptr) {
    core->log(level, kBackendName, message.c_str());
  }
}

const char* get_env(const char* name) {
  const anydev_core_services_t* core = g_core.load(std::memory_order_acquire);
  if (has_field(core, kGetenvEnd) && core->getenv != nullptr) {
    return core->getenv(name);
  }
  return nullptr;
}

}  // namespace anydev::cpu
