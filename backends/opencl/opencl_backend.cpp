// SPDX-License-Identifier: Apache-2.0
// The opencl backend's table and entry point, plus the entries about
// devices as a whole: initialize, properties, memory, peers, native handles.
#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdio>
#include <string>

#include "anydev/kit/capabilities.h"
#include "anydev/kit/entry.h"
#include "anydev/kit/structs.h"
#include "anydev/kit/table.h"
#include "opencl_accounting.h"
#include "opencl_entries.h"
#include "opencl_errors.h"
#include "opencl_event.h"
#include "opencl_memory.h"
#include "opencl_services.h"
#include "opencl_stream.h"

namespace anydev::opencl {
namespace {

// The vendor library tried, for anydev-info; lives for the process.
std::string& library_path() {
  static auto* path = new std::string();
  return *path;
}

using kit::copy_text;

}  // namespace

anydev_status_t initialize(const anydev_core_services_t* core, const char** library) {
  set_core_services(core);
  const anydev_status_t status = load_opencl(&library_path());
  if (library != nullptr) *library = library_path().c_str();
  if (status != ANYDEV_SUCCESS) return status;
  return enumerate_devices();
}

anydev_status_t device_count(int* count) {
  if (count == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "device_count: the output is NULL");
  }
  *count = device_count();
  return ANYDEV_SUCCESS;
}

anydev_status_t device_props(int device_index, anydev_bk_device_props_t* props) {
  Device* device = nullptr;
  if (anydev_status_t s = find_device(device_index, "device_props", &device); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (props == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "device_props: the output is NULL");
  }
  copy_text(props->name, device->name);
  copy_text(props->description, device->description);
  props->total_memory = device->memory_limit;
  // Device buffers are cl_mem objects, never host-addressable, even on a CPU device.
  props->host_memory_is_device_accessible = 0;
  // A CPU device (PoCL) is the host's own processor: the default selection
  // prefers accelerators, then anydev's cpu backend, over it.
  if (kit::has_field(props, &anydev_bk_device_props_t::is_host_processor)) {
    props->is_host_processor = (device->type & CL_DEVICE_TYPE_CPU) != 0 ? 1 : 0;
  }
  // Device memory exports as its cl_mem (kDLOpenCL); host memory is mapped
  // host memory (kDLCPU). One cl_context per device: no peers.
  kit::device_capabilities caps;
  caps.dlpack_device_type = kDLOpenCL;
  caps.dlpack_host_device_type = kDLCPU;
  caps.dlpack_device_id = device_index;
  caps.dlpack_data_is_native_memory = true;
  kit::set_capabilities(props, caps);
  return ANYDEV_SUCCESS;
}

anydev_status_t memory_info(int device_index, size_t* free_bytes, size_t* total_bytes) {
  Device* device = nullptr;
  if (anydev_status_t s = find_device(device_index, "memory_info", &device); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (free_bytes != nullptr) *free_bytes = device_free_memory(*device);
  if (total_bytes != nullptr) *total_bytes = device->memory_limit;
  return ANYDEV_SUCCESS;
}

anydev_status_t can_access_peer(int device_index, int peer_index, int* can_access) {
  Device* device = nullptr;
  Device* peer = nullptr;
  if (anydev_status_t s = find_device(device_index, "can_access_peer", &device);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (anydev_status_t s = find_device(peer_index, "can_access_peer", &peer); s != ANYDEV_SUCCESS) {
    return s;
  }
  *can_access = 0;  // one cl_context per device: no buffer is shared between devices
  return ANYDEV_SUCCESS;
}

anydev_status_t enable_peer_access(int device_index, int peer_index) {
  Device* device = nullptr;
  Device* peer = nullptr;
  if (anydev_status_t s = find_device(device_index, "enable_peer_access", &device);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (anydev_status_t s = find_device(peer_index, "enable_peer_access", &peer);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  return set_error(ANYDEV_ERROR_UNSUPPORTED,
                   cat("enable_peer_access: OpenCL device ", device_index,
                       " cannot access the memory of OpenCL device ", peer_index,
                       ": anydev gives each OpenCL device its own cl_context"));
}

anydev_status_t native_handle(int device_index, int kind, void* object, void** out) {
  Device* device = nullptr;
  if (anydev_status_t s = find_device(device_index, "native_handle", &device);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (out == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT, "native_handle: the output is NULL");
  }
  if (kit::native_kind_needs_object(kind) && object == nullptr) {
    return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                     cat("native_handle: kind ", kind, " needs an object, got NULL"));
  }
  switch (kind) {
    case ANYDEV_NATIVE_DEVICE:
      *out = device->id;
      return ANYDEV_SUCCESS;
    case ANYDEV_NATIVE_CONTEXT: {
      cl_context context = nullptr;
      if (anydev_status_t s = device_context(*device, &context); s != ANYDEV_SUCCESS) return s;
      *out = context;
      return ANYDEV_SUCCESS;
    }
    case ANYDEV_NATIVE_STREAM:
      *out = as_stream(static_cast<anydev_bk_stream_t>(object))->queue;
      return ANYDEV_SUCCESS;
    case ANYDEV_NATIVE_EVENT: {
      Event* event = as_event(static_cast<anydev_bk_event_t>(object));
      std::lock_guard<std::mutex> lock(event->mutex);
      *out = event->marker;
      return ANYDEV_SUCCESS;
    }
    case ANYDEV_NATIVE_MEMORY: {
      Allocation allocation;
      if (!find_allocation(object, &allocation)) {
        return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                         cat("native_handle: ", object, " is not a live OpenCL allocation"));
      }
      *out = object;
      return ANYDEV_SUCCESS;
    }
    default:
      return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                       cat("native_handle: unknown native handle kind ", kind));
  }
}

// OpenCL 3.0 has no way to hand a cl_mem or a cl_event to another process
// (no IPC handle, no fd export, and no extension PoCL implements), so the
// sharing entries say so instead of being absent: the user reads why.
constexpr const char* kNoSharing =
    "OpenCL 3.0 has no interprocess sharing (no cl_mem or cl_event can be exported to another "
    "process); share through the cpu backend or a GPU backend (docs/sharing.md)";

anydev_status_t shareable_alloc(int device, anydev_bk_memory_kind_t kind, std::size_t bytes,
                                void** /*handle*/, void** /*address*/) {
  return set_error(ANYDEV_ERROR_UNSUPPORTED,
                   cat("shareable_alloc(device=", device, ", kind=", static_cast<int>(kind),
                       ", bytes=", bytes, "): ", kNoSharing));
}

// Never reached (nothing is ever shared), but the core wants a way back for
// what shareable_alloc could give.
anydev_status_t memory_unshare(int device, anydev_bk_memory_kind_t /*kind*/, void* handle) {
  return set_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                   cat("memory_unshare(device=", device, ", ", handle, "): ", kNoSharing));
}

anydev_status_t memory_import(int device, anydev_bk_memory_kind_t /*kind*/,
                              const anydev_bk_share_t* /*in*/, std::size_t /*bytes*/,
                              void** /*handle*/, void** /*address*/) {
  return set_error(ANYDEV_ERROR_UNSUPPORTED,
                   cat("memory_import(device=", device, "): ", kNoSharing));
}

anydev_status_t event_create_shareable(int device, anydev_bk_event_t* /*out*/) {
  return set_error(ANYDEV_ERROR_UNSUPPORTED,
                   cat("event_create_shareable(device=", device, "): ", kNoSharing));
}

anydev_status_t event_import(int device, const anydev_bk_share_t* /*in*/,
                             anydev_bk_event_t* /*out*/) {
  return set_error(ANYDEV_ERROR_UNSUPPORTED,
                   cat("event_import(device=", device, "): ", kNoSharing));
}

// memory_free_async stays null: the core waits on an event, then memory_free.
// Device memory is a cl_mem, given as its own address, and every entry takes
// it with an offset: the core may carve small buffers out of one.
constexpr anydev_backend_table_t kTable = ANYDEV_KIT_BACKEND_TABLE(
    kBackendName, .native_handle = kit::entry<native_handle>,
    .stream_wrap_native = kit::entry<stream_wrap_native>,
    .memory_is_locked = kit::entry<memory_is_locked>,
    .shareable_alloc = kit::entry<shareable_alloc>, .memory_import = kit::entry<memory_import>,
    .memory_unshare = kit::entry<memory_unshare>,
    .event_create_shareable = kit::entry<event_create_shareable>,
    .event_import = kit::entry<event_import>, .event_create_flags = kit::entry<event_create_flags>,
    .event_elapsed_time = kit::entry<event_elapsed_time>,
    .stream_priority_range = kit::entry<stream_priority_range>,
    .stream_create_priority = kit::entry<stream_create_priority>,
    .host_register = kit::entry<host_register>, .host_unregister = kit::entry<host_unregister>,
    .device_attribute = kit::entry<device_attribute>, .device_uuid = kit::entry<device_uuid>,
    .api_version = kit::entry<api_version>, .graph_create = kit::entry<graph_create>,
    .graph_launch = kit::entry<graph_launch>, .graph_destroy = kit::entry<graph_destroy>,
    .flags = ANYDEV_BK_FLAG_DEVICE_OBJECT_OFFSETS);

}  // namespace anydev::opencl

ANYDEV_KIT_BACKEND_ENTRY(ANYDEV_BACKEND_EXPORT, anydev_backend_entry, opencl)
