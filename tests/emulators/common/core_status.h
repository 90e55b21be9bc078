// SPDX-License-Identifier: Apache-2.0
// The core's vendor-neutral status: what every core function answers. Each
// face maps it to its API's error code. Its numbers are the ones CUDA's
// driver API (CUresult) and HIP's runtime (hipError_t) both give these errors,
// so those two faces convert with shared_code (their selftests check every
// code they return); a face with other numbers maps it itself.
// A plain enum: thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_STATUS_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_STATUS_H_

namespace anydev_emu::core {

enum class Status {
  success = 0,
  invalid_value = 1,           // a bad argument: null, unknown or freed pointer, bad size
  out_of_memory = 2,           // more bytes than the device (or pinned memory) has
  not_initialized = 3,         // before initialize(), or in a child forked after it
  no_device = 100,             // initialize() with zero devices configured
  invalid_device = 101,        // an ordinal that is not a device
  invalid_context = 201,       // the face's notion of "nothing usable is current"
  invalid_handle = 400,        // an unknown or destroyed stream or event
  not_ready = 600,             // a query: work is still queued
  illegal_address = 700,       // an operation ran on memory freed after it was queued
  peer_already_enabled = 704,  // peer access enabled twice
  not_supported = 801,         // the configuration turns the feature off
};

// The code of `status` in an API that numbers errors as CUDA's driver does.
template <class Code>
constexpr Code shared_code(Status status) {
  return static_cast<Code>(static_cast<int>(status));
}

// "illegal address": for messages.
const char* status_text(Status status);

}  // namespace anydev_emu::core

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_STATUS_H_
