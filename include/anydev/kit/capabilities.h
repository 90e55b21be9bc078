// SPDX-License-Identifier: Apache-2.0
// A device's capabilities (see anydev_bk_device_props_t in
// include/anydev/backend.h) as one value a backend fills, and writing them
// into the core's props struct field by field (only the fields the caller's
// struct_size holds); and the fill pattern sizes the backend ABI allows, the
// one check of them that the core and every backend use. Stateless,
// thread-safe.
#ifndef ANYDEV_KIT_CAPABILITIES_H_
#define ANYDEV_KIT_CAPABILITIES_H_

#include <cstddef>
#include <cstdint>

#include "anydev/backend.h"
#include "anydev/kit/structs.h"

namespace anydev::kit {

// The pattern sizes fill takes and a device's max_fill_pattern may be, in
// bytes, and their spelling in messages.
constexpr bool valid_fill_pattern_size(std::size_t bytes) {
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16;
}
inline constexpr const char* kFillPatternSizes = "1, 2, 4, 8 or 16";

// The capability fields of anydev_bk_device_props_t; zero: none.
struct device_capabilities {
  std::int32_t dlpack_device_type = 0;
  std::int32_t dlpack_host_device_type = 0;
  std::int32_t dlpack_device_id = 0;
  bool dlpack_data_is_native_memory = false;
  bool device_memory_is_host_accessible = false;
  bool stream_ordered_free = false;
  bool peer_access = false;
  std::uint32_t max_fill_pattern = 16;
};

// Writes `caps` into `props` (each field only when props->struct_size holds it).
inline void set_capabilities(anydev_bk_device_props_t* props, const device_capabilities& caps) {
  using Props = anydev_bk_device_props_t;
#define ANYDEV_KIT_SET_CAPABILITY_(field, value) \
  if (has_field(props, &Props::field)) props->field = (value);
  ANYDEV_KIT_SET_CAPABILITY_(dlpack_device_type, caps.dlpack_device_type)
  ANYDEV_KIT_SET_CAPABILITY_(dlpack_host_device_type, caps.dlpack_host_device_type)
  ANYDEV_KIT_SET_CAPABILITY_(dlpack_device_id, caps.dlpack_device_id)
  ANYDEV_KIT_SET_CAPABILITY_(dlpack_data_is_native_memory, caps.dlpack_data_is_native_memory)
  ANYDEV_KIT_SET_CAPABILITY_(device_memory_is_host_accessible,
                             caps.device_memory_is_host_accessible)
  ANYDEV_KIT_SET_CAPABILITY_(stream_ordered_free, caps.stream_ordered_free)
  ANYDEV_KIT_SET_CAPABILITY_(peer_access, caps.peer_access)
  ANYDEV_KIT_SET_CAPABILITY_(max_fill_pattern, caps.max_fill_pattern)
#undef ANYDEV_KIT_SET_CAPABILITY_
}

}  // namespace anydev::kit

#endif  // ANYDEV_KIT_CAPABILITIES_H_
