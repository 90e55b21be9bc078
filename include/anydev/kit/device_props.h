// SPDX-License-Identifier: Apache-2.0
// The part of device_props that every backend answers the same way: the
// device's name, description and total memory, and whether host code can
// address its device buffers, each written only when the caller's struct
// holds the field (kit_structs.h). Stateless, thread-safe.
#ifndef ANYDEV_KIT_DEVICE_PROPS_H_
#define ANYDEV_KIT_DEVICE_PROPS_H_

#include <anydev/backend.h>

#include <cstddef>
#include <string>

#include "anydev/kit/structs.h"

namespace anydev::kit {

inline void set_basic_device_props(anydev_bk_device_props_t* props, const std::string& name,
                                   const std::string& description, std::size_t total_memory,
                                   bool host_can_address_device_memory) {
  using Props = anydev_bk_device_props_t;
  if (has_field(props, &Props::name)) copy_text(props->name, name);
  if (has_field(props, &Props::description)) copy_text(props->description, description);
  if (has_field(props, &Props::total_memory)) props->total_memory = total_memory;
  if (has_field(props, &Props::host_memory_is_device_accessible)) {
    props->host_memory_is_device_accessible = host_can_address_device_memory ? 1 : 0;
  }
}

}  // namespace anydev::kit

#endif  // ANYDEV_KIT_DEVICE_PROPS_H_
