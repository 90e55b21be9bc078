// SPDX-License-Identifier: Apache-2.0
// The transfer gate: how work enqueued on a stream after a transfer waits
// for it. Backend ABI 3 has no entry for "this stream waits for a host
// event", so the gate holds the later work back on the host instead: a layer
// around every backend's table (layers/layer_stack.cpp) makes each entry
// that enqueues on, records on, waits on or synchronizes a stream first wait
// until the transfers open on that stream have finished. The caller that
// enqueues such work blocks until then (bounded: every transfer ends within
// its timeout). stream_synchronize also returns, once, the first error of a
// transfer that ran on the stream since the previous synchronize.
//
// Transfers enqueued back to back on one stream do not wait for each other
// (many may be in flight, tags may match out of order); the transport makes
// its own backend calls inside a GateBypass scope.
//
// Cost with no transfer open and no error kept: the layer's call and one
// atomic load per gated entry (two for synchronize).
// Thread-safe: one process-wide mutex and condition variable.
#ifndef ANYDEV_SRC_TRANSPORT_TRANSFER_GATE_H_
#define ANYDEV_SRC_TRANSPORT_TRANSFER_GATE_H_

#include <string>

#include "anydev/backend.h"

namespace anydev::core::transport {

// Opens a transfer on `stream`: later gated work on it waits until
// gate_close. Never fails short of std::bad_alloc.
void gate_open(anydev_bk_stream_t stream);
// Closes one transfer opened on `stream`. A status other than SUCCESS is
// kept (the first since the last synchronize) for stream_synchronize.
void gate_close(anydev_bk_stream_t stream, anydev_status_t status, const std::string& message);

// While one lives, this thread's backend calls pass the gate unchecked.
class GateBypass {
 public:
  GateBypass();
  ~GateBypass();
  GateBypass(const GateBypass&) = delete;
  GateBypass& operator=(const GateBypass&) = delete;
};

// The gate's layer around `inner` (a table of layers/layer_table.h).
const anydev_backend_table_t* wrap_transfer_gate(const anydev_backend_table_t* inner);

}  // namespace anydev::core::transport

#endif  // ANYDEV_SRC_TRANSPORT_TRANSFER_GATE_H_
