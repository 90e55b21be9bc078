// SPDX-License-Identifier: Apache-2.0
// Device memory accounting of the opencl backend.
//
// OpenCL drivers may create buffers lazily: PoCL "allocated" 1,000 x 64 MiB
// on a 21.5 GiB device and aborted inside the driver when the memory was
// first touched. So the backend counts what it has handed out per device and
// refuses, with OUT_OF_MEMORY at allocation time, any allocation that would
// take the device past its limit, as cuMemAlloc and zeMemAllocDevice do.
//
//  - The limit is CL_DEVICE_GLOBAL_MEM_SIZE, lowered to
//    ANYDEV_OPENCL_MEMORY_LIMIT bytes when that variable is set (for tests
//    and for sharing a device between processes).
//  - Device buffers always count. Pinned host buffers count too when the
//    device shares the host's memory (CL_DEVICE_HOST_UNIFIED_MEMORY, e.g.
//    PoCL's CPU device): there both come out of the same RAM that the
//    device's global memory describes. On a discrete device they do not.
//
// Each Device owns its counter (Device::accounted). Thread-safe: the counter
// is atomic and a reservation never takes the device past its limit, however
// many threads allocate at once.
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_ACCOUNTING_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_ACCOUNTING_H_

#include <cstddef>

#include "opencl_devices.h"

namespace anydev::opencl {

// Whether an allocation of that kind counts against the device's memory.
bool counts_against_device(const Device& device, anydev_bk_memory_kind_t kind);

// Adds `bytes` to the device's accounted memory, or returns OUT_OF_MEMORY
// (error set, naming `operation`, the sizes, the accounted and the limit) and
// changes nothing when that would exceed the device's limit.
anydev_status_t reserve_memory(Device& device, const char* operation, std::size_t bytes);

// Gives back what reserve_memory took. Never fails.
void unreserve_memory(Device& device, std::size_t bytes) noexcept;

// The device's free memory: memory_limit minus what anydev has allocated on
// it, or less when an extension (AMD) reports less.
std::size_t device_free_memory(const Device& device);

// limit - accounted (never below zero).
std::size_t unaccounted_memory(const Device& device);

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_ACCOUNTING_H_
