// SPDX-License-Identifier: Apache-2.0
// A GPU backend's table (backend ABI 3) and its plugin entry point, built
// from the core's templates for one API (gpu_api.h). Include once, in the
// plugin's one instantiating file, and write there
//
//   ANYDEV_GPU_BACKEND_ENTRY(::anydev::cuda::CudaApi)
//
// which defines anydev_backend_entry. Compile-time only: the table is a
// constant; the entry point stores the core's services (thread-safe).
#ifndef ANYDEV_BACKENDS_GPU_GPU_TABLE_H_
#define ANYDEV_BACKENDS_GPU_GPU_TABLE_H_

#include "anydev/backend.h"
#include "anydev/kit/entry.h"
#include "anydev/kit/table.h"
#include "gpu_attributes.h"
#include "gpu_backend.h"
#include "gpu_graph.h"
#include "gpu_memory.h"
#include "gpu_native.h"
#include "gpu_peer.h"
#include "gpu_priority.h"
#include "gpu_register.h"
#include "gpu_share.h"
#include "gpu_streams.h"
#include "gpu_timing.h"
#include "gpu_transfer.h"

namespace anydev::gpu {

// Every entry the core offers, memory_is_locked excepted. The flags are the
// API's (kTableFlags), never ANYDEV_BK_FLAG_SURVIVES_FORK: the drivers'
// threads and contexts do not survive fork().
template <class Api>
constexpr anydev_backend_table_t backend_table() {
  anydev_backend_table_t t = kit::table_header(Api::kName);
#define ANYDEV_GPU_SET_ENTRY_(name) t.name = kit::entry<&name<Api>>;
  ANYDEV_KIT_REQUIRED_ENTRIES(ANYDEV_GPU_SET_ENTRY_)
  ANYDEV_GPU_SET_ENTRY_(memory_free_async)
  ANYDEV_GPU_SET_ENTRY_(native_handle)
  ANYDEV_GPU_SET_ENTRY_(stream_wrap_native)
  ANYDEV_GPU_SET_ENTRY_(shareable_alloc)
  ANYDEV_GPU_SET_ENTRY_(memory_export)
  ANYDEV_GPU_SET_ENTRY_(memory_import)
  ANYDEV_GPU_SET_ENTRY_(memory_unshare)
  ANYDEV_GPU_SET_ENTRY_(event_create_shareable)
  ANYDEV_GPU_SET_ENTRY_(event_export)
  ANYDEV_GPU_SET_ENTRY_(event_import)
  ANYDEV_GPU_SET_ENTRY_(event_create_flags)
  ANYDEV_GPU_SET_ENTRY_(event_elapsed_time)
  ANYDEV_GPU_SET_ENTRY_(stream_priority_range)
  ANYDEV_GPU_SET_ENTRY_(stream_create_priority)
  ANYDEV_GPU_SET_ENTRY_(host_register)
  ANYDEV_GPU_SET_ENTRY_(host_unregister)
  ANYDEV_GPU_SET_ENTRY_(device_attribute)
  ANYDEV_GPU_SET_ENTRY_(device_uuid)
  ANYDEV_GPU_SET_ENTRY_(api_version)
  ANYDEV_GPU_SET_ENTRY_(graph_create)
  ANYDEV_GPU_SET_ENTRY_(graph_launch)
  ANYDEV_GPU_SET_ENTRY_(graph_destroy)
#undef ANYDEV_GPU_SET_ENTRY_
  t.flags = Api::kTableFlags;
  return t;
}

template <class Api>
inline constexpr anydev_backend_table_t kTable = backend_table<Api>();

}  // namespace anydev::gpu

#define ANYDEV_GPU_BACKEND_ENTRY(Api)                                                             \
  extern "C" ANYDEV_BACKEND_EXPORT anydev_status_t anydev_backend_entry(                          \
      uint32_t core_abi_version, const anydev_core_services_t* core,                              \
      const anydev_backend_table_t** out) {                                                       \
    return ::anydev::kit::backend_entry(::anydev::gpu::services<Api>, ::anydev::gpu::kTable<Api>, \
                                        core_abi_version, core, out);                             \
  }

#endif  // ANYDEV_BACKENDS_GPU_GPU_TABLE_H_
