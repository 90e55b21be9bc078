// SPDX-License-Identifier: Apache-2.0
// One device's slot for anydev's wide fill kernel (lz_fill_kernel.h), kept
// in the device's state (lz_state.h). Written behind its once_flag, then
// only read, and kept for the life of the process (as the driver's context
// is). A kernel's group size and arguments are state of the kernel: `mutex`
// is held from setting them to appending the launch, which copies them.
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_FILL_KERNEL_SLOT_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_FILL_KERNEL_SLOT_H_

#include <level_zero/ze_api.h>

#include <mutex>

namespace anydev::level_zero {

struct LzFillKernel {
  std::once_flag once;
  ze_module_handle_t module = nullptr;
  ze_kernel_handle_t kernel = nullptr;  // null: not loaded
  unsigned units = 0;                   // numSlices x numSubslicesPerSlice
  std::mutex mutex;
};

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_FILL_KERNEL_SLOT_H_
