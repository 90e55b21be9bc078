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
//   kHostAllocFlags, kPoolReleaseThresholdAttr
// Functions (all static, thread-safe)
//   status_for, is_sticky_fault, describe          native error -> status/text
//   load(path, driver_t*, std::string* reason)     dlopen + symbols
//   start(driver, int* count, where)               init and count (reports)
//   query_device(index, DeviceState*)              name, memory, description
//   names_its_device(stream_t)                     a call on it needs no scope
//   wants_device_current(status_t)                 retry the call under scope
//   peer(device, peer_t*)                          a peer copy's side
//   memcpy(driver, dst, src, bytes, stream)        one unified-address copy
//   pool_create(driver, device_t, pool_t*)         anydev's pool on a device
//   pool_grant(driver, pool_t, device_t)           read-write access for a peer
//   enable_peer(driver, device, peer)              the device's access to peer
//   check_wrapped_stream(device, stream_t)         for stream_wrap_native
//   native_context(device, void**)                 ANYDEV_NATIVE_CONTEXT
#ifndef ANYDEV_BACKENDS_GPU_GPU_API_H_
#define ANYDEV_BACKENDS_GPU_GPU_API_H_

// The name a symbol table's `names` struct gives each member: the vendor's
// name of the entry point, from its key (each API's key type has a
// constexpr symbol_name overload, found by argument-dependent lookup).
#define ANYDEV_GPU_SYMBOL_NAME_(member, need, type, key) \
  static constexpr const char* member = symbol_name(key);
#define ANYDEV_GPU_SYMBOL_NAMES(LIST) \
  struct names {                      \
    LIST(ANYDEV_GPU_SYMBOL_NAME_)     \
  };

#endif  // ANYDEV_BACKENDS_GPU_GPU_API_H_
