// SPDX-License-Identifier: Apache-2.0
// Work on host memory ordered on an OpenCL stream: copies between host
// pointers (pinned host buffers or user memory) and fills of pinned host
// buffers, which OpenCL has no command for.
//
// enqueue_host_task puts into the queue a marker (done when the earlier
// commands are) and a barrier that waits for a user event. When the marker
// completes, its callback hands the task to a worker thread, which runs it
// and then completes the user event, so commands enqueued later wait for the
// task, as on a device. Nothing blocks the caller. If earlier work failed,
// the task is skipped and the failure passes on to the user event.
//
// The worker thread and its queue are created on first use and never
// destroyed (they outlive static destruction, for handles released at
// exit). Thread-safe.
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_HOST_TASKS_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_HOST_TASKS_H_

#include <cstddef>
#include <functional>

#include "opencl_stream.h"

namespace anydev::opencl {

// Orders `work` after the stream's earlier work and before its later work.
// `what` and `bytes` name the operation in messages.
anydev_status_t enqueue_host_task(Stream& stream, std::function<void()> work, const char* what,
                                  std::size_t bytes);

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_HOST_TASKS_H_
