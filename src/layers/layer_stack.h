// SPDX-License-Identifier: Apache-2.0
// The layers the registry puts around a backend's function table when it
// probes the backend, from the environment (layer_config.h). Outermost first:
//
//   sync mode (ANYDEV_SYNC) -> fault injection (ANYDEV_FAULT)
//     -> validation (ANYDEV_VALIDATE) -> tracing (ANYDEV_TRACE)
//     -> the backend's own table
//
// so an injected fault never reaches the trace (which shows real work only)
// and synchronous mode waits after the whole operation. With none of the
// variables set the backend's own table is used: no layer, no cost. A build
// with the UCX transport (ANYDEV_TRANSPORT_UCX) adds the transfer gate
// outermost, always (transport/transfer_gate.h).
// The validation layer (validation.h) also checks the C ABI's handles above
// the tables; its table part follows host writes.
//
// Called under the registry lock; thread-safe in that sense.
#ifndef ANYDEV_SRC_LAYERS_LAYER_STACK_H_
#define ANYDEV_SRC_LAYERS_LAYER_STACK_H_

#include <string>
#include <string_view>

#include "anydev/backend.h"

namespace anydev::core::layers {

// Why probing `backend` must fail before its plugin is opened: a malformed
// layer variable, or an injected plugin fault. "" to go on.
std::string probe_failure(std::string_view backend);

// The table to use for a backend whose own table is `table`: `table` itself,
// or the layers around it (each a table of layer_table.h: any number of
// backends can be wrapped).
const anydev_backend_table_t* wrap_backend(const anydev_backend_table_t* table);

}  // namespace anydev::core::layers

#endif  // ANYDEV_SRC_LAYERS_LAYER_STACK_H_
