// SPDX-License-Identifier: Apache-2.0
#include "runtime/registry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "layers/layer_stack.h"
#include "runtime/builtin_backends.h"
#include "runtime/plugin_loader.h"
#include "runtime/registry_devices.h"
#include "runtime/selection.h"
#include "support/backend_calls.h"
#include "support/environment.h"
#include "support/fork_guard.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core {
namespace {

constexpr std::string_view kPluginPrefix = "libanydev-backend-";
constexpr std::string_view kPluginSuffix = ".so";

anydev_status_t services_set_error(anydev_status_t status, const char* message) {
  return set_error(status, message != nullptr ? message : "");
}

void services_log(anydev_log_level_t level, const char* backend, const char* message) {
  if (!log_enabled(level)) return;
  log(level, cat(backend ? backend : "?", ": ", message ? message : ""));
}

// secure_getenv, like the core's own variables (environment.h).
const char* services_getenv(const char* name) { return env_c_str(name); }

bool is_file(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool valid_backend_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// The folder anydev/ beside the binary that holds this code (libanydev.so).
std::string default_plugin_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&core_services), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  const std::filesystem::path library(info.dli_fname);
  return (library.parent_path() / "anydev").lexically_normal().string();
}

}  // namespace

const anydev_core_services_t* core_services() {
  static const anydev_core_services_t services = {
      sizeof(anydev_core_services_t),
      services_set_error,
      services_log,
      services_getenv,
  };
  return &services;
}

Registry& Registry::instance() {
  static ProcessObject<Registry> registry;  // never destroyed (see header)
  return registry.get([] { return new Registry(); },
                      [](Registry&) {
                        // A fork while another thread probes must not leave the
                        // child's lock held; the child handler also retires the
                        // backends that cannot survive fork().
                        pthread_atfork([] { instance().mutex_.lock(); },
                                       [] { instance().mutex_.unlock(); },
                                       [] { instance().after_fork_in_child(); });
                      });
}

namespace {
// Made when libanydev.so is loaded, before any thread can call into it, so
// that its fork handlers exist before the first probe.
[[maybe_unused]] const bool g_registry_made_at_load = (Registry::instance(), true);
}  // namespace

Registry::Registry() {
  for (const std::string& name : default_backend_order()) {
    auto backend = std::make_unique<Backend>();
    backend->name = name;
    backend->builtin = find_builtin_backend(name) != nullptr;
    backends_.push_back(std::move(backend));
  }
  // cpu is last in the default order but first in listings.
  std::rotate(backends_.begin(), backends_.end() - 1, backends_.end());
}

void Registry::discover_locked() {
  if (discovered_) return;
  discovered_ = true;
  if (const auto extra = env(kEnvPluginPath)) {
    std::size_t begin = 0;
    while (begin <= extra->size()) {
      const std::size_t colon = extra->find(':', begin);
      const std::string folder = extra->substr(begin, colon - begin);
      if (!folder.empty()) folders_.push_back(folder);
      if (colon == std::string::npos) break;
      begin = colon + 1;
    }
  }
  if (std::string folder = default_plugin_folder(); !folder.empty()) folders_.push_back(folder);
  for (const std::string& folder : folders_) {
    if (!plugin_path_.empty()) plugin_path_ += ':';
    plugin_path_ += folder;
  }
  for (const std::string& folder : folders_) {
    DIR* dir = opendir(folder.c_str());
    if (dir == nullptr) {
      log(ANYDEV_LOG_DEBUG, cat("plugin folder ", folder, " cannot be read; skipped"));
      continue;
    }
    std::vector<std::string> files;
    while (const dirent* entry = readdir(dir)) files.emplace_back(entry->d_name);
    closedir(dir);
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) {
      const std::string_view view(file);
      if (!view.starts_with(kPluginPrefix) || !view.ends_with(kPluginSuffix)) continue;
      const std::string_view name = view.substr(
          kPluginPrefix.size(), view.size() - kPluginPrefix.size() - kPluginSuffix.size());
      if (!valid_backend_name(name)) continue;
      const std::string path = folder + "/" + file;
      if (!is_file(path)) continue;
      Backend* backend = find_locked(name);
      if (backend == nullptr) {
        auto created = std::make_unique<Backend>();
        created->name = std::string(name);
        backend = created.get();
        backends_.push_back(std::move(created));
      }
      if (backend->builtin) {
        log(ANYDEV_LOG_WARN,
            cat("ignoring plugin ", path, ": backend \"", name, "\" is built into libanydev.so"));
        continue;
      }
      if (backend->plugin_path.empty()) {
        backend->plugin_path = path;
        log(ANYDEV_LOG_DEBUG, cat("found plugin ", path));
      } else {
        log(ANYDEV_LOG_DEBUG, cat("plugin ", path, " is shadowed by ", backend->plugin_path));
      }
    }
  }
}

Backend* Registry::find_locked(std::string_view name) {
  for (auto& backend : backends_) {
    if (backend->name == name) return backend.get();
  }
  return nullptr;
}

void Registry::probe_locked(Backend& backend) {
  if (backend.probed) return;
  backend.probed = true;
  const anydev_backend_table_t* table = nullptr;
  void* library = nullptr;  // the plugin's dlopen handle
  if (backend.builtin) {
    clear_last_error();
    std::string thrown;
    const anydev_status_t started = call_catching(
        [&] {
          return find_builtin_backend(backend.name)
              ->entry(ANYDEV_BACKEND_ABI_VERSION, core_services(), &table);
        },
        &thrown);
    if (started != ANYDEV_SUCCESS) {
      backend.reason = cat("built-in backend failed to start: ",
                           thrown.empty() ? last_error_message() : "its entry point " + thrown);
      return;
    }
    if (std::string why = validate_backend_table(table, backend.name); !why.empty()) {
      backend.reason = "built-in backend: " + why;
      return;
    }
  } else if (backend.plugin_path.empty()) {
    backend.reason =
        cat("not built: no ", plugin_file_name(backend.name), " in the plugin folders (",
            plugin_path_.empty() ? std::string("none") : plugin_path_, ")");
    return;
  } else {
    backend.library = backend.plugin_path;
    if (!plugin_allow_writable()) {
      if (std::string why = writable_plugin_reason(backend.plugin_path); !why.empty()) {
        backend.reason = why;
        log(ANYDEV_LOG_WARN, cat("backend ", backend.name, " unavailable: ", why));
        return;
      }
    }
    log(ANYDEV_LOG_INFO, cat("opening plugin ", backend.plugin_path));
    PluginLoad load = load_plugin(backend.plugin_path, backend.name, core_services());
    if (load.table == nullptr) {
      backend.reason = load.error;
      log(ANYDEV_LOG_WARN, cat("backend ", backend.name, " unavailable: ", load.error));
      return;
    }
    table = load.table;
    library = load.library;
  }
  // A malformed ANYDEV_FAULT/SYNC/TRACE/VALIDATE, or an injected plugin fault.
  if (std::string why = layers::probe_failure(backend.name); !why.empty()) {
    backend.reason = why;
    log(ANYDEV_LOG_WARN, cat("backend ", backend.name, " unavailable: ", why));
    return;
  }
  clear_last_error();
  const char* vendor_library = nullptr;
  std::string thrown;
  const anydev_status_t init = call_catching(
      [&] { return bk(table).initialize(core_services(), &vendor_library); }, &thrown);
  if (!thrown.empty()) {
    // Nothing of the plugin is kept (its table, its strings): it can go.
    backend.reason = cat(backend.plugin_path.empty() ? backend.name : backend.plugin_path,
                         ": initialize ", thrown);
    log(ANYDEV_LOG_WARN, cat("backend ", backend.name, " unavailable: ", backend.reason));
    if (library != nullptr) dlclose(library);
    return;
  }
  if (vendor_library != nullptr && *vendor_library != '\0') {
    backend.library = backend.library.empty() ? std::string(vendor_library)
                                              : backend.library + " -> " + vendor_library;
  }
  if (init != ANYDEV_SUCCESS) {
    backend.reason = last_error_message().empty()
                         ? cat("initialize failed (", anydev_status_name(init), ")")
                         : last_error_message();
    log(ANYDEV_LOG_INFO, cat("backend ", backend.name, " unavailable: ", backend.reason));
    return;
  }
  backend.initialized = true;
  backend.flags = table->flags;  // the backend's own table, before any layer wraps it
  if ((backend.flags & ANYDEV_BK_FLAG_SURVIVES_FORK) == 0) {
    backend.fork_reason =
        cat(backend.name,
            " was initialized before fork() in the parent process; its driver's threads and "
            "state do not exist in this child process, so it cannot be used here (use it only "
            "in the parent, or initialize it only after fork(); the table of backend ",
            backend.name, " lacks ANYDEV_BK_FLAG_SURVIVES_FORK)");
  }
  // From here the backend is initialized (it may run threads in its code):
  // whatever fails, the plugin stays loaded.
  int count = 0;
  clear_last_error();
  if (call_catching([&] { return bk(table).device_count(&count); }, &thrown) != ANYDEV_SUCCESS) {
    backend.reason = thrown.empty() ? cat("device_count failed: ", last_error_message())
                                    : cat("device_count ", thrown);
    return;
  }
  if (count <= 0) {
    backend.reason = "no device found";
    return;
  }
  if (count > kMaxDevicesPerBackend) {
    // Each device is probed under the registry's lock: a bogus count would
    // hold every thread's anydev call for as long as it takes.
    backend.reason = cat("device_count reported ", count, " devices; anydev accepts at most ",
                         kMaxDevicesPerBackend, " per backend (kMaxDevicesPerBackend)");
    log(ANYDEV_LOG_WARN, cat("backend ", backend.name, " unavailable: ", backend.reason));
    return;
  }
  for (int i = 0; i < count; ++i) {
    anydev_bk_device_props_t props{};
    props.struct_size = sizeof(props);
    clear_last_error();
    if (call_catching([&] { return bk(table).device_props(i, &props); }, &thrown) !=
        ANYDEV_SUCCESS) {
      backend.reason = thrown.empty() ? cat("device_props(", i, ") failed: ", last_error_message())
                                      : cat("device_props(", i, ") ", thrown);
      backend.devices.clear();
      return;
    }
    props.name[sizeof(props.name) - 1] = '\0';
    props.description[sizeof(props.description) - 1] = '\0';
    if (std::string why = check_capabilities(i, props); !why.empty()) {
      backend.reason = why;
      backend.devices.clear();
      return;
    }
    backend.devices.push_back(device_record(props));
  }
  clear_last_error();
  // The layers the environment asks for (none: the table itself).
  backend.table = layers::wrap_backend(table);
  backend.available = true;
  log(ANYDEV_LOG_INFO, cat("backend ", backend.name, " available with ", count, " device(s)"));
}

const Backend* Registry::probe_until(const std::function<bool(const Backend&)>& wanted) {
  std::lock_guard lock(mutex_);
  discover_locked();
  for (auto& backend : backends_) {
    probe_locked(*backend);
    if (backend->available && wanted(*backend)) return backend.get();
  }
  return nullptr;
}

void Registry::after_fork_in_child() noexcept {
  // Only this thread exists in the child: the backends may change here.
  for (auto& backend : backends_) {
    if (!backend->initialized || (backend->flags & ANYDEV_BK_FLAG_SURVIVES_FORK) != 0) continue;
    if (backend->fork_reason.empty()) continue;  // already retired by an earlier fork
    backend->available = false;
    backend->reason.swap(backend->fork_reason);
    backend->fork_reason.clear();
  }
  mutex_.unlock();
}

std::vector<std::string> Registry::known_names() {
  std::lock_guard lock(mutex_);
  discover_locked();
  std::vector<std::string> names;
  for (const auto& backend : backends_) names.push_back(backend->name);
  return names;
}

const Backend* Registry::probe(std::string_view name) {
  std::lock_guard lock(mutex_);
  discover_locked();
  Backend* backend = find_locked(name);
  if (backend != nullptr) probe_locked(*backend);
  return backend;
}

std::vector<const Backend*> Registry::probe_all() {
  std::lock_guard lock(mutex_);
  discover_locked();
  std::vector<const Backend*> all;
  for (auto& backend : backends_) {
    probe_locked(*backend);
    all.push_back(backend.get());
  }
  return all;
}

const std::string& Registry::plugin_path() {
  std::lock_guard lock(mutex_);
  discover_locked();
  return plugin_path_;
}

std::string Registry::describe_known() {
  std::lock_guard lock(mutex_);
  discover_locked();
  std::string out = "known backends:";
  for (const auto& backend : backends_) {
    out += cat("\n  ", backend->name, ": ");
    if (backend->probed) {
      out += backend->available ? cat("available (", backend->devices.size(), " device(s))")
                                : "unavailable: " + backend->reason;
    } else if (backend->builtin) {
      out += "built in (not probed)";
    } else if (backend->plugin_path.empty()) {
      out += cat("not built (no ", plugin_file_name(backend->name), " in ",
                 plugin_path_.empty() ? std::string("no plugin folder") : plugin_path_, ")");
    } else {
      out += cat("plugin ", backend->plugin_path, " found, not opened");
    }
  }
  return out;
}

}  // namespace anydev::core
