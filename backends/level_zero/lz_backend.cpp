// SPDX-License-Identifier: Apache-2.0
// The plugin's entry point and table; initialization and device queries.
//
// initialize opens the Level Zero loader (never linked), initializes it
// (zeInitDrivers where exported, else zeInit), and makes one context per
// driver and one anydev device per root device of every driver, in driver
// order.
#include <dlpack/dlpack.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "anydev/backend.h"
#include "anydev/kit/capabilities.h"
#include "anydev/kit/device_props.h"
#include "anydev/kit/entry.h"
#include "anydev/kit/library.h"
#include "anydev/kit/structs.h"
#include "anydev/kit/table.h"
#include "lz_entries.h"
#include "lz_errors.h"
#include "lz_state.h"

namespace anydev::level_zero {
namespace {

// DLPack 0.7 added kDLOneAPI (14); Debian ships 0.6.
#if defined(DLPACK_VERSION) && DLPACK_VERSION >= 70
constexpr std::int32_t kOneApi = kDLOneAPI;
#else
constexpr std::int32_t kOneApi = 14;
#endif

constexpr const char* kDefaultLibrary = "libze_loader.so.1";
constexpr const char* kInstallHint =
    "install a Level Zero driver for the GPU (Intel GPUs: Intel's compute-runtime, Debian and "
    "Ubuntu package intel-level-zero-gpu or libze-intel-gpu1), or name a driver in "
    "ZE_ENABLE_ALT_DRIVERS";

std::string hex(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%x", value);
  return text;
}

// The loader without any driver answers ZE_RESULT_ERROR_UNINITIALIZED from
// zeInit and zeDriverGet (level-zero#140): say what that means.
anydev_status_t no_driver(const char* call, ze_result_t r, const std::string& where) {
  return report_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                      cat("the Level Zero loader found no driver: ", call, " returned ",
                          r == ZE_RESULT_SUCCESS ? std::string("0 drivers") : describe_result(r),
                          " (", where, "); ", kInstallHint));
}

// The drivers, initialized: zeInitDrivers for GPU drivers where the loader
// exports it (1.10+), else zeInit(ZE_INIT_FLAG_GPU_ONLY) and zeDriverGet.
anydev_status_t init_drivers(const LoaderApi& ze, const std::string& where,
                             std::vector<ze_driver_handle_t>* drivers) {
  std::uint32_t count = 0;
  if (ze.zeInitDrivers != nullptr) {
    InitDriverTypeDesc desc;
    ze_result_t r = ze.zeInitDrivers(&count, nullptr, &desc);
    if (r == ZE_RESULT_ERROR_UNINITIALIZED || (r == ZE_RESULT_SUCCESS && count == 0)) {
      return no_driver("zeInitDrivers(GPU)", r, where);
    }
    if (r != ZE_RESULT_SUCCESS) {
      return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, "zeInitDrivers", where);
    }
    drivers->resize(count);
    if ((r = ze.zeInitDrivers(&count, drivers->data(), &desc)) != ZE_RESULT_SUCCESS) {
      return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, "zeInitDrivers", where);
    }
    drivers->resize(count);
    return ANYDEV_SUCCESS;
  }
  ze_result_t r = ze.zeInit(ZE_INIT_FLAG_GPU_ONLY);
  if (r == ZE_RESULT_ERROR_UNINITIALIZED)
    return no_driver("zeInit(ZE_INIT_FLAG_GPU_ONLY)", r, where);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, "zeInit", where);
  }
  r = ze.zeDriverGet(&count, nullptr);
  if (r == ZE_RESULT_ERROR_UNINITIALIZED || (r == ZE_RESULT_SUCCESS && count == 0)) {
    return no_driver("zeDriverGet", r, where);
  }
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, "zeDriverGet", where);
  }
  drivers->resize(count);
  if ((r = ze.zeDriverGet(&count, drivers->data())) != ZE_RESULT_SUCCESS) {
    return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, "zeDriverGet", where);
  }
  drivers->resize(count);
  return ANYDEV_SUCCESS;
}

anydev_status_t query_device(const LoaderApi& ze, DriverState* driver, ze_device_handle_t handle,
                             int index, const std::string& where, DeviceState* d) {
  const std::string what = cat("querying level_zero device ", index, " (", where, ")");
  auto fail = [&what](ze_result_t r, const char* call) {
    return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, call, what);
  };
  d->index = index;
  d->driver = driver;
  d->device = handle;
  ze_device_properties_t props = {};
  props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  ze_result_t r = ze.zeDeviceGetProperties(handle, &props);
  if (r != ZE_RESULT_SUCCESS) return fail(r, "zeDeviceGetProperties");
  d->name = std::string(props.name, strnlen(props.name, sizeof(props.name)));
  d->timer_resolution_ns = props.timerResolution > 0 ? props.timerResolution : 1;
  d->kernel_timestamp_bits =
      props.kernelTimestampValidBits > 0 ? props.kernelTimestampValidBits : 64;

  std::uint32_t count = 0;
  if ((r = ze.zeDeviceGetMemoryProperties(handle, &count, nullptr)) != ZE_RESULT_SUCCESS) {
    return fail(r, "zeDeviceGetMemoryProperties");
  }
  std::vector<ze_device_memory_properties_t> memories(count);
  for (auto& m : memories) m.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
  if ((r = ze.zeDeviceGetMemoryProperties(handle, &count, memories.data())) != ZE_RESULT_SUCCESS) {
    return fail(r, "zeDeviceGetMemoryProperties");
  }
  d->total_memory = 0;
  for (std::uint32_t i = 0; i < count; ++i) d->total_memory += memories[i].totalSize;

  count = 0;
  if ((r = ze.zeDeviceGetCommandQueueGroupProperties(handle, &count, nullptr)) !=
      ZE_RESULT_SUCCESS) {
    return fail(r, "zeDeviceGetCommandQueueGroupProperties");
  }
  std::vector<ze_command_queue_group_properties_t> groups(count);
  for (auto& g : groups) g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  if ((r = ze.zeDeviceGetCommandQueueGroupProperties(handle, &count, groups.data())) !=
      ZE_RESULT_SUCCESS) {
    return fail(r, "zeDeviceGetCommandQueueGroupProperties");
  }
  int chosen = -1;
  for (std::uint32_t i = 0; i < count && chosen < 0; ++i) {
    if ((groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) != 0) {
      chosen = static_cast<int>(i);
    }
  }
  for (std::uint32_t i = 0; i < count && chosen < 0; ++i) {
    if ((groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY) != 0) {
      chosen = static_cast<int>(i);
    }
  }
  if (chosen < 0) {
    return report_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                        cat("level_zero device ", index, " (", d->name,
                            ") has no command queue "
                            "group that can copy (",
                            count, " groups; ", where, ")"));
  }
  d->queue_ordinal = static_cast<std::uint32_t>(chosen);
  d->max_native_fill = groups[static_cast<std::size_t>(chosen)].maxMemoryFillPatternSize;
  d->description =
      cat("Level Zero driver ", driver->version, ", vendor ", hex(props.vendorId), " device ",
          hex(props.deviceId), ", queue group ", d->queue_ordinal, " (fill patterns up to ",
          d->max_native_fill, " bytes natively), through ", where);
  return ANYDEV_SUCCESS;
}

using kit::copy_text;
using kit::has_field;

}  // namespace

BackendState& backend_state() {
  static BackendState* state = new BackendState;  // never destroyed (lz_state.h)
  return *state;
}

anydev_status_t check_device(int device, const char* operation) {
  const std::size_t count = backend_state().devices.size();
  if (device < 0 || static_cast<std::size_t>(device) >= count) {
    return report_error(ANYDEV_ERROR_OUT_OF_RANGE, cat(operation, ": level_zero device ", device,
                                                       " does not exist (", count, " devices)"));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t initialize(const anydev_core_services_t* core, const char** library) {
  BackendState& state = backend_state();
  set_core_services(core);
  static std::string* library_text = new std::string;  // valid for the life of the process
  const char* env = get_env("ANYDEV_LEVEL_ZERO_LIBRARY");
  const std::string path = env != nullptr ? env : kDefaultLibrary;
  *library_text = path;
  if (library != nullptr) *library = library_text->c_str();
  if (env != nullptr && env[0] == '\0') {
    return report_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                        "ANYDEV_LEVEL_ZERO_LIBRARY is set but empty: expected the path or file "
                        "name of the Level Zero loader (unset it for libze_loader.so.1)");
  }
  const char* what = "Level Zero loader";
  std::string reason;
  void* handle = kit::open_library(
      path, what, "is libze1 installed? ANYDEV_LEVEL_ZERO_LIBRARY overrides the path", &reason);
  if (handle == nullptr) return report_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE, reason);
  LoaderApi& ze = state.api;
  ze.path = path;
  kit::missing_symbol<const char*> missing;
  if (!ANYDEV_KIT_RESOLVE_SYMBOLS(ANYDEV_LEVEL_ZERO_SYMBOLS, ze, kit::dlsym_resolver(handle),
                                  &missing)) {
    return report_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                        kit::symbol_failure(what, path, missing.key, missing.why));
  }
  const std::string where = cat("the Level Zero loader ", path);

  std::vector<ze_driver_handle_t> drivers;
  if (const anydev_status_t s = init_drivers(ze, where, &drivers); s != ANYDEV_SUCCESS) return s;

  std::vector<std::unique_ptr<DriverState>> driver_states;
  std::vector<std::unique_ptr<DeviceState>> devices;
  auto undo = [&] {
    for (const auto& dr : driver_states) {
      if (dr->context != nullptr) ze.zeContextDestroy(dr->context);
    }
  };
  for (std::size_t k = 0; k < drivers.size(); ++k) {
    auto dr = std::make_unique<DriverState>();
    dr->driver = drivers[k];
    const std::string driver_where = cat(where, ", driver ", k);
    ze_driver_properties_t dprops = {};
    dprops.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    ze_api_version_t version = {};
    ze_result_t r = ze.zeDriverGetProperties(dr->driver, &dprops);
    if (r == ZE_RESULT_SUCCESS) r = ze.zeDriverGetApiVersion(dr->driver, &version);
    if (r != ZE_RESULT_SUCCESS) {
      undo();
      return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r,
                            "zeDriverGetProperties / zeDriverGetApiVersion", driver_where);
    }
    dr->version = cat(hex(dprops.driverVersion), " (API ", ZE_MAJOR_VERSION(version), ".",
                      ZE_MINOR_VERSION(version), ")");
    dr->in_order_lists.store(version >= ZE_MAKE_VERSION(1, 7), std::memory_order_relaxed);
    ze_context_desc_t cdesc = {};
    cdesc.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
    if ((r = ze.zeContextCreate(dr->driver, &cdesc, &dr->context)) != ZE_RESULT_SUCCESS) {
      undo();
      return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, "zeContextCreate", driver_where);
    }
    dr->events = std::make_unique<EventSlots>(api(), dr->context);
    if (api().zeEventQueryKernelTimestamp != nullptr) {
      dr->timestamp_events = std::make_unique<EventSlots>(
          api(), dr->context,
          ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
    }
    std::uint32_t count = 0;
    r = ze.zeDeviceGet(dr->driver, &count, nullptr);
    std::vector<ze_device_handle_t> handles(count);
    if (r == ZE_RESULT_SUCCESS) r = ze.zeDeviceGet(dr->driver, &count, handles.data());
    if (r != ZE_RESULT_SUCCESS) {
      driver_states.push_back(std::move(dr));
      undo();
      return report_failure(ANYDEV_ERROR_BACKEND_UNAVAILABLE, r, "zeDeviceGet", driver_where);
    }
    for (std::uint32_t i = 0; i < count; ++i) {
      auto d = std::make_unique<DeviceState>();
      if (const anydev_status_t s = query_device(
              ze, dr.get(), handles[i], static_cast<int>(devices.size()), driver_where, d.get());
          s != ANYDEV_SUCCESS) {
        driver_states.push_back(std::move(dr));
        undo();
        return s;
      }
      devices.push_back(std::move(d));
    }
    driver_states.push_back(std::move(dr));
  }
  if (devices.empty()) {
    undo();
    return report_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE,
                        cat("no Level Zero device: ", drivers.size(), " driver",
                            drivers.size() == 1 ? "" : "s", " with no device (", where, ")"));
  }
  state.drivers = std::move(driver_states);
  state.devices = std::move(devices);
  for (const auto& d : state.devices) {
    log(ANYDEV_LOG_DEBUG, cat("device ", d->index, ": ", d->name, ", ", d->description));
  }
  log(ANYDEV_LOG_INFO, cat(state.devices.size(), " Level Zero device",
                           state.devices.size() == 1 ? "" : "s", " of ", state.drivers.size(),
                           " driver", state.drivers.size() == 1 ? "" : "s", " through ", path));
  return ANYDEV_SUCCESS;
}

anydev_status_t device_count(int* count) {
  if (count == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "device_count: null out");
  }
  *count = static_cast<int>(backend_state().devices.size());
  return ANYDEV_SUCCESS;
}

anydev_status_t device_props(int device, anydev_bk_device_props_t* props) {
  if (props == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "device_props: null props");
  }
  if (const anydev_status_t s = check_device(device, "device_props"); s != ANYDEV_SUCCESS) return s;
  const DeviceState& d = device_at(device);
  kit::set_basic_device_props(props, d.name, d.description, d.total_memory, false);
  bool peers = false;
  for (const auto& other : backend_state().devices) {
    peers = peers || (other.get() != &d && other->driver == d.driver);
  }
  kit::device_capabilities caps;
  caps.dlpack_device_type = kOneApi;
  caps.dlpack_host_device_type = kDLCPU;
  caps.dlpack_device_id = device;
  caps.peer_access = peers;
  caps.max_fill_pattern = 16;  // wider than the queue group's: exact copies (lz_transfer.cpp)
  kit::set_capabilities(props, caps);
  return ANYDEV_SUCCESS;
}

anydev_status_t memory_info(int device, std::size_t* free_bytes, std::size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "memory_info: null out");
  }
  if (const anydev_status_t s = check_device(device, "memory_info"); s != ANYDEV_SUCCESS) return s;
  // Core Level Zero has no free-memory query (Sysman's zesMemoryGetState
  // needs ZES_ENABLE_SYSMAN): what anydev has not allocated.
  const DeviceState& d = device_at(device);
  const std::size_t used = d.allocated.load(std::memory_order_relaxed);
  *total_bytes = d.total_memory;
  *free_bytes = used < d.total_memory ? d.total_memory - used : 0;
  return ANYDEV_SUCCESS;
}

// Not SURVIVES_FORK: the driver's threads and contexts do not survive
// fork(). Device memory is USM: a pointer into an allocation is a pointer
// like any other in copies, fills and kernels.
constexpr anydev_backend_table_t kTable = ANYDEV_KIT_BACKEND_TABLE(
    kBackendName, .native_handle = kit::entry<native_handle>,
    .shareable_alloc = kit::entry<shareable_alloc>, .memory_export = kit::entry<memory_export>,
    .memory_import = kit::entry<memory_import>, .memory_unshare = kit::entry<memory_unshare>,
    .event_create_shareable = kit::entry<event_create_shareable>,
    .event_export = kit::entry<event_export>, .event_import = kit::entry<event_import>,
    .event_create_flags = kit::entry<event_create_flags>,
    .event_elapsed_time = kit::entry<event_elapsed_time>,
    .stream_priority_range = kit::entry<stream_priority_range>,
    .stream_create_priority = kit::entry<stream_create_priority>,
    .host_register = kit::entry<host_register>, .host_unregister = kit::entry<host_unregister>,
    .device_attribute = kit::entry<device_attribute>, .device_uuid = kit::entry<device_uuid>,
    .api_version = kit::entry<api_version>, .graph_create = kit::entry<graph_create>,
    .graph_launch = kit::entry<graph_launch>, .graph_destroy = kit::entry<graph_destroy>,
    .flags = ANYDEV_BK_FLAG_DEVICE_ADDRESS_HANDLES);

}  // namespace anydev::level_zero

ANYDEV_KIT_BACKEND_ENTRY(ANYDEV_BACKEND_EXPORT, anydev_backend_entry, level_zero)
