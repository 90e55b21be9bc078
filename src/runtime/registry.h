// SPDX-License-Identifier: Apache-2.0
// The backend registry: which backends exist, where their plugins are, and
// whether each one is usable.
//
// Known backends are the five built-in names (cpu, cuda, hip, level_zero,
// opencl) plus every libanydev-backend-NAME.so found in the plugin folders
// (ANYDEV_PLUGIN_PATH, ':'-separated, first; then the folder anydev/ beside
// libanydev.so). Listing the folders opens nothing; a backend is opened and
// initialized only when it is probed: when named by ANYDEV_BACKEND or code,
// or when every backend is listed (anydev-info). A probe happens at most
// once per process.
//
// The registry lives for the whole process (it is never destroyed, so that
// handles released during exit still find their backend). Backend objects it
// hands out are stable and immutable once probed, with one exception: in the
// child of fork() (one thread, before fork() returns), a backend that was
// initialized before the fork and whose table lacks
// ANYDEV_BK_FLAG_SURVIVES_FORK becomes unavailable, with a reason naming
// fork(). A backend never probed before the fork may be probed in the child.
// Thread-safe.
#ifndef ANYDEV_SRC_RUNTIME_REGISTRY_H_
#define ANYDEV_SRC_RUNTIME_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "anydev/backend.h"
#include "runtime/registry_devices.h"
#include "support/core_mutex.h"

namespace anydev::core {

// One backend. Immutable after the registry probed it.
struct Backend {
  std::string name;
  bool builtin = false;     // linked into libanydev.so (src/runtime/builtin_backends.h)
  std::string plugin_path;  // where its plugin is (empty: built in or not found)
  bool probed = false;
  bool available = false;
  // initialize() succeeded, in this process or before a fork() in an ancestor.
  bool initialized = false;
  // The backend's own table's flags (ANYDEV_BK_FLAG_*).
  std::uint64_t flags = 0;
  std::string reason;  // why it is unavailable
  // The reason it has in the child of a fork() when it cannot survive one
  // (made at probe time, so that the child's fork handler only swaps it in).
  std::string fork_reason;
  std::string library;  // plugin path and vendor library, for anydev-info
  const anydev_backend_table_t* table = nullptr;
  std::vector<DeviceRecord> devices;

  int device_count() const { return available ? static_cast<int>(devices.size()) : 0; }
};

class Registry {
 public:
  static Registry& instance();

  // Every known backend name: the five built-in names first, then other
  // plugins found, in folder order.
  std::vector<std::string> known_names();
  // Probes (once) and returns the backend, or nullptr for an unknown name.
  const Backend* probe(std::string_view name);
  // Probes every known backend.
  std::vector<const Backend*> probe_all();
  // Probes the known backends in listing order until `wanted` accepts an
  // available one; that backend, or nullptr. `wanted` runs under the
  // registry's lock: it must only read the backend.
  const Backend* probe_until(const std::function<bool(const Backend&)>& wanted);
  // The plugin folders searched, ':'-separated.
  const std::string& plugin_path();
  // One line per known backend with its state, for error messages; probes
  // nothing (an unprobed plugin is "found, not opened").
  std::string describe_known();

 private:
  Registry();
  void discover_locked();
  Backend* find_locked(std::string_view name);
  void probe_locked(Backend& backend);
  // The pthread_atfork child handler: retires the backends that cannot
  // survive fork() (see above), then unlocks the registry's mutex.
  void after_fork_in_child() noexcept;

  CoreMutex mutex_;
  bool discovered_ = false;
  std::vector<std::string> folders_;
  std::string plugin_path_;
  std::vector<std::unique_ptr<Backend>> backends_;
};

// The services table the core hands to every backend.
const anydev_core_services_t* core_services();

}  // namespace anydev::core

#endif  // ANYDEV_SRC_RUNTIME_REGISTRY_H_
