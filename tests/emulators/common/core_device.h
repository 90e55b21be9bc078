// SPDX-License-Identifier: Apache-2.0
// The emulated devices and each device's one execution context.
//
// Devices and their contexts are created by initialize() and live until the
// process exits (never destroyed: stream workers may still run then). A
// Context's fields are guarded by its own mutex, except `sticky`, which is
// atomic. Which context is current on a thread is the face's business (CUDA:
// a context stack; HIP: a current device).
//
// Two behaviours of real drivers are emulated here:
//  - sticky errors: an asynchronous fault (illegal_address from an operation
//    running on a stream) breaks its context; every later call on that
//    context returns the same error until the face resets it;
//  - fork: in a child of a process that initialized, initialize() and every
//    check_initialized() answer not_initialized.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_DEVICE_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_DEVICE_H_

#include <atomic>
#include <mutex>
#include <set>

#include "core_status.h"

namespace anydev_emu::core {

struct Context {
  int device = 0;
  std::mutex mutex;
  int retained = 0;     // the face's reference count (CUDA's primary-context retains)
  std::set<int> peers;  // devices whose memory this context may access
  // The fault that broke this context (success while healthy).
  std::atomic<Status> sticky{Status::success};
};

struct Pool;

struct Device {
  int index = 0;
  Context primary;
  Pool* default_pool = nullptr;  // created by initialize(), never destroyed
};

// not_initialized before a successful initialize(), and in a child process
// forked after it.
Status check_initialized();
// Creates the configured devices once; flags must be 0 (invalid_value);
// no_device when none are configured; not_initialized in a forked child.
Status initialize(unsigned int flags);

// Whether `status`, met by an operation running on a stream, breaks its
// context for good.
bool is_sticky(Status status);
// Records the first sticky fault of `context`.
void break_context(Context* context, Status fault);
// success, or the fault that broke `context`.
Status sticky_error(const Context* context);

int device_count();
// invalid_device for an ordinal that is not a device.
Status get_device(int ordinal, Device** out);
Device* device_at(int index);

// The context behind an opaque handle, or null when it is not one.
Context* as_context(const void* handle);
void* to_handle(Context* context);

// Lets `current` access `peer`'s memory: invalid_value for flags, invalid_device
// for itself, peer_already_enabled the second time.
Status enable_peer(Context* current, const Context* peer, unsigned int flags);

}  // namespace anydev_emu::core

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_DEVICE_H_
