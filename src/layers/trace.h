// SPDX-License-Identifier: Apache-2.0
// Tracing (ANYDEV_TRACE=file.json): every operation that reaches a backend,
// written as Chrome trace / Perfetto JSON (open it in ui.perfetto.dev or
// chrome://tracing). See docs/tracing.md.
//
// Two kinds of rows: one per host thread (the enqueue call and every blocking
// call: allocations, frees, synchronizes, with their duration) and one per
// stream (the operation's execution). Each operation carries its backend,
// device, stream, bytes, and enqueue, start and end times in microseconds
// since the first traced call; a flow arrow links the enqueue to the
// execution. The backend table has no device clock, so `end` is when the
// tracer's thread saw an event recorded after the operation complete (it polls
// every 50 us) and `start` is the later of the enqueue and the end of the
// previous operation on the same stream (streams run in order).
//
// The file is (re)written whenever the last traced stream is destroyed (the
// last context went) and at exit; each write holds everything so far.
// Thread-safe: one mutex guards the records; a forked child traces nothing
// and never writes the parent's file.
#ifndef ANYDEV_SRC_LAYERS_TRACE_H_
#define ANYDEV_SRC_LAYERS_TRACE_H_

#include "anydev/backend.h"

namespace anydev::core::layers {

// A table wrapping `inner` (layer_table.h). Called under the registry lock.
const anydev_backend_table_t* wrap_trace(const anydev_backend_table_t* inner);

// Waits for the traced operations still running and writes the file now.
void write_trace();

}  // namespace anydev::core::layers

#endif  // ANYDEV_SRC_LAYERS_TRACE_H_
