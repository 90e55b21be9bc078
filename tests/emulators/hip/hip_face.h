// SPDX-License-Identifier: Apache-2.0
// The HIP face over the emulator core (tests/emulators/common): core status
// to hipError_t, the implicit initialization, the per-thread current device,
// call counting and the HIP handles of the core's streams and events.
//
// HIP has no contexts: each device's core context stands for the device. The
// current device is thread-local (default 0), as in the real runtime; a
// stream or event belongs to the device current when it was created, and the
// null stream (0 or hipStreamPerThread) is the current device's. Sticky
// faults stay for the process (the emulator exports no hipDeviceReset).
// Thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_HIP_HIP_FACE_H_
#define ANYDEV_TESTS_EMULATORS_HIP_HIP_FACE_H_

#include <hip/hip_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core_device.h"
#include "core_kernels.h"
#include "core_memory.h"
#include "core_pool.h"
#include "core_status.h"
#include "core_stream.h"
#include "hip_calls.h"

namespace anydev_emu::hip {

enum class Call {
#define ANYDEV_HIP_EMULATOR_ENUM(name) name,
  ANYDEV_HIP_EMULATOR_CALLS(ANYDEV_HIP_EMULATOR_ENUM)
#undef ANYDEV_HIP_EMULATOR_ENUM
      count
};

// Counts one call of `call` (every exported function starts with it).
void count(Call call);

// The hipError_t of a core status.
hipError_t to_hip(core::Status status);

// The runtime initializes itself at the first call: hipErrorNoDevice with no
// device configured, hipErrorNotInitialized in a child forked after it.
hipError_t ready();

// The calling thread's current device (ready() first).
int current_device();
void set_current_device(int device);
// ready(), then the current device's context; its sticky fault if broken.
hipError_t current(core::Context** out);
// ready(), then the device behind an ordinal: hipErrorInvalidDevice.
hipError_t device_of(int ordinal, core::Device** out);

// ready(), then the stream behind `handle`: a live created stream, or for 0
// and hipStreamPerThread the current device's null stream.
// hipErrorInvalidHandle (reported with `api`) otherwise; the sticky fault.
hipError_t stream_of(hipStream_t handle, const char* api, core::StreamRef* out);
// ready(), then a live event, likewise.
hipError_t event_of(hipEvent_t handle, const char* api, core::EventRef* out);

// Device memory of `device` from `pool` (null: hipMalloc), as a void*; the
// core's checks (api_memory.cpp).
hipError_t allocate(int device, size_t bytes, void** out, const char* api, core::Pool* pool);

// Queues a fill of `count` elements of `element` bytes (the low bytes of
// `value`) in each of `height` rows `pitch` bytes apart (api_transfer.cpp).
hipError_t fill(const char* api, hipStream_t stream, void* dst, std::uint32_t value, size_t element,
                size_t count, size_t height, size_t pitch);

// What each side of a copy of `kind` may be; false for a kind HIP lacks
// (api_transfer.cpp).
bool copy_access(hipMemcpyKind kind, core::Access* dst, core::Access* src);
// The device properties of `ordinal` into `out` (a hipDeviceProp_t in HIP
// 5's layout): hipGetDeviceProperties, hipGetDevicePropertiesR0000
// (api_module.cpp).
hipError_t device_properties(void* out, int ordinal);

// The kernel behind a function of a loaded module and the context (device)
// it was loaded for; hipErrorInvalidResourceHandle, reported with `api`,
// for anything else (api_module.cpp).
hipError_t function_entry(hipFunction_t function, const char* api, core::KernelEntry* entry,
                          core::Context** context);

// hipRuntimeGetVersion's answer: the variant's (variant_5.cpp, variant_7.cpp).
int runtime_version();

}  // namespace anydev_emu::hip

#endif  // ANYDEV_TESTS_EMULATORS_HIP_HIP_FACE_H_
