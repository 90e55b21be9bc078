// SPDX-License-Identifier: Apache-2.0
// The GPU core (backends/gpu/): the backend logic that CUDA and HIP share,
// written once as templates over an API-traits type and instantiated once in
// each plugin (cuda_api.h, hip_api.h). This page states what a traits type
// `Api` provides; the core reads nothing else of the vendor API.
//
// Types
//   status_t, stream_t, event_t, pool_t   the native result, stream, event and
//                                         memory-pool types
//   device_t                              the native device (CUdevice, an int)
//   device_ptr                            a device address as the memsets and
//                                         copies take it (CUdeviceptr, void*)
//   peer_t                                what a peer copy names a side by: a
//                                         CUcontext (CUDA) or an ordinal (HIP)
//   driver_t                              the symbol table (X-macro fields:
//                                         StreamCreate, MemcpyPeerAsync, ...,
//                                         with the same member names and
//                                         argument order in both APIs) and a
//                                         nested `names` struct of each
//                                         member's vendor name for messages
//   device_extra                          what a device holds beyond the core's
//                                         DeviceState (CUDA: its primary
//                                         context); default-constructible
//   scope                                 RAII: makes a device current for
//                                         calls that need it and restores the
//                                         caller's at the end; enter(device,
//                                         operation) -> anydev_status_t
// Constants
//   kName ("cuda"), kVendor ("CUDA"), kDriverWhat ("CUDA driver"),
//   kLibraryWhat ("CUDA driver library"), kLibraryHint (after a dlopen failure),
//   kLibraryVariable, kPoolsVariable, kDefaultLibraries (a null-terminated
//   list tried in order), kContextWhat (what a sticky fault breaks),
//   kDLDevice/kDLHost (DLPack), kSuccess, kNotReady, kInvalidValue,
//   kPeerAlreadyEnabled, kScopeFailed (returned by call_on_stream when the
//   device could not be made current), kStreamFlags, kEventFlags,
//   kHostAllocFlags, kPoolReleaseThresholdAttr; for anydev's pools (the
//   props and access structs have the same fields in both APIs):
//   pool_props, access_desc, kPoolPinned, kPoolNoHandle, kLocationDevice,
//   kAccessReadWrite, kTableFlags (the table's ANYDEV_BK_FLAG_*: CUDA
//   declares its reserved default streams 1 and 2)
// Functions (all static, thread-safe)
//   status_for, is_sticky_fault, describe          native error -> status/text
//   load(path, driver_t*, std::string* reason)     dlopen + symbols
//   start(driver, int* count, where)               init and count (reports)
//   query_device(index, DeviceState*)              name, memory, description
//   names_its_device(stream_t)                     a call on it needs no scope
//   wants_device_current(status_t)                 retry the call under scope
//   peer(device, peer_t*)                          a peer copy's side
//   memcpy(driver, dst, src, bytes, stream)        one unified-address copy
//   enable_peer(driver, device, peer)              the device's access to peer
//   check_wrapped_stream(device, stream_t)         for stream_wrap_native
//   native_context(device, void**)                 ANYDEV_NATIVE_CONTEXT
// Optional
//   fill_kernel(stream, WideFillArgs, status_t*, const char** call)
//                                                  a fill of an 8- or 16-byte
//                                                  period as one launch of
//                                                  anydev's fill kernel
//                                                  (gpu_transfer.h, CUDA only)
#ifndef ANYDEV_BACKENDS_GPU_GPU_API_H_
#define ANYDEV_BACKENDS_GPU_GPU_API_H_

#include <initializer_list>
#include <string>

#include "anydev/backend.h"
#include "anydev/kit/symbols.h"

namespace anydev::gpu {

template <class Api>
struct DeviceState;

// One row of a native result -> status table: `status` for each result listed.
template <class Status>
struct StatusRow {
  anydev_status_t status;
  std::initializer_list<Status> results;
};

// The status of the first row that lists `result`, else `otherwise`.
template <class Status>
constexpr anydev_status_t map_result(Status result, std::initializer_list<StatusRow<Status>> rows,
                                     anydev_status_t otherwise) {
  for (const StatusRow<Status>& row : rows) {
    for (const Status listed : row.results) {
      if (listed == result) return row.status;
    }
  }
  return otherwise;
}

// Whether `result` is one of `set`.
template <class Status>
constexpr bool is_one_of(Status result, std::initializer_list<Status> set) {
  return map_result(result, {{ANYDEV_ERROR_DEVICE, set}}, ANYDEV_SUCCESS) != ANYDEV_SUCCESS;
}

}  // namespace anydev::gpu

// The name a symbol table's `names` struct gives each member: the vendor's
// name of the entry point, from its key (each API's key type has a
// constexpr symbol_name overload, found by argument-dependent lookup).
#define ANYDEV_GPU_SYMBOL_NAME_(member, need, type, key) \
  static constexpr const char* member = symbol_name(key);
#define ANYDEV_GPU_SYMBOL_NAMES(LIST) \
  struct names {                      \
    LIST(ANYDEV_GPU_SYMBOL_NAME_)     \
  };

// The fields of an API's symbol table (driver_t): one per entry of LIST, the
// `names` struct, and the library asked for and opened.
#define ANYDEV_GPU_DRIVER_FIELDS(LIST)                    \
  ANYDEV_KIT_SYMBOL_FIELDS(LIST)                          \
  ANYDEV_GPU_SYMBOL_NAMES(LIST)                           \
  std::string requested_path; /* what dlopen was given */ \
  std::string opened_path;    /* the file the dynamic loader opened */

// The static functions every traits type defines in its own .cpp files
// (this page's "Functions"), for the API `Self` with result type `Status`
// and symbol table `Driver`.
#define ANYDEV_GPU_API_FUNCTIONS(Self, Status, Driver)                                \
  static anydev_status_t status_for(Status result);                                   \
  static bool is_sticky_fault(Status result);                                         \
  static std::string describe(Status result);                                         \
  static bool load(void* library, const std::string& path, const std::string& opened, \
                   Driver* driver, std::string* reason);                              \
  static anydev_status_t start(const Driver& driver, int* count);                     \
  static anydev_status_t query_device(int index, ::anydev::gpu::DeviceState<Self>* d, \
                                      bool* pools);                                   \
  static std::string library_text(const Driver& driver);                              \
  static anydev_status_t enable_peer(int device, int peer, const std::string& what);  \
  static anydev_status_t native_context(int device, void** out);

#endif  // ANYDEV_BACKENDS_GPU_GPU_API_H_
