// SPDX-License-Identifier: Apache-2.0
// anydev's wide fill kernel on Level Zero (lz_fill_kernel.cpp): the SPIR-V of
// kernels/fill_pattern.cl (gpu_fill_kernel.h's contract), made a module with
// zeModuleCreate and a kernel with zeKernelCreate once per device at its
// first fill of a period wider than the device's native fills, then launched
// with one zeCommandListAppendLaunchKernel per such fill, on a stream's
// immediate list or in a graph's regular list. When the loader
// lacks the entry points, the driver refuses the module, or
// ANYDEV_LEVEL_ZERO_FILL_KERNEL=0 turns it off, the log says why once per
// device and lz_transfer.cpp's fill plan writes the fill.
//
// The per-device kernel slot is lz_fill_kernel_slot.h's LzFillKernel.
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_FILL_KERNEL_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_FILL_KERNEL_H_

#include <level_zero/ze_api.h>

#include <cstddef>

#include "gpu_fill_kernel.h"
#include "lz_fill_kernel_slot.h"

namespace anydev::level_zero {

struct DeviceState;
struct LzStream;

// Whether anydev's fill kernel is loaded on `d`; the first call per device
// loads it (or logs once why not). Thread-safe.
bool fill_kernel_ready(DeviceState& d);

// Appends one launch of d's loaded fill kernel (fill_kernel_ready) to
// `list`, a command list of d's context and device: the fill of `bytes`
// bytes at `at` with `period` bytes of `pattern` repeated. The launch keeps
// the argument values of its append. Thread-safe for the kernel; the caller
// owns `list`. On failure *call names the driver call.
ze_result_t append_fill_kernel(DeviceState& d, ze_command_list_handle_t list, void* at,
                               const void* pattern, std::size_t period, std::size_t bytes,
                               const char** call);

// With the stream's mutex held: appends the fill of `bytes` bytes at `at`
// with `period` (8 or 16) bytes of `pattern` repeated, as one launch.
// kUnavailable: nothing appended (the plan fills); kFailed: *r and *call
// say what the driver refused.
gpu::KernelFill fill_by_kernel_locked(LzStream& stream, void* at, const void* pattern,
                                      std::size_t period, std::size_t bytes, ze_result_t* r,
                                      const char** call);

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_FILL_KERNEL_H_
