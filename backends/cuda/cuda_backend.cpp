// SPDX-License-Identifier: Apache-2.0
// The plugin's entry point and table; initialization and device queries.
#include <cuda.h>
#include <dlpack/dlpack.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "anydev/backend.h"
#include "cuda_entries.h"
#include "cuda_errors.h"
#include "cuda_pool.h"
#include "cuda_state.h"
#include "kit_capabilities.h"
#include "kit_entry.h"
#include "kit_structs.h"
#include "kit_table.h"

namespace anydev::cuda {
namespace {

// Reads ANYDEV_CUDA_MEMORY_POOLS: unset, "1": use pools where supported; "0": never.
anydev_status_t memory_pools_allowed(bool* allowed) {
  const char* value = get_env("ANYDEV_CUDA_MEMORY_POOLS");
  if (value == nullptr || std::strcmp(value, "1") == 0) {
    *allowed = true;
  } else if (std::strcmp(value, "0") == 0) {
    *allowed = false;
  } else {
    return report_error(
        ANYDEV_ERROR_BACKEND_UNAVAILABLE,
        value[0] == '\0'
            ? std::string("ANYDEV_CUDA_MEMORY_POOLS is set but empty (expected 0 or 1)")
            : cat("ANYDEV_CUDA_MEMORY_POOLS=\"", value, "\" is neither 0 nor 1"));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t query_device(int index, bool pools_allowed, DeviceState* d) {
  const CudaDriver& drv = driver();
  const std::string what = cat("querying cuda device ", index);
  auto fail = [&what](CUresult r, const char* call) {
    return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, call, what);
  };
  d->index = index;
  CUresult r = drv.DeviceGet(&d->device, index);
  if (r != CUDA_SUCCESS) return fail(r, "cuDeviceGet");
  char name[256] = {};
  if ((r = drv.DeviceGetName(name, sizeof(name) - 1, d->device)) != CUDA_SUCCESS) {
    return fail(r, "cuDeviceGetName");
  }
  d->name = name;
  if ((r = drv.DeviceTotalMem(&d->total_memory, d->device)) != CUDA_SUCCESS) {
    return fail(r, "cuDeviceTotalMem");
  }
  int unified = 0;
  if ((r = drv.DeviceGetAttribute(&d->compute_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                  d->device)) != CUDA_SUCCESS ||
      (r = drv.DeviceGetAttribute(&d->compute_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                  d->device)) != CUDA_SUCCESS ||
      (r = drv.DeviceGetAttribute(&unified, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, d->device)) !=
          CUDA_SUCCESS) {
    return fail(r, "cuDeviceGetAttribute");
  }
  if (unified == 0) {
    return report_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                        cat("cuda device ", index, " (", d->name,
                            ") lacks unified addressing, which the cuda backend needs"));
  }
  int pools = 0;
  // Drivers older than 11.2 do not know the attribute: no pools.
  if (drv.DeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, d->device) !=
      CUDA_SUCCESS) {
    pools = 0;
  }
  d->memory_pools = pools_allowed && pools != 0 && pool_entry_points_present(drv);
  char bus[64] = {};
  if ((r = drv.DeviceGetPCIBusId(bus, sizeof(bus) - 1, d->device)) != CUDA_SUCCESS) {
    return fail(r, "cuDeviceGetPCIBusId");
  }
  d->pci_bus_id = bus;
  d->description =
      cat("compute capability ", d->compute_major, ".", d->compute_minor, ", PCI bus id ",
          d->pci_bus_id, ", driver ", driver_version_text(drv.version), " (", drv.opened_path, ")");
  return ANYDEV_SUCCESS;
}

using kit::copy_text;
using kit::has_field;

}  // namespace

anydev_status_t initialize(const anydev_core_services_t* core, const char** library) {
  BackendState& state = backend_state();
  set_core_services(core);
  static std::string* library_text = new std::string;  // valid for the life of the process
  const char* env = get_env("ANYDEV_CUDA_LIBRARY");
  const std::string path = env != nullptr ? env : "libcuda.so.1";
  *library_text = path;
  if (library != nullptr) *library = library_text->c_str();
  if (env != nullptr && env[0] == '\0') {
    // Refused like every malformed variable (docs/environment.md).
    return report_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                        "ANYDEV_CUDA_LIBRARY is set but empty: expected the path or file name of "
                        "the CUDA driver library (unset it for libcuda.so.1)");
  }

  bool pools_allowed = true;
  if (const anydev_status_t s = memory_pools_allowed(&pools_allowed); s != ANYDEV_SUCCESS) {
    return s;
  }
  std::string reason;
  if (!load_cuda_driver(path, &state.driver, &reason)) {
    return report_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE, reason);
  }
  const CudaDriver& drv = state.driver;
  if (drv.opened_path != path) *library_text = path + " (" + drv.opened_path + ")";
  if (library != nullptr) *library = library_text->c_str();
  const std::string where =
      cat(drv.opened_path, ", driver ", driver_version_text(drv.version), ")");

  CUresult r = drv.Init(0);
  state.initialized_pid = getpid();
  if (r != CUDA_SUCCESS) {
    return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, "cuInit",
                          cat("initializing the CUDA driver (", where));
  }
  int count = 0;
  if ((r = drv.DeviceGetCount(&count)) != CUDA_SUCCESS) {
    return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, "cuDeviceGetCount",
                          cat("counting CUDA devices (", where));
  }
  if (count <= 0) {
    return report_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                        cat("no CUDA device: cuDeviceGetCount returned ", count, " (", where));
  }
  std::vector<std::unique_ptr<DeviceState>> devices;
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<DeviceState>();
    if (const anydev_status_t s = query_device(i, pools_allowed, d.get()); s != ANYDEV_SUCCESS) {
      return s;
    }
    devices.push_back(std::move(d));
  }
  // Only once nothing can fail any more: initialize never leaves a pool behind.
  for (const auto& d : devices) {
    create_device_pool(d.get());
    log(ANYDEV_LOG_DEBUG, cat("device ", d->index, ": ", d->name, ", ", d->description));
  }
  state.devices = std::move(devices);
  log(ANYDEV_LOG_INFO,
      cat(count, " CUDA device", count == 1 ? "" : "s", " through ", drv.opened_path, " (driver ",
          driver_version_text(drv.version), ", symbols resolved with ", drv.resolver, ")"));
  return ANYDEV_SUCCESS;
}

anydev_status_t device_count(int* count) {
  if (count == nullptr)
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "device_count: null out");
  *count = static_cast<int>(backend_state().devices.size());
  return ANYDEV_SUCCESS;
}

anydev_status_t device_props(int device, anydev_bk_device_props_t* props) {
  if (props == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "device_props: null props");
  }
  if (const anydev_status_t s = check_device(device, "device_props"); s != ANYDEV_SUCCESS) return s;
  const DeviceState& d = *backend_state().devices[static_cast<std::size_t>(device)];
  if (has_field(props, &anydev_bk_device_props_t::name)) copy_text(props->name, d.name);
  if (has_field(props, &anydev_bk_device_props_t::description)) {
    copy_text(props->description, d.description);
  }
  if (has_field(props, &anydev_bk_device_props_t::total_memory))
    props->total_memory = d.total_memory;
  if (has_field(props, &anydev_bk_device_props_t::host_memory_is_device_accessible)) {
    props->host_memory_is_device_accessible = 0;
  }
  kit::device_capabilities caps;
  caps.dlpack_device_type = kDLCUDA;
  caps.dlpack_host_device_type = kDLCUDAHost;
  caps.dlpack_device_id = device;
  // Without memory pools memory_free_async declines: the core's
  // stream-ordered release frees the memory.
  caps.stream_ordered_free = d.memory_pools;
  caps.peer_access = backend_state().devices.size() > 1;
  kit::set_capabilities(props, caps);
  return ANYDEV_SUCCESS;
}

anydev_status_t memory_info(int device, std::size_t* free_bytes, std::size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "memory_info: null out");
  }
  ScopedContext scope;
  if (const anydev_status_t s = scope.enter(device, "memory_info"); s != ANYDEV_SUCCESS) return s;
  std::size_t free = 0;
  std::size_t total = 0;
  const CUresult r = driver().MemGetInfo(&free, &total);
  if (r != CUDA_SUCCESS) {
    return report_failure(r, "cuMemGetInfo", cat("memory_info of cuda device ", device));
  }
  *free_bytes = free;
  *total_bytes = total;
  return ANYDEV_SUCCESS;
}

// No flags: the driver's threads and contexts do not survive fork().
constexpr anydev_backend_table_t kTable =
    ANYDEV_KIT_BACKEND_TABLE(kBackendName, .memory_free_async = kit::entry<memory_free_async>,
                             .native_handle = kit::entry<native_handle>,
                             .stream_wrap_native = kit::entry<stream_wrap_native>);

}  // namespace anydev::cuda

ANYDEV_KIT_BACKEND_ENTRY(ANYDEV_BACKEND_EXPORT, anydev_backend_entry, cuda)
