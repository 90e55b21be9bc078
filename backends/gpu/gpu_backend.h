// SPDX-License-Identifier: Apache-2.0
// Initialization and device queries of a GPU backend: initialize (the
// library variable, the candidates, the symbols, the API's start and device
// queries, the pools), device_count, device_props and memory_info.
// initialize runs once, under the core's registry lock; the others only read
// the state it leaves and are thread-safe.
#ifndef ANYDEV_BACKENDS_GPU_GPU_BACKEND_H_
#define ANYDEV_BACKENDS_GPU_GPU_BACKEND_H_

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "anydev/kit/capabilities.h"
#include "anydev/kit/device_props.h"
#include "anydev/kit/library.h"
#include "anydev/kit/structs.h"
#include "gpu_pool.h"
#include "gpu_state.h"

namespace anydev::gpu {

// The file the dynamic loader opened for `library`, or `fallback`.
inline std::string opened_path(void* library, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

// Api::kDefaultLibraries as "a, b or c".
template <class Api>
std::string default_libraries() {
  std::string text;
  for (const char* const* name = Api::kDefaultLibraries; *name != nullptr; ++name) {
    if (!text.empty()) text += name[1] == nullptr ? " or " : ", ";
    text += *name;
  }
  return text;
}

// Reads the pools variable: unset, "1": use pools where supported; "0": never.
template <class Api>
anydev_status_t memory_pools_allowed(bool* allowed) {
  const char* value = services<Api>.get_env(Api::kPoolsVariable);
  if (value == nullptr || std::strcmp(value, "1") == 0) {
    *allowed = true;
  } else if (std::strcmp(value, "0") == 0) {
    *allowed = false;
  } else {
    return report_error<Api>(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                             value[0] == '\0'
                                 ? cat(Api::kPoolsVariable, " is set but empty (expected 0 or 1)")
                                 : cat(Api::kPoolsVariable, "=\"", value, "\" is neither 0 nor 1"));
  }
  return ANYDEV_SUCCESS;
}

// Opens the library the variable names, else the first default that dlopen
// accepts; then resolves its symbols (Api::load). Sets *path to what was
// asked for (every default, when none opened).
template <class Api>
anydev_status_t open_driver(const char* env, typename Api::driver_t* drv, std::string* path) {
  std::string failures;
  void* library = nullptr;
  const char* const single[] = {env, nullptr};
  for (const char* const* name = env != nullptr ? single : Api::kDefaultLibraries;
       *name != nullptr && library == nullptr; ++name) {
    std::string why;
    library = kit::open_library(*name, Api::kLibraryWhat, Api::kLibraryHint, &why);
    if (library != nullptr) *path = *name;
    if (library == nullptr) failures += cat(failures.empty() ? "" : "; ", why);
  }
  if (library == nullptr) {
    if (env == nullptr) *path = default_libraries<Api>();
    return report_error<Api>(ANYDEV_ERROR_BACKEND_UNAVAILABLE, failures);
  }
  std::string reason;
  if (!Api::load(library, *path, opened_path(library, *path), drv, &reason)) {
    dlclose(library);
    return report_error<Api>(ANYDEV_ERROR_BACKEND_UNAVAILABLE, reason);
  }
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t initialize(const anydev_core_services_t* core, const char** library) {
  BackendState<Api>& st = state<Api>();
  services<Api>.store(core);
  static std::string* library_text = new std::string;  // valid for the life of the process
  // Sets the text `library` points to (the pointer follows the string's buffer).
  auto publish = [library](std::string text) {
    *library_text = std::move(text);
    if (library != nullptr) *library = library_text->c_str();
  };
  const char* env = services<Api>.get_env(Api::kLibraryVariable);
  publish(env != nullptr ? env : default_libraries<Api>());
  if (env != nullptr && env[0] == '\0') {
    // Refused like every malformed variable (docs/environment.md).
    return report_error<Api>(
        ANYDEV_ERROR_BACKEND_UNAVAILABLE,
        cat(Api::kLibraryVariable, " is set but empty: expected the path or file name of the ",
            Api::kLibraryWhat, " (unset it for ", default_libraries<Api>(), ")"));
  }
  bool pools_allowed = true;
  if (const anydev_status_t s = memory_pools_allowed<Api>(&pools_allowed); s != ANYDEV_SUCCESS) {
    return s;
  }
  std::string path;
  const anydev_status_t opened = open_driver<Api>(env, &st.driver, &path);
  publish(path);
  if (opened != ANYDEV_SUCCESS) return opened;
  const auto& drv = st.driver;
  if (drv.opened_path != path) publish(cat(path, " (", drv.opened_path, ")"));

  int count = 0;
  const anydev_status_t started = Api::start(drv, &count);
  st.initialized_pid = getpid();
  if (started != ANYDEV_SUCCESS) return started;
  std::vector<std::unique_ptr<DeviceState<Api>>> devices;
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<DeviceState<Api>>();
    d->index = i;
    bool pools = false;
    if (const anydev_status_t s = Api::query_device(i, d.get(), &pools); s != ANYDEV_SUCCESS) {
      return s;
    }
    d->memory_pools = pools_allowed && pools && pool_entry_points_present(drv);
    devices.push_back(std::move(d));
  }
  // Only once nothing can fail any more: initialize never leaves a pool behind.
  for (const auto& d : devices) {
    create_device_pool(d.get());
    log<Api>(ANYDEV_LOG_DEBUG, cat("device ", d->index, ": ", d->name, ", ", d->description));
  }
  st.devices = std::move(devices);
  log<Api>(ANYDEV_LOG_INFO, cat(count, " ", Api::kVendor, " device", count == 1 ? "" : "s",
                                " through ", drv.opened_path, " (", Api::library_text(drv), ")"));
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t device_count(int* count) {
  if (count == nullptr) return null_argument<Api>("device_count", "out");
  *count = static_cast<int>(state<Api>().devices.size());
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t device_props(int device, anydev_bk_device_props_t* props) {
  using kit::copy_text;
  using kit::has_field;
  if (props == nullptr) return null_argument<Api>("device_props", "props");
  if (const anydev_status_t s = check_device<Api>(device, "device_props"); s != ANYDEV_SUCCESS) {
    return s;
  }
  const DeviceState<Api>& d = device_state<Api>(device);
  kit::set_basic_device_props(props, d.name, d.description, d.total_memory, false);
  kit::device_capabilities caps;
  caps.dlpack_device_type = Api::kDLDevice;
  caps.dlpack_host_device_type = Api::kDLHost;
  caps.dlpack_device_id = device;
  // Without memory pools memory_free_async declines: the core's
  // stream-ordered release frees the memory.
  caps.stream_ordered_free = d.memory_pools;
  caps.peer_access = state<Api>().devices.size() > 1;
  kit::set_capabilities(props, caps);
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t memory_info(int device, std::size_t* free_bytes, std::size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr)
    return null_argument<Api>("memory_info", "out");
  typename Api::scope scope;
  if (const anydev_status_t s = scope.enter(device, "memory_info"); s != ANYDEV_SUCCESS) return s;
  std::size_t free = 0;
  std::size_t total = 0;
  const auto r = driver<Api>().MemGetInfo(&free, &total);
  if (r != Api::kSuccess) {
    return report_failure<Api>(r, Api::driver_t::names::MemGetInfo,
                               cat("memory_info of ", Api::kName, " device ", device));
  }
  *free_bytes = free;
  *total_bytes = total;
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_BACKEND_H_
