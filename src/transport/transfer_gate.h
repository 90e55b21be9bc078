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
// A thread that waits at the gate drives the transfers itself where it can:
// the opener names a GateDriver (the communicator), and the waiter runs its
// progress until the gate opens instead of sleeping until another thread
// hands the end over (one waiter per driver at a time; others sleep).
//
// Cost with no transfer open and no error kept: the layer's call and one
// atomic load per gated entry (two for synchronize).
// Thread-safe: one process-wide mutex and condition variable.
#ifndef ANYDEV_SRC_TRANSPORT_TRANSFER_GATE_H_
#define ANYDEV_SRC_TRANSPORT_TRANSFER_GATE_H_

#include <functional>
#include <memory>
#include <string>

#include "anydev/backend.h"

namespace anydev::core::transport {

// What makes a stream's transfers progress on the thread waiting for them.
// Implementations are thread-safe; the gate holds them by weak reference.
class GateDriver {
 public:
  virtual ~GateDriver() = default;
  // Makes progress on the calling thread until done() is true, then returns
  // true; returns false at once when another thread is driving (the caller
  // then sleeps). Called with no gate lock held.
  virtual bool drive(const std::function<bool()>& done) = 0;
};

// Opens a transfer on `stream`: later gated work on it waits until
// gate_close, driving `driver` (when given and alive) while it waits.
// Never fails short of std::bad_alloc.
void gate_open(anydev_bk_stream_t stream, std::weak_ptr<GateDriver> driver = {});
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
