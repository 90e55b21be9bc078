// SPDX-License-Identifier: Apache-2.0
// The driver handle and the live-handle registries of the face; devices are
// the core's.
#include <map>
#include <memory>
#include <mutex>

#include "emu_lz.h"

namespace anydev_lz_emu {
namespace {

struct Registry {
  std::mutex mutex;
  int driver = 0;  // its address is the ze_driver_handle_t
  std::map<void*, std::unique_ptr<Context>> contexts;
  std::map<void*, std::shared_ptr<EventPool>> pools;
  std::map<void*, EventRef> events;
  std::map<void*, CommandListRef> lists;
  std::map<void*, CommandQueueRef> queues;
};

Registry& registry() {
  static auto* r = new Registry;  // never destroyed (emu_lz.h)
  return *r;
}

template <class Map>
typename Map::mapped_type find_in(Map& map, void* key) {
  const std::lock_guard<std::mutex> lock(registry().mutex);
  const auto it = map.find(key);
  if (it == map.end()) return {};
  return it->second;
}

template <class Map>
bool remove_from(Map& map, void* key) {
  const std::lock_guard<std::mutex> lock(registry().mutex);
  return map.erase(key) == 1;
}

template <class Map, class Ref>
void* add_to(Map& map, Ref ref) {
  const std::lock_guard<std::mutex> lock(registry().mutex);
  void* key = ref.get();
  map.emplace(key, std::move(ref));
  return key;
}

}  // namespace

ze_result_t initialize(ze_init_flags_t flags) {
  if ((flags & ~(ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY)) != 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_ENUMERATION, "zeInit: unknown flags");
  }
  if (flags == ZE_INIT_FLAG_VPU_ONLY) return ZE_RESULT_ERROR_UNINITIALIZED;  // a GPU driver
  // No device configured or a forked child: the driver does not initialize,
  // and the loader drops it (and unloads it: so nothing of the core is
  // created first, which would be left behind unreachable).
  if (core::get_config().devices == 0) return ZE_RESULT_ERROR_UNINITIALIZED;
  return to_ze(core::initialize(0));
}

bool initialized() { return core::check_initialized() == core::Status::success; }

ze_driver_handle_t driver_handle() {
  return reinterpret_cast<ze_driver_handle_t>(&registry().driver);
}
bool driver_matches(ze_driver_handle_t handle) { return handle == driver_handle(); }

ze_device_handle_t device_handle(int index) {
  return reinterpret_cast<ze_device_handle_t>(core::device_at(index));
}

core::Device* find_device(ze_device_handle_t handle) {
  for (int i = 0; i < core::device_count(); ++i) {
    if (device_handle(i) == handle) return core::device_at(i);
  }
  return nullptr;
}

Context* find_context(ze_context_handle_t handle) {
  const std::lock_guard<std::mutex> lock(registry().mutex);
  const auto it = registry().contexts.find(handle);
  return it == registry().contexts.end() ? nullptr : it->second.get();
}

ze_context_handle_t add_context(std::unique_ptr<Context> context) {
  return static_cast<ze_context_handle_t>(add_to(registry().contexts, std::move(context)));
}

bool remove_context(ze_context_handle_t handle) {
  const std::lock_guard<std::mutex> lock(registry().mutex);
  const auto it = registry().contexts.find(handle);
  if (it == registry().contexts.end()) return false;
  // The object stays (pools and lists may still name it), marked dead.
  it->second->live = false;
  static auto* graveyard = new std::vector<std::unique_ptr<Context>>;
  graveyard->push_back(std::move(it->second));
  registry().contexts.erase(it);
  return true;
}

std::shared_ptr<EventPool> find_event_pool(ze_event_pool_handle_t handle) {
  return find_in(registry().pools, handle);
}
ze_event_pool_handle_t add_event_pool(const std::shared_ptr<EventPool>& pool) {
  return static_cast<ze_event_pool_handle_t>(add_to(registry().pools, pool));
}
bool remove_event_pool(ze_event_pool_handle_t handle) {
  return remove_from(registry().pools, handle);
}

EventRef find_event(ze_event_handle_t handle) { return find_in(registry().events, handle); }
ze_event_handle_t add_event(const EventRef& event) {
  return static_cast<ze_event_handle_t>(add_to(registry().events, event));
}
bool remove_event(ze_event_handle_t handle) { return remove_from(registry().events, handle); }

CommandListRef find_command_list(ze_command_list_handle_t handle) {
  return find_in(registry().lists, handle);
}
ze_command_list_handle_t add_command_list(const CommandListRef& list) {
  return static_cast<ze_command_list_handle_t>(add_to(registry().lists, list));
}
bool remove_command_list(ze_command_list_handle_t handle) {
  return remove_from(registry().lists, handle);
}

CommandQueueRef find_command_queue(ze_command_queue_handle_t handle) {
  return find_in(registry().queues, handle);
}
ze_command_queue_handle_t add_command_queue(const CommandQueueRef& queue) {
  return static_cast<ze_command_queue_handle_t>(add_to(registry().queues, queue));
}
bool remove_command_queue(ze_command_queue_handle_t handle) {
  return remove_from(registry().queues, handle);
}

}  // namespace anydev_lz_emu
