// SPDX-License-Identifier: Apache-2.0
// The core's vendor-neutral status: what every core function answers. Each
// face maps it to its API's error code (CUresult, hipError_t, ...).
// A plain enum: thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_STATUS_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_STATUS_H_

namespace anydev_emu::core {

enum class Status {
  success,
  invalid_value,    // a bad argument: null, unknown or freed pointer, bad size
  invalid_handle,   // an unknown or destroyed stream or event
  invalid_device,   // an ordinal that is not a device
  invalid_context,  // the face's notion of "nothing usable is current"
  out_of_memory,    // more bytes than the device (or pinned memory) has
  not_initialized,  // before initialize(), or in a child forked after it
  no_device,        // initialize() with zero devices configured
  not_ready,        // a query: work is still queued
  illegal_address,  // an operation ran on memory freed after it was queued
  not_supported,    // the configuration turns the feature off
  peer_already_enabled,
};

// "illegal address": for messages.
const char* status_text(Status status);

}  // namespace anydev_emu::core

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_STATUS_H_
