// SPDX-License-Identifier: Apache-2.0
// What anydev-info reports: a snapshot of the library's view of this machine,
// gathered once through the C ABI (version, backends and their devices, plugin
// folders, environment variables, the default selection).
//
// A SystemReport is plain data owned by its holder: it copies every string out
// of the library, so it stays valid after the contexts it probed are released.
// collect_system_report() is not meant to run concurrently with itself (it
// reads the environment); the returned value is an ordinary value type.
#ifndef ANYDEV_TOOLS_ANYDEV_INFO_SYSTEM_REPORT_H_
#define ANYDEV_TOOLS_ANYDEV_INFO_SYSTEM_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace anydev_info {

// A failed C ABI call: its status name ("invalid_argument") and message.
struct CallError {
  std::string status;
  std::string message;
};

// The statistics of one caching pool (anydev_context_pool_stats).
struct PoolStatsReport {
  std::size_t bytes_in_use = 0;
  std::size_t bytes_cached = 0;
  std::size_t peak_bytes_in_use = 0;
  std::uint64_t allocation_count = 0;
  std::uint64_t cache_hits = 0;
  std::uint64_t cache_misses = 0;
};

// Host memory of one device in this process (anydev_context_host_memory_locks),
// read while a 1-element probe host buffer is alive, and whether that probe
// buffer is page-locked (anydev_buffer_is_locked; nullopt when the probe
// could not be made).
struct HostLocksReport {
  std::size_t locked_bytes = 0;
  std::size_t total_bytes = 0;
  std::optional<bool> probe_locked;
};

// One device of an available backend, probed by creating a context on it.
struct DeviceReport {
  int index = 0;
  std::string name;
  std::string description;  // backend's free text: versions, compute capability, bus id
  std::size_t memory_free = 0;
  std::size_t memory_total = 0;
  std::optional<CallError> error;  // set when the context could not be created or queried
  PoolStatsReport host_pool;       // this process's pools of the device (docs/memory-pools.md)
  PoolStatsReport device_pool;
  HostLocksReport host_locks;  // read after the pool statistics
  // Device attributes (anydev_context_get_attribute) by name; unset where the
  // backend has no value. "" when the backend gives none.
  std::vector<std::pair<std::string, std::optional<std::int64_t>>> attributes;
  std::string api_version;
  std::string uuid;        // 32 hex digits, or ""
  std::string pci_bus_id;  // "dddd:bb:dd.f", or ""
};

// One known backend, available or not (anydev_backend_info).
struct BackendReport {
  std::string name;
  bool available = false;
  std::string reason;   // why unavailable ("" when available)
  std::string library;  // plugin and vendor library tried ("" for the built-in cpu)
  int device_count = 0;
  std::vector<DeviceReport> devices;
};

// One folder of anydev_plugin_path() and the backend plugins found in it.
struct PluginFolderReport {
  std::string path;
  bool exists = false;
  std::vector<std::string> plugins;  // file names libanydev-backend-*.so, sorted
};

// One anydev environment variable and its value.
struct EnvVarReport {
  std::string name;
  std::optional<std::string> value;  // nullopt when unset
  std::string meaning;               // one line, including the default when unset
};

// What DeviceContext() (anydev_context_create(NULL, -1)) picks.
struct SelectionReport {
  std::string api;
  int device = 0;
  std::string device_name;
  std::optional<CallError> error;  // set when the default selection fails
};

// The UCX transport (docs/distributed.md), probed by making a communicator on
// the default selection's context: available, or why not.
struct TransportReport {
  bool available = false;
  std::string memory_types;        // what UCX reaches directly, e.g. "host"
  std::optional<CallError> error;  // set when unavailable
};

struct SystemReport {
  std::string version;
  std::vector<BackendReport> backends;
  std::optional<CallError> backends_error;  // set when enumerating backends failed
  std::vector<PluginFolderReport> plugin_folders;
  std::vector<EnvVarReport> environment;
  SelectionReport selection;
  bool pools_enabled = true;  // anydev_pool_enabled(): ANYDEV_POOL is not 0
  TransportReport transport;
};

// anydev_version_string(), e.g. "0.1.0".
std::string collect_version();

SystemReport collect_system_report();

}  // namespace anydev_info

#endif  // ANYDEV_TOOLS_ANYDEV_INFO_SYSTEM_REPORT_H_
