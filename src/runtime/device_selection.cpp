// SPDX-License-Identifier: Apache-2.0
#include "runtime/device_selection.h"

#include <algorithm>
#include <vector>

#include "runtime/selection.h"
#include "support/env_list.h"
#include "support/environment.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core {
namespace {

// In the default order (nothing named), a backend's device that is the
// host's own processor (an OpenCL CPU device) is passed over: the default
// falls through to accelerators and then to anydev's cpu backend.
bool passed_over_by_default(const Backend& backend, int device, bool default_order) {
  return default_order && !backend.builtin && backend.devices[device].host_processor;
}

// The candidates in preference order, or an error status (last error set).
anydev_status_t candidates(const char* op, std::vector<BackendChoice>* out, std::string* source,
                           bool* default_order) {
  Registry& registry = Registry::instance();
  const auto list = env(kEnvBackend);
  *default_order = !list;
  if (!list) {
    *source = "the default order (ANYDEV_BACKEND unset)";
    for (const std::string& name : default_backend_order()) out->push_back({name, 0, false});
    return ANYDEV_SUCCESS;
  }
  *source = cat("ANYDEV_BACKEND=", quoted(*list));  // escaped: never a raw control character
  const std::vector<std::string> known = registry.known_names();
  BackendListParse parsed = parse_backend_list(*list, known);
  if (!parsed.ok()) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, parsed.error, "\n", registry.describe_known());
  }
  *out = std::move(parsed.entries);
  return ANYDEV_SUCCESS;
}

}  // namespace

anydev_status_t select_device(const char* op, const char* api, int device, const Backend** backend,
                              int* device_index) {
  Registry& registry = Registry::instance();
  std::vector<BackendChoice> choices;
  std::string source;
  bool default_order = false;
  if (api != nullptr) {
    const std::vector<std::string> known = registry.known_names();
    if (std::find(known.begin(), known.end(), std::string(api)) == known.end()) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown backend \"", api, "\"\n",
                  registry.describe_known());
    }
    choices.push_back({api, device < 0 ? 0 : device, true});
    source = cat("api \"", api, "\"");
  } else {
    if (anydev_status_t status = candidates(op, &choices, &source, &default_order);
        status != ANYDEV_SUCCESS) {
      return status;
    }
    if (device >= 0) {  // an explicit index wins over the list's
      for (BackendChoice& choice : choices) choice.device = device;
    }
  }
  std::string why;
  bool only_index_failures = true;
  for (const BackendChoice& choice : choices) {
    const Backend* candidate = registry.probe(choice.name);
    if (candidate->available && choice.device < candidate->device_count() &&
        !passed_over_by_default(*candidate, choice.device, default_order)) {
      *backend = candidate;
      *device_index = choice.device;
      log(ANYDEV_LOG_INFO, cat(op, ": selected ", choice.name, ":", choice.device, " (",
                               candidate->devices[choice.device].name, ") from ", source));
      return ANYDEV_SUCCESS;
    }
    if (candidate->available && choice.device < candidate->device_count()) {
      why += cat("\n  ", choice.name, ": device ", choice.device,
                 " is the host processor; name it in ANYDEV_BACKEND to use it");
    } else if (candidate->available) {
      why +=
          cat("\n  ", choice.name, ": device index ", choice.device, " is past the last device (",
              candidate->device_count(), " device(s): 0..", candidate->device_count() - 1, ")");
    } else {
      only_index_failures = false;
      why += cat("\n  ", choice.name, ": unavailable: ", candidate->reason);
    }
  }
  return fail(only_index_failures ? ANYDEV_ERROR_OUT_OF_RANGE : ANYDEV_ERROR_BACKEND_UNAVAILABLE,
              op, "no device found for ", source, ":", why);
}

const Backend* default_backend() {
  std::vector<BackendChoice> choices;
  std::string source;
  bool default_order = false;
  const anydev_status_t saved_status = last_error_status();
  const std::string saved_message = last_error_message();
  const bool ok =
      candidates("anydev_device_count", &choices, &source, &default_order) == ANYDEV_SUCCESS;
  set_error(saved_status, saved_message);
  if (!ok) return nullptr;
  for (const BackendChoice& choice : choices) {
    const Backend* candidate = Registry::instance().probe(choice.name);
    if (candidate->available && !passed_over_by_default(*candidate, 0, default_order)) {
      return candidate;
    }
  }
  return nullptr;
}

}  // namespace anydev::core
