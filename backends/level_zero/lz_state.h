// SPDX-License-Identifier: Apache-2.0
// What the level_zero backend knows once initialize has run: the loader's
// entry points, one DriverState (its context and event slots) per Level Zero
// driver, and one DeviceState per root device of every driver, in driver
// order.
//
// Ownership and thread safety: initialize (called once, under the core's
// registry lock) fills BackendState, which is never destroyed: the loader,
// the contexts and the event pools live until the process exits (streams'
// workers in the driver may still run then). Afterwards only the atomic
// `allocated` counters and the event slots (their own mutex) change, so any
// entry may read the state from any thread.
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_STATE_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_STATE_H_

#include <level_zero/ze_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "anydev/backend.h"
#include "anydev/kit/symbols.h"
#include "lz_event_slots.h"
#include "lz_fill_kernel_slot.h"
#include "lz_symbols.h"

namespace anydev::level_zero {

struct DriverState {
  ze_driver_handle_t driver = nullptr;
  ze_context_handle_t context = nullptr;  // one per driver, for the process
  std::unique_ptr<EventSlots> events;     // host-visible events of `context`
  // Host-visible kernel-timestamp events, for records of timing events
  // (lz_timing.cpp); null when the loader lacks zeEventQueryKernelTimestamp.
  std::unique_ptr<EventSlots> timestamp_events;
  std::string version;  // "1.4, driver version 0x..."
  // Whether streams ask for in-order command lists (lz_streams.cpp): set at
  // initialize when the driver reports API 1.7 or later, cleared for good
  // when a creation with the flag is refused as an unknown enumerator (a
  // validation layer of an older loader between anydev and the driver).
  std::atomic<bool> in_order_lists{false};
};

struct DeviceState {
  int index = 0;
  DriverState* driver = nullptr;
  ze_device_handle_t device = nullptr;
  std::string name;
  std::string description;
  std::size_t total_memory = 0;
  // The command queue group streams use (the first with compute, else the
  // first with copy) and its largest native fill pattern.
  std::uint32_t queue_ordinal = 0;
  std::size_t max_native_fill = 0;
  std::atomic<std::size_t> allocated{0};  // device memory anydev holds
  // From ze_device_properties_t: nanoseconds per timestamp tick, and the
  // valid low bits of a kernel timestamp (lz_timing.cpp).
  std::uint64_t timer_resolution_ns = 1;
  std::uint32_t kernel_timestamp_bits = 64;
  LzFillKernel fill_kernel;  // anydev's wide fill kernel (lz_fill_kernel_slot.h)
};

struct BackendState {
  LoaderApi api;
  std::vector<std::unique_ptr<DriverState>> drivers;
  std::vector<std::unique_ptr<DeviceState>> devices;
};

BackendState& backend_state();
inline const LoaderApi& api() { return backend_state().api; }

// OUT_OF_RANGE (reported, naming `operation`) unless 0 <= device < count.
anydev_status_t check_device(int device, const char* operation);
inline DeviceState& device_at(int device) {
  return *backend_state().devices[static_cast<std::size_t>(device)];
}

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_STATE_H_
