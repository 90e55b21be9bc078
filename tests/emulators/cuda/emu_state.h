// SPDX-License-Identifier: Apache-2.0
// The emulator's devices, primary contexts and per-thread current context.
//
// Devices and their contexts are created by cuInit and live until the process
// exits (never destroyed: stream workers may still run then). A Context's
// fields are guarded by its own mutex, except `sticky`, which is atomic; the
// current-context stack is thread-local, as in the real driver.
//
// Two behaviours of the real driver are emulated here:
//  - sticky errors: an asynchronous fault (CUDA_ERROR_ILLEGAL_ADDRESS from an
//    operation running on a stream) breaks its context; every later call on
//    that context returns the same error, until the primary context's last
//    retain is released (which resets it, as cuDevicePrimaryCtxRelease does);
//  - fork: in a child of a process that called cuInit, every call that needs
//    the driver (cuInit included) returns CUDA_ERROR_NOT_INITIALIZED.
#ifndef ANYDEV_TESTS_EMULATORS_CUDA_EMU_STATE_H_
#define ANYDEV_TESTS_EMULATORS_CUDA_EMU_STATE_H_

#include <cuda.h>

#include <atomic>
#include <mutex>
#include <set>

namespace anydev_emu {

struct Context {
  int device = 0;
  std::mutex mutex;
  int retained = 0;     // cuDevicePrimaryCtxRetain count
  std::set<int> peers;  // devices whose memory this context may access
  // The fault that broke this context (CUDA_SUCCESS while healthy).
  std::atomic<CUresult> sticky{CUDA_SUCCESS};
};

struct Pool;

struct Device {
  int index = 0;
  Context primary;
  Pool* default_pool = nullptr;  // created by cuInit, never destroyed
};

// CUDA_ERROR_NOT_INITIALIZED before a successful cuInit, and in a child
// process forked after it.
CUresult check_initialized();

// Whether `result`, met by an operation running on a stream, breaks its
// context for good (the errors cuda.h documents as leaving "the process in an
// inconsistent state").
bool is_sticky(CUresult result);
// Records the first sticky fault of `context`.
void break_context(Context* context, CUresult fault);
// CUDA_SUCCESS, or the fault that broke `context`.
CUresult sticky_error(const Context* context);
CUresult initialize(unsigned int flags);

int device_count();
// CUDA_ERROR_INVALID_DEVICE for an ordinal that is not a device.
CUresult get_device(CUdevice ordinal, Device** out);
Device* device_at(int index);

// The emulator context behind `handle`, or null when it is not one.
Context* as_context(CUcontext handle);
CUcontext to_handle(Context* context);
// CUDA_ERROR_INVALID_CONTEXT unless the context is retained.
CUresult check_retained(Context* context, const char* api);

// The calling thread's current context (null when none).
Context* current_context();
// CUDA_ERROR_INVALID_CONTEXT (reported with `api`) when no retained context
// is current on the calling thread; the sticky error of a broken one.
CUresult require_current(const char* api, Context** out);
CUresult push_current(Context* context);  // INVALID_VALUE past 256 deep
Context* pop_current();                   // null when the stack is empty
void set_current(Context* context);

}  // namespace anydev_emu

#endif  // ANYDEV_TESTS_EMULATORS_CUDA_EMU_STATE_H_
