// SPDX-License-Identifier: Apache-2.0
// The driver, its devices and the live-handle registries.
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "emu_lz.h"

namespace anydev_lz_emu {
namespace {

struct Driver {
  int marker = 0;  // its address is the ze_driver_handle_t
};

struct Registry {
  std::mutex mutex;
  bool initialized = false;
  pid_t pid = 0;
  Driver driver;
  std::vector<std::unique_ptr<Device>> devices;
  std::map<void*, std::unique_ptr<Context>> contexts;
  std::map<void*, std::shared_ptr<EventPool>> pools;
  std::map<void*, EventRef> events;
  std::map<void*, CommandListRef> lists;
};

Registry& registry() {
  static auto* r = new Registry;  // never destroyed (emu_lz.h)
  return *r;
}

template <class Map>
typename Map::mapped_type find_in(Map& map, void* key) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = map.find(key);
  if (it == map.end()) return {};
  return it->second;
}

template <class Map>
bool remove_from(Map& map, void* key, typename Map::mapped_type* out) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = map.find(key);
  if (it == map.end()) return false;
  if (out != nullptr) *out = std::move(it->second);
  map.erase(it);
  return true;
}

}  // namespace

ze_result_t initialize(ze_init_flags_t flags) {
  if ((flags & ~(ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY)) != 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_ENUMERATION, "zeInit: unknown flags");
  }
  if (flags == ZE_INIT_FLAG_VPU_ONLY) return ZE_RESULT_ERROR_UNINITIALIZED;  // a GPU driver
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  if (r.initialized) {
    // A child of fork() cannot use the parent's driver state.
    return r.pid == getpid() ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_UNINITIALIZED;
  }
  for (int i = 0; i < config().devices; ++i) {
    auto d = std::make_unique<Device>();
    d->index = i;
    d->name = "anydev Level Zero emulator";
    r.devices.push_back(std::move(d));
  }
  r.pid = getpid();
  r.initialized = true;
  return ZE_RESULT_SUCCESS;
}

bool initialized() {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  return r.initialized && r.pid == getpid();
}

ze_driver_handle_t driver_handle() {
  return reinterpret_cast<ze_driver_handle_t>(&registry().driver);
}
bool driver_matches(ze_driver_handle_t handle) { return handle == driver_handle(); }
int device_count() { return static_cast<int>(registry().devices.size()); }
Device* device_at(int index) { return registry().devices[static_cast<std::size_t>(index)].get(); }

Device* find_device(ze_device_handle_t handle) {
  for (const auto& d : registry().devices) {
    if (reinterpret_cast<ze_device_handle_t>(d.get()) == handle) return d.get();
  }
  return nullptr;
}

Context* find_context(ze_context_handle_t handle) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.contexts.find(handle);
  return it == r.contexts.end() ? nullptr : it->second.get();
}

ze_context_handle_t add_context(std::unique_ptr<Context> context) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  void* key = context.get();
  r.contexts.emplace(key, std::move(context));
  return static_cast<ze_context_handle_t>(key);
}

bool remove_context(ze_context_handle_t handle) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.contexts.find(handle);
  if (it == r.contexts.end()) return false;
  // Kept allocated: blocks and pools may still name it. Only marked dead.
  it->second->live = false;
  it->second.release();
  r.contexts.erase(it);
  return true;
}

std::shared_ptr<EventPool> find_event_pool(ze_event_pool_handle_t handle) {
  return find_in(registry().pools, handle);
}
ze_event_pool_handle_t add_event_pool(const std::shared_ptr<EventPool>& pool) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.pools.emplace(pool.get(), pool);
  return reinterpret_cast<ze_event_pool_handle_t>(pool.get());
}
bool remove_event_pool(ze_event_pool_handle_t handle, std::shared_ptr<EventPool>* out) {
  return remove_from(registry().pools, handle, out);
}

EventRef find_event(ze_event_handle_t handle) { return find_in(registry().events, handle); }
ze_event_handle_t add_event(const EventRef& event) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.events.emplace(event.get(), event);
  return reinterpret_cast<ze_event_handle_t>(event.get());
}
bool remove_event(ze_event_handle_t handle, EventRef* out) {
  return remove_from(registry().events, handle, out);
}

CommandListRef find_command_list(ze_command_list_handle_t handle) {
  return find_in(registry().lists, handle);
}
ze_command_list_handle_t add_command_list(const CommandListRef& list) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.lists.emplace(list.get(), list);
  return reinterpret_cast<ze_command_list_handle_t>(list.get());
}
bool remove_command_list(ze_command_list_handle_t handle, CommandListRef* out) {
  return remove_from(registry().lists, handle, out);
}

}  // namespace anydev_lz_emu
