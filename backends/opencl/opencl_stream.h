// SPDX-License-Identifier: Apache-2.0
// An anydev stream on OpenCL: one in-order cl_command_queue, plus the events
// of the commands enqueued since the last synchronize, kept so that an
// asynchronous failure (a command whose event ends with a negative status)
// is reported, once, by the next synchronize.
//
// Backpressure: at most kMaxCommandsInFlight tracked commands per stream are
// enqueued and not yet known complete. Before enqueuing, admit_command waits
// (in the calling thread, holding no lock) until the stream is below that
// bound, as the CUDA driver blocks a launching thread when its queue is full.
// Threads enqueuing on one stream at the same moment may each pass the
// admission once, so the bound can be exceeded by at most the number of such
// threads. Without it, threads that fill faster than the device works grew
// the process without bound on PoCL (hundreds of MB/s; docs/performance.md).
//
// A Stream is owned by the core (created by stream_create or
// stream_wrap_native, destroyed by stream_destroy). A wrapped queue belongs
// to the user: the stream holds one clRetainCommandQueue reference and gives
// it back on destroy. Thread-safe: OpenCL queues accept commands from any
// thread; the pending list and the first error are guarded by `mutex`.
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_STREAM_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_STREAM_H_

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "opencl_devices.h"

namespace anydev::opencl {

// One enqueued command whose completion status is not yet known.
// The bound on a stream's enqueued-not-completed commands (see above).
inline constexpr std::size_t kMaxCommandsInFlight = 1024;

struct PendingCommand {
  cl_event event = nullptr;  // owned
  const char* call = "";     // the OpenCL call that enqueued it
  const char* what = "";     // the anydev operation: "copy", "fill", ...
  std::size_t bytes = 0;
};

struct Stream {
  Device* device = nullptr;
  cl_context context = nullptr;      // the device's context (not owned)
  cl_command_queue queue = nullptr;  // one reference owned
  bool wrapped = false;              // the queue came from stream_wrap_native

  std::mutex mutex;
  std::vector<PendingCommand> pending;
  std::size_t sweep_at = 64;  // sweep the pending list when it grows this long
  anydev_status_t first_error = ANYDEV_SUCCESS;
  std::string first_error_message;
};

inline Stream* as_stream(anydev_bk_stream_t handle) { return reinterpret_cast<Stream*>(handle); }

// Waits, if the stream holds kMaxCommandsInFlight commands not known to be
// complete, until at most half of them are left. Call before enqueuing a
// command that will be tracked; never fails (a failed command found while
// waiting becomes the stream's error, returned by the next synchronize).
void admit_command(Stream& stream);

// Takes ownership of `event` (the event of a command just enqueued on the
// stream) and remembers it until it is known to have completed.
void track_command(Stream& stream, cl_event event, const char* call, const char* what,
                   std::size_t bytes);

// "copy of 4096 bytes on OpenCL device 0 (name)": for messages.
std::string describe(const Stream& stream, const char* what, std::size_t bytes);

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_STREAM_H_
