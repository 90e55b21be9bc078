// SPDX-License-Identifier: Apache-2.0
// How anydev's dtypes and devices map to DLPack's data types and device
// types (the tables in include/anydev/anydev_dlpack.h). A device's DLPack
// device types come from its backend's device_props (its capabilities):
// nothing here knows a backend by name. Thread-safe; dlpack_source may probe
// backends through the registry.
#ifndef ANYDEV_SRC_API_DLPACK_TYPES_H_
#define ANYDEV_SRC_API_DLPACK_TYPES_H_

#include <dlpack/dlpack.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "anydev/anydev.h"
#include "runtime/registry.h"

namespace anydev::core {

// nullopt when the DLPack version exported has no such type: bool (kDLBool)
// exists in the versioned (1.x) tensor only, not in 0.6.
std::optional<DLDataType> to_dlpack_dtype(anydev_dtype_t dtype, bool versioned) noexcept;
// nullopt for lanes != 1 or a code/bits pair anydev has no dtype for
// (kDLBool 8 bits is bool, from either kind of tensor).
std::optional<anydev_dtype_t> from_dlpack_dtype(DLDataType type) noexcept;
// "float32x1", "int(code 7) 8 bits x 1": for messages.
std::string describe_dlpack_dtype(DLDataType type);

// Where an exported buffer's memory lives, for DLPack.
struct DlpackPlacement {
  int device_type;             // DLDeviceType
  int device_id;               // DLDevice.device_id
  bool data_is_native_memory;  // data is the backend's native memory object (a cl_mem)
};
// nullopt when the device declares no DLPack device type for that kind.
std::optional<DlpackPlacement> dlpack_placement(const DeviceRecord& device,
                                                anydev_memory_kind_t kind) noexcept;

// How an imported tensor's memory is used. The backends are the registry's
// (they live for the process).
struct DlpackSource {
  // The backend whose context device memory needs, and that device's index
  // (nullptr: host memory, any context).
  const Backend* backend = nullptr;
  int device = 0;
  bool device_memory = false;  // DeviceBuffer (else HostBuffer)
  // Host memory that is the host memory of this backend (pinned memory),
  // or nullptr.
  const Backend* pinned_by = nullptr;
  // For host memory without a context: the backend whose devices' memory is
  // kDLCPU host memory (the first listed), whose device 0 takes it.
  const Backend* host_default = nullptr;
};
// Finds which backend's memory a tensor on `device_type`:`device_id` is,
// asking the backends of `first` (null entries skipped: the caller's
// context's, the exporter's) before probing the known backends in listing
// order. Fails (error set, naming
// `op` and the device type) when no available backend declares that type,
// or when its memory cannot be imported.
anydev_status_t dlpack_source(const char* op, int device_type, int device_id,
                              std::span<const Backend* const> first, DlpackSource* out);
// "kDLCUDA (2)": for messages.
std::string describe_dlpack_device(int device_type);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_API_DLPACK_TYPES_H_
