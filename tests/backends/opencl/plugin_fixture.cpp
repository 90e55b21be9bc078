// SPDX-License-Identifier: Apache-2.0
#include "plugin_fixture.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace anydev_test {
namespace {

thread_local std::string t_last_error;

anydev_status_t fake_set_error(anydev_status_t status, const char* message) {
  t_last_error = message != nullptr ? message : "";
  return status;
}

void fake_log(anydev_log_level_t, const char*, const char*) {}

const char* fake_getenv(const char* name) { return std::getenv(name); }

const anydev_core_services_t kServices = {sizeof(anydev_core_services_t), fake_set_error, fake_log,
                                          fake_getenv};

template <class Fn>
void resolve(void* library, const char* name, Fn* out) {
  *out = library != nullptr ? reinterpret_cast<Fn>(dlsym(library, name)) : nullptr;
}

Plugin* load() {
  auto* plugin = new Plugin();  // lives for the process
  void* module = dlopen(ANYDEV_OPENCL_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    plugin->init_message = dlerror();
    return plugin;
  }
  auto entry = reinterpret_cast<anydev_backend_entry_fn>(dlsym(module, "anydev_backend_entry"));
  if (entry == nullptr ||
      entry(ANYDEV_BACKEND_ABI_VERSION, &kServices, &plugin->table) != ANYDEV_SUCCESS) {
    plugin->init_message = "anydev_backend_entry failed: " + t_last_error;
    plugin->table = nullptr;
    return plugin;
  }
  const char* library = nullptr;
  plugin->init_status = plugin->table->initialize(plugin->table->instance, &kServices, &library);
  if (plugin->init_status != ANYDEV_SUCCESS) {
    plugin->init_message = t_last_error;
    return plugin;
  }
  plugin->table->device_count(plugin->table->instance, &plugin->devices);
  void* cl = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  resolve(cl, "clGetDeviceInfo", &plugin->cl.get_device_info);
  resolve(cl, "clCreateCommandQueue", &plugin->cl.create_command_queue);
  resolve(cl, "clReleaseCommandQueue", &plugin->cl.release_command_queue);
  resolve(cl, "clCreateUserEvent", &plugin->cl.create_user_event);
  resolve(cl, "clSetUserEventStatus", &plugin->cl.set_user_event_status);
  resolve(cl, "clReleaseEvent", &plugin->cl.release_event);
  resolve(cl, "clEnqueueBarrierWithWaitList", &plugin->cl.enqueue_barrier);
  resolve(cl, "clFlush", &plugin->cl.flush);
  return plugin;
}

}  // namespace

const Plugin& open_plugin() {
  static Plugin* plugin = load();
  return *plugin;
}

std::string last_error() { return t_last_error; }

}  // namespace anydev_test
