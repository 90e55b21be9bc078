// How anydev's dtypes and backends map to DLPack's data types and device
// types (the tables in include/anydev/anydev_dlpack.h). Pure and
// thread-safe.
#ifndef ANYDEV_SRC_DLPACK_TYPES_H_
#define ANYDEV_SRC_DLPACK_TYPES_H_

#include <dlpack/dlpack.h>

#include <optional>
#include <string>
#include <string_view>

#include "anydev/anydev.h"

namespace anydev::core {

// nullopt when DLPack (this header's version) has no such type (bool in 0.6).
std::optional<DLDataType> to_dlpack_dtype(anydev_dtype_t dtype) noexcept;
// nullopt for lanes != 1 or a code/bits pair anydev has no dtype for.
std::optional<anydev_dtype_t> from_dlpack_dtype(DLDataType type) noexcept;
// "float32x1", "int(code 7) 8 bits x 1": for messages.
std::string describe_dlpack_dtype(DLDataType type);

// Where an exported buffer's memory lives, for DLPack.
struct DlpackPlacement {
  int device_type;      // DLDeviceType
  bool data_is_cl_mem;  // OpenCL device memory: data is the cl_mem
};
// nullopt when the backend (by name) has no DLPack device for that kind.
std::optional<DlpackPlacement> dlpack_placement(std::string_view backend,
                                                anydev_memory_kind_t kind) noexcept;

// How an imported tensor's memory is used.
struct DlpackSource {
  const char* backend;    // the backend whose context it needs (nullptr: any; default cpu)
  bool device_memory;     // DeviceBuffer (else HostBuffer)
  const char* pinned_by;  // host memory that is pinned memory of this backend (or nullptr)
};
// nullopt for a device type anydev cannot import.
std::optional<DlpackSource> dlpack_source(int device_type) noexcept;
// "kDLCUDA (2)": for messages.
std::string describe_dlpack_device(int device_type);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_DLPACK_TYPES_H_
