// SPDX-License-Identifier: Apache-2.0
// Fault injection (ANYDEV_FAULT=op:n[,op:n...]): the n-th call of a kind
// that reaches the backend fails with that kind's natural status, as if the
// driver had failed, so that every error path of the core can be exercised:
//
//   alloc   host_alloc, device_alloc        -> ANYDEV_ERROR_OUT_OF_MEMORY
//   copy    copy                            -> ANYDEV_ERROR_DEVICE
//   fill    fill                            -> ANYDEV_ERROR_DEVICE
//   event   event_create, event_record      -> ANYDEV_ERROR_DEVICE
//   plugin  a backend's probe (load + init) -> the backend is unavailable
//
// Calls are counted per kind across the process and every backend, from 1,
// including the core's own calls (an event the core records to order two
// streams counts as an event call). The failing call does not reach the
// backend, so it changes nothing. Thread-safe (atomic counters).
#ifndef ANYDEV_SRC_LAYERS_FAULT_INJECTION_H_
#define ANYDEV_SRC_LAYERS_FAULT_INJECTION_H_

#include <string>
#include <string_view>

#include "anydev/backend.h"
#include "layers/layer_config.h"

namespace anydev::core::layers {

// A table wrapping `inner` (layer_table.h) whose alloc/copy/fill/event
// entries count calls and fail the planned ones. Called under the registry
// lock.
const anydev_backend_table_t* wrap_fault_injection(const anydev_backend_table_t* inner);

// Counts a probe of `backend`; returns the reason when this probe is an
// injected failure ("" otherwise). Called under the registry lock.
std::string inject_plugin_fault(std::string_view backend);

// Counts a call of `kind` and returns ANYDEV_SUCCESS, or the injected status
// after setting the last error. `what` names the backend entry.
anydev_status_t count_call(FaultKind kind, const char* backend, const char* what);

}  // namespace anydev::core::layers

#endif  // ANYDEV_SRC_LAYERS_FAULT_INJECTION_H_
