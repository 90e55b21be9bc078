#include "opencl_services.h"

#include <atomic>
#include <cstddef>

namespace anydev::opencl {
namespace {

std::atomic<const anydev_core_services_t*> g_core{nullptr};

// The core's table may come from an older core with fewer entries: a field
// is read only when the table is long enough to hold it.
template <class Field>
Field field(const anydev_core_services_t* core, Field anydev_core_services_t::*member,
            std::size_t offset) {
  if (core == nullptr || core->struct_size < offset + sizeof(Field)) return nullptr;
  return core->*member;
}

#define ANYDEV_CORE_FIELD(core, name) \
  field(core, &anydev_core_services_t::name, offsetof(anydev_core_services_t, name))

}  // namespace

void set_core_services(const anydev_core_services_t* core) {
  g_core.store(core, std::memory_order_release);
}

anydev_status_t set_error(anydev_status_t status, const std::string& message) {
  const anydev_core_services_t* core = g_core.load(std::memory_order_acquire);
  if (auto fn = ANYDEV_CORE_FIELD(core, set_error)) fn(status, message.c_str());
  return status;
}

void log(anydev_log_level_t level, const std::string& message) {
  const anydev_core_services_t* core = g_core.load(std::memory_order_acquire);
  if (auto fn = ANYDEV_CORE_FIELD(core, log)) fn(level, kBackendName, message.c_str());
}

const char* get_env(const char* name) {
  const anydev_core_services_t* core = g_core.load(std::memory_order_acquire);
  if (auto fn = ANYDEV_CORE_FIELD(core, getenv)) return fn(name);
  return nullptr;
}

}  // namespace anydev::opencl
