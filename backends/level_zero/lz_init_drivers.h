// SPDX-License-Identifier: Apache-2.0
// zeInitDrivers (Level Zero 1.10), which Debian's 1.4 headers do not declare:
// the descriptor and the function type, spelled from the specification. Used
// only when the loader exports the symbol (the 1.8 loader does not).
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_INIT_DRIVERS_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_INIT_DRIVERS_H_

#include <level_zero/ze_api.h>

#include <cstdint>

namespace anydev::level_zero {

// ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC and ZE_INIT_DRIVER_TYPE_FLAG_GPU.
inline constexpr std::uint32_t kInitDriverTypeDescType = 0x00020021;
inline constexpr std::uint32_t kInitDriverTypeFlagGpu = 1u << 0;

// ze_init_driver_type_desc_t.
struct InitDriverTypeDesc {
  std::uint32_t stype = kInitDriverTypeDescType;
  const void* pNext = nullptr;
  std::uint32_t flags = kInitDriverTypeFlagGpu;
};

using InitDriversFn = ze_result_t(ZE_APICALL*)(std::uint32_t* count, ze_driver_handle_t* drivers,
                                               InitDriverTypeDesc* desc);

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_INIT_DRIVERS_H_
