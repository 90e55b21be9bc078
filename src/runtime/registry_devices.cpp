// SPDX-License-Identifier: Apache-2.0
#include "runtime/registry_devices.h"

#include "anydev/kit/capabilities.h"
#include "support/status.h"

namespace anydev::core {

std::string check_capabilities(int device, const anydev_bk_device_props_t& props) {
  const std::uint32_t pattern = props.max_fill_pattern;
  if (!kit::valid_fill_pattern_size(pattern)) {
    return cat("device_props(", device, ") reported max_fill_pattern ", pattern, "; it must be ",
               kit::kFillPatternSizes, " bytes (backend ABI ", ANYDEV_BACKEND_ABI_VERSION, ")");
  }
  if (props.dlpack_device_type < 0 || props.dlpack_host_device_type < 0) {
    return cat("device_props(", device, ") reported the DLPack device types ",
               props.dlpack_device_type, " (device memory) and ", props.dlpack_host_device_type,
               " (host memory); 0 means none, negative values are invalid");
  }
  return {};
}

DeviceRecord device_record(const anydev_bk_device_props_t& props) {
  DeviceRecord record;
  record.name = props.name;
  record.description = props.description;
  record.total_memory = props.total_memory;
  record.host_processor = props.is_host_processor != 0;
  record.dlpack_device_type = props.dlpack_device_type;
  record.dlpack_host_device_type = props.dlpack_host_device_type;
  record.dlpack_device_id = props.dlpack_device_id;
  record.dlpack_data_is_native_memory = props.dlpack_data_is_native_memory != 0;
  record.device_memory_is_host_accessible = props.device_memory_is_host_accessible != 0;
  record.stream_ordered_free = props.stream_ordered_free != 0;
  record.peer_access = props.peer_access != 0;
  record.max_fill_pattern = props.max_fill_pattern;
  return record;
}

}  // namespace anydev::core
