// SPDX-License-Identifier: Apache-2.0
#include "system_report.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "anydev/anydev.h"

namespace anydev_info {
namespace {

// The variables anydev reads, with what they mean when unset.
struct EnvVarSpec {
  const char* name;
  const char* meaning;
};

constexpr EnvVarSpec kEnvironment[] = {
    {"ANYDEV_BACKEND", "preference list, e.g. cuda:1,cpu (unset: cuda,hip,level_zero,opencl,cpu)"},
    {"ANYDEV_PLUGIN_PATH", "extra plugin folders, ':'-separated (unset: none)"},
    {"ANYDEV_PLUGIN_ALLOW_WRITABLE",
     "load plugins that others may write to (group/world-writable file or folder): 0|1 (unset: 0)"},
    {"ANYDEV_LOG_LEVEL", "trace|debug|info|warn|error|critical|off (unset: warn)"},
    {"ANYDEV_POOL", "caching pools for host and device buffers: 0|1 (unset: 1)"},
    {"ANYDEV_POOL_CARVE",
     "device pools carve buffers up to 16 KiB out of 2 MiB driver allocations: 0|1 (unset: 1)"},
    {"ANYDEV_POOL_RELEASE_THRESHOLD",
     "cached bytes each pool keeps beyond a quarter of its bytes in use (unset: 16777216)"},
    {"ANYDEV_CPU_MLOCK", "cpu backend pins host buffers with mlock: 0|1 (unset: 1)"},
    {"ANYDEV_CPU_THREADS",
     "cpu backend splits large copies/fills over this many threads (unset: the online CPUs)"},
    {"ANYDEV_CPU_STREAMING_BYTES",
     "cpu backend streams copies/fills whose footprint exceeds this (unset: half the LLC)"},
    {"ANYDEV_CUDA_LIBRARY", "CUDA driver library to open (unset: libcuda.so.1)"},
    {"ANYDEV_CUDA_MEMORY_POOLS", "cuda backend uses stream-ordered memory pools: 0|1 (unset: 1)"},
    {"ANYDEV_CUDA_FILL_KERNEL", "cuda 8/16-byte fills with anydev's fill kernel: 0|1 (unset: 1)"},
    {"ANYDEV_OPENCL_LIBRARY", "OpenCL ICD loader to open (unset: libOpenCL.so.1)"},
    {"ANYDEV_OPENCL_MEMORY_LIMIT",
     "opencl backend allocates at most this many bytes per device (unset: global memory)"},
    {"ANYDEV_HIP_LIBRARY",
     "HIP runtime library to open (unset: libamdhip64.so.7, .so.6, .so.5, then libamdhip64.so)"},
    {"ANYDEV_HIP_MEMORY_POOLS", "hip backend uses stream-ordered memory pools: 0|1 (unset: 1)"},
    {"ANYDEV_HIP_FILL_KERNEL", "hip 8/16-byte fills with anydev's fill kernel: 0|1 (unset: 1)"},
    {"ANYDEV_LEVEL_ZERO_LIBRARY", "Level Zero loader to open (unset: libze_loader.so.1)"},
    {"ANYDEV_LEVEL_ZERO_FILL_KERNEL",
     "level_zero fills wider than the device's with anydev's fill kernel: 0|1 (unset: 1)"},
    {"ANYDEV_UCX_LIBRARY", "UCX's UCP library to open (unset: libucp.so.0)"},
    {"ANYDEV_UCX_TIMEOUT_MS",
     "how long a transfer between processes may take, in ms (unset: 30000)"},
    {"ANYDEV_UCX_CHUNK_BYTES",
     "chunk size of transfers on the wire and of staging buffers; the same in every process "
     "(unset: 4194304)"},
    {"ANYDEV_UCX_FORCE_STAGING",
     "stage device memory through pinned host buffers even where UCX reaches it: 0|1 (unset: 0)"},
    {"ANYDEV_UCX_PEER_FAILURE",
     "endpoints ask UCX for peer failure detection: 0|1 (unset: 1; 0 is faster over tcp, a dead "
     "peer is then found by the timeout only)"},
    {"ANYDEV_VALIDATE", "validation layer: 0|1|backtrace (unset: 0)"},
    {"ANYDEV_SYNC", "every enqueue waits for its stream: 0|1 (unset: 0)"},
    {"ANYDEV_FAULT",
     "fault injection, op:n[,op:n...], op alloc|copy|fill|event|plugin (unset: none)"},
    {"ANYDEV_TRACE", "Chrome trace / Perfetto JSON file to write (unset: none)"},
};

CallError last_error(anydev_status_t status) {
  return CallError{anydev_status_name(status), anydev_last_error_message()};
}

// Owns one context reference for the duration of a probe.
class ContextHandle {
 public:
  ContextHandle() = default;
  ContextHandle(const ContextHandle&) = delete;
  ContextHandle& operator=(const ContextHandle&) = delete;
  ~ContextHandle() {
    if (ctx_ != nullptr) anydev_context_release(ctx_);
  }
  anydev_context_t* out() { return &ctx_; }
  anydev_context_t get() const { return ctx_; }

 private:
  anydev_context_t ctx_ = nullptr;
};

// Makes a 1-element host buffer on ctx, asks whether it is page-locked, and
// reads the device's locked host memory while it lives.
HostLocksReport probe_host_locks(anydev_context_t ctx) {
  HostLocksReport report;
  anydev_buffer_t probe = nullptr;
  if (anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 1, &probe) ==
      ANYDEV_SUCCESS) {
    int locked = 0;
    if (anydev_buffer_is_locked(probe, &locked) == ANYDEV_SUCCESS) {
      report.probe_locked = locked != 0;
    }
  }
  anydev_context_host_memory_locks(ctx, &report.locked_bytes, &report.total_bytes);
  if (probe != nullptr) anydev_buffer_release(probe);
  anydev_clear_last_error();
  return report;
}

DeviceReport probe_device(const std::string& api, int index) {
  DeviceReport device;
  device.index = index;
  ContextHandle ctx;
  if (anydev_status_t s = anydev_context_create(api.c_str(), index, ctx.out());
      s != ANYDEV_SUCCESS) {
    device.error = last_error(s);
    return device;
  }
  const char* name = nullptr;
  if (anydev_status_t s = anydev_context_device_name(ctx.get(), &name); s != ANYDEV_SUCCESS) {
    device.error = last_error(s);
    return device;
  }
  device.name = name != nullptr ? name : "";
  const char* description = nullptr;
  if (anydev_status_t s = anydev_context_device_description(ctx.get(), &description);
      s != ANYDEV_SUCCESS) {
    device.error = last_error(s);
    return device;
  }
  device.description = description != nullptr ? description : "";
  anydev_memory_info_t memory{};
  memory.struct_size = sizeof(memory);
  if (anydev_status_t s = anydev_context_memory_info(ctx.get(), &memory); s != ANYDEV_SUCCESS) {
    device.error = last_error(s);
    return device;
  }
  device.memory_free = memory.free_bytes;
  device.memory_total = memory.total_bytes;
  for (const anydev_memory_kind_t kind : {ANYDEV_MEMORY_HOST, ANYDEV_MEMORY_DEVICE}) {
    anydev_pool_stats_t stats{};
    stats.struct_size = sizeof(stats);
    if (anydev_status_t s = anydev_context_pool_stats(ctx.get(), kind, &stats);
        s != ANYDEV_SUCCESS) {
      device.error = last_error(s);
      return device;
    }
    PoolStatsReport& pool = kind == ANYDEV_MEMORY_HOST ? device.host_pool : device.device_pool;
    pool = PoolStatsReport{stats.bytes_in_use,     stats.bytes_cached, stats.peak_bytes_in_use,
                           stats.allocation_count, stats.cache_hits,   stats.cache_misses};
  }
  device.host_locks = probe_host_locks(ctx.get());
  // Attributes a backend has no value for read as unset, never as an error.
  for (int i = 0; i < ANYDEV_ATTRIBUTE_COUNT; ++i) {
    const auto attribute = static_cast<anydev_device_attribute_t>(i);
    std::int64_t value = 0;
    std::optional<std::int64_t> got;
    if (anydev_context_get_attribute(ctx.get(), attribute, &value) == ANYDEV_SUCCESS) got = value;
    device.attributes.emplace_back(anydev_device_attribute_name(attribute), got);
  }
  char text[256] = {};
  if (anydev_context_api_version(ctx.get(), text, sizeof text) == ANYDEV_SUCCESS) {
    device.api_version = text;
  }
  std::uint8_t uuid[16] = {};
  if (anydev_context_device_uuid(ctx.get(), uuid) == ANYDEV_SUCCESS) {
    static const char kHex[] = "0123456789abcdef";
    for (std::uint8_t b : uuid) {
      device.uuid += kHex[b >> 4];
      device.uuid += kHex[b & 15];
    }
  }
  if (anydev_context_pci_bus_id(ctx.get(), text, sizeof text) == ANYDEV_SUCCESS) {
    device.pci_bus_id = text;
  }
  anydev_clear_last_error();
  return device;
}

void collect_backends(SystemReport& report) {
  std::size_t count = 0;
  if (anydev_status_t s = anydev_backend_count(&count); s != ANYDEV_SUCCESS) {
    report.backends_error = last_error(s);
    return;
  }
  for (std::size_t i = 0; i < count; ++i) {
    anydev_backend_info_t info{};
    info.struct_size = sizeof(info);
    if (anydev_status_t s = anydev_backend_info(i, &info); s != ANYDEV_SUCCESS) {
      report.backends_error = last_error(s);
      return;
    }
    BackendReport backend;
    backend.name = info.name != nullptr ? info.name : "";
    backend.available = info.available != 0;
    backend.reason = info.reason != nullptr ? info.reason : "";
    backend.library = info.library != nullptr ? info.library : "";
    backend.device_count = info.device_count;
    if (backend.available) {
      for (int d = 0; d < backend.device_count; ++d) {
        backend.devices.push_back(probe_device(backend.name, d));
      }
    }
    report.backends.push_back(std::move(backend));
  }
}

PluginFolderReport scan_plugin_folder(std::string path) {
  namespace fs = std::filesystem;
  PluginFolderReport folder;
  folder.path = std::move(path);
  std::error_code ec;
  folder.exists = fs::is_directory(folder.path, ec);
  if (!folder.exists) return folder;
  constexpr std::string_view kPrefix = "libanydev-backend-";
  constexpr std::string_view kSuffix = ".so";
  for (const fs::directory_entry& entry : fs::directory_iterator(folder.path, ec)) {
    std::string file = entry.path().filename().string();
    if (file.size() > kPrefix.size() + kSuffix.size() && file.starts_with(kPrefix) &&
        file.ends_with(kSuffix)) {
      folder.plugins.push_back(std::move(file));
    }
  }
  std::sort(folder.plugins.begin(), folder.plugins.end());
  return folder;
}

std::vector<PluginFolderReport> scan_plugin_path(std::string_view path) {
  std::vector<PluginFolderReport> folders;
  while (!path.empty()) {
    std::size_t colon = path.find(':');
    std::string_view folder = path.substr(0, colon);
    if (!folder.empty()) folders.push_back(scan_plugin_folder(std::string(folder)));
    if (colon == std::string_view::npos) break;
    path.remove_prefix(colon + 1);
  }
  return folders;
}

// What the default selection's context `ctx` is.
SelectionReport describe_selection(const ContextHandle& ctx) {
  SelectionReport selection;
  const char* api = nullptr;
  const char* name = nullptr;
  int device = 0;
  anydev_status_t s = anydev_context_api(ctx.get(), &api);
  if (s == ANYDEV_SUCCESS) s = anydev_context_device_id(ctx.get(), &device);
  if (s == ANYDEV_SUCCESS) s = anydev_context_device_name(ctx.get(), &name);
  if (s != ANYDEV_SUCCESS) {
    selection.error = last_error(s);
    return selection;
  }
  selection.api = api != nullptr ? api : "";
  selection.device = device;
  selection.device_name = name != nullptr ? name : "";
  return selection;
}

// Makes and releases one communicator on `ctx`: UCX is opened and its
// worker made, so "available" means transfers can start here.
TransportReport probe_transport(const ContextHandle& ctx) {
  TransportReport transport;
  anydev_comm_t comm = nullptr;
  if (anydev_status_t s = anydev_comm_create(ctx.get(), 0, &comm); s != ANYDEV_SUCCESS) {
    transport.error = last_error(s);
    anydev_clear_last_error();
    return transport;
  }
  transport.available = true;
  const char* types = anydev_comm_memory_types(comm);
  transport.memory_types = types != nullptr ? types : "";
  anydev_comm_release(comm);
  return transport;
}

}  // namespace

std::string collect_version() { return anydev_version_string(); }

SystemReport collect_system_report() {
  SystemReport report;
  report.version = collect_version();
  for (const EnvVarSpec& spec : kEnvironment) {
    EnvVarReport var{spec.name, std::nullopt, spec.meaning};
    if (const char* value = std::getenv(spec.name); value != nullptr) var.value = value;
    report.environment.push_back(std::move(var));
  }
  collect_backends(report);
  const char* plugin_path = anydev_plugin_path();
  report.plugin_folders = scan_plugin_path(plugin_path != nullptr ? plugin_path : "");
  report.pools_enabled = anydev_pool_enabled() != 0;
  // One context of the default selection serves both reports.
  ContextHandle ctx;
  if (anydev_status_t s = anydev_context_create(nullptr, -1, ctx.out()); s != ANYDEV_SUCCESS) {
    report.selection.error = last_error(s);
    report.transport.error = report.selection.error;
  } else {
    report.selection = describe_selection(ctx);
    report.transport = probe_transport(ctx);
  }
  return report;
}

}  // namespace anydev_info
