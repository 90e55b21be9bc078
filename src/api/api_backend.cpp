// SPDX-License-Identifier: Apache-2.0
// C entry points: the backend list and device counts.
#include "anydev/anydev.h"
#include "api/api_common.h"
#include "runtime/device_selection.h"
#include "runtime/registry.h"

using namespace anydev::core;

extern "C" {

anydev_status_t anydev_backend_count(size_t* count) {
  static constexpr const char* op = "anydev_backend_count";
  ANYDEV_REQUIRE_ARG(op, count);
  return guarded(op, [&] {
    *count = Registry::instance().probe_all().size();
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_backend_info(size_t index, anydev_backend_info_t* info) {
  static constexpr const char* op = "anydev_backend_info";
  ANYDEV_REQUIRE_ARG(op, info);
  return guarded(op, [&] {
    const std::vector<const Backend*> all = Registry::instance().probe_all();
    if (index >= all.size()) {
      return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "index ", index, " is past the last of ",
                  all.size(), " backends");
    }
    if (info->struct_size < sizeof(anydev_backend_info_t)) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "info->struct_size is ", info->struct_size,
                  ", expected at least ", sizeof(anydev_backend_info_t));
    }
    const Backend& backend = *all[index];
    info->name = backend.name.c_str();
    info->available = backend.available ? 1 : 0;
    info->reason = backend.reason.c_str();
    info->device_count = backend.device_count();
    info->library = backend.library.c_str();
    return ANYDEV_SUCCESS;
  });
}

int anydev_device_count(const char* api) {
  try {
    const Backend* backend = api == nullptr ? default_backend() : Registry::instance().probe(api);
    return backend != nullptr ? backend->device_count() : 0;
  } catch (...) {
    return 0;  // documented: never fails
  }
}

const char* anydev_plugin_path(void) { return Registry::instance().plugin_path().c_str(); }

}  // extern "C"
