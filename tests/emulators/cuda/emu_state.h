// SPDX-License-Identifier: Apache-2.0
// The CUDA face over the emulator core (tests/emulators/common): core status
// to CUresult, primary contexts and the per-thread current context, and the
// CUDA handles of the core's streams and events.
//
// Contexts are the core's (one primary context per device, never destroyed);
// the current-context stack is thread-local, as in the real driver. On top of
// the core's sticky errors: the primary context's last release resets it,
// which clears its sticky fault (as cuDevicePrimaryCtxRelease does).
// Thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_CUDA_EMU_STATE_H_
#define ANYDEV_TESTS_EMULATORS_CUDA_EMU_STATE_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "core_device.h"
#include "core_kernels.h"
#include "core_pool.h"
#include "core_status.h"
#include "core_stream.h"

namespace anydev_emu {

using core::Context;
using core::Device;
using core::EventRef;
using core::StreamRef;

// The CUresult of a core status.
CUresult cu(core::Status status);

// CUDA_ERROR_NOT_INITIALIZED before a successful cuInit, and in a child
// process forked after it.
CUresult check_initialized();
// CUDA_ERROR_INVALID_DEVICE for an ordinal that is not a device.
CUresult get_device(CUdevice ordinal, Device** out);

// The emulator context behind `handle`, or null when it is not one.
Context* as_context(CUcontext handle);
CUcontext to_handle(Context* context);
// CUDA_ERROR_INVALID_CONTEXT unless the context is retained.
CUresult check_retained(Context* context, const char* api);

// The calling thread's current context (null when none).
Context* current_context();
// CUDA_ERROR_NOT_INITIALIZED as check_initialized(); then
// CUDA_ERROR_INVALID_CONTEXT (reported with `api`) when no retained context
// is current on the calling thread; the sticky error of a broken one.
CUresult require_current(const char* api, Context** out);
CUresult push_current(Context* context);  // INVALID_VALUE past 256 deep
Context* pop_current();                   // null when the stack is empty
void set_current(Context* context);

// These two answer check_initialized() first.
// The stream behind `handle`: a live created stream, or for 0,
// CU_STREAM_LEGACY and CU_STREAM_PER_THREAD the default stream of the current
// context. CUDA_ERROR_INVALID_HANDLE (reported with `api`) otherwise; the
// sticky error when the stream's context is broken; the rule of
// ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT (emu_config.h).
CUresult lookup_stream(CUstream handle, const char* api, StreamRef* out);
// A live event; INVALID_HANDLE when unknown, the sticky error when its
// context is broken; the rule of ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT.
CUresult lookup_event(CUevent handle, const char* api, EventRef* out);

// Device memory of `device` from `pool` (null for cuMemAlloc): the core's
// allocate_device with a CUdeviceptr (api_memory.cpp).
CUresult allocate_device(int device, size_t bytes, CUdeviceptr* out, const char* api,
                         core::Pool* pool);

// The entry behind a function of a loaded module, and the context the
// module is loaded in; CUDA_ERROR_INVALID_HANDLE (reported with `api`) for
// anything else (api_module.cpp).
CUresult function_entry(CUfunction function, const char* api, core::KernelEntry* entry,
                        Context** context);
// CUDA_ERROR_INVALID_VALUE (reported) for a launch the emulator cannot
// perform: an empty grid or block, more than 1024 threads a block, shared
// memory or `extra`.
CUresult check_launch_shape(const char* api, std::uint64_t grid, std::uint64_t block,
                            unsigned shared_bytes, void** extra);

}  // namespace anydev_emu

#endif  // ANYDEV_TESTS_EMULATORS_CUDA_EMU_STATE_H_
