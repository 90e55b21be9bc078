// SPDX-License-Identifier: Apache-2.0
#include "opencl_host_tasks.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "opencl_errors.h"
#include "opencl_services.h"

namespace anydev::opencl {
namespace {

struct HostTask {
  std::function<void()> work;
  cl_event gate = nullptr;  // user event the stream's barrier waits for (owned)
  cl_int earlier_status = CL_COMPLETE;
};

// One worker thread running ready tasks in the order they became ready.
class HostTaskWorker {
 public:
  static HostTaskWorker& instance() {
    static auto* worker = new HostTaskWorker();  // never destroyed: see the header
    return *worker;
  }

  void push(HostTask* task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(task);
    }
    wake_.notify_one();
  }

 private:
  HostTaskWorker() {
    std::thread([this] { run(); }).detach();
  }

  void run() {
    for (;;) {
      HostTask* task = nullptr;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return !ready_.empty(); });
        task = ready_.front();
        ready_.pop_front();
      }
      if (task->earlier_status >= 0) task->work();
      cl().clSetUserEventStatus(task->gate,
                                task->earlier_status < 0 ? task->earlier_status : CL_COMPLETE);
      cl().clReleaseEvent(task->gate);
      delete task;
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<HostTask*> ready_;
};

void CL_CALLBACK on_marker_done(cl_event, cl_int status, void* user_data) {
  auto* task = static_cast<HostTask*>(user_data);
  task->earlier_status = status;
  HostTaskWorker::instance().push(task);
}

}  // namespace

anydev_status_t enqueue_host_task(Stream& stream, std::function<void()> work, const char* what,
                                  std::size_t bytes) {
  HostTaskWorker::instance();  // start the worker before any callback can need it
  admit_command(stream);
  cl_int err = CL_SUCCESS;
  cl_event gate = cl().clCreateUserEvent(stream.context, &err);
  if (err != CL_SUCCESS) return report_cl("clCreateUserEvent", err, describe(stream, what, bytes));
  cl_event marker = nullptr;
  err = cl().clEnqueueMarkerWithWaitList(stream.queue, 0, nullptr, &marker);
  if (err != CL_SUCCESS) {
    cl().clReleaseEvent(gate);
    return report_cl("clEnqueueMarkerWithWaitList", err, describe(stream, what, bytes));
  }
  cl_event barrier = nullptr;
  err = cl().clEnqueueBarrierWithWaitList(stream.queue, 1, &gate, &barrier);
  if (err != CL_SUCCESS) {
    cl().clReleaseEvent(marker);
    cl().clReleaseEvent(gate);
    return report_cl("clEnqueueBarrierWithWaitList", err, describe(stream, what, bytes));
  }
  auto* task = new HostTask{std::move(work), gate, CL_COMPLETE};
  err = cl().clSetEventCallback(marker, CL_COMPLETE, on_marker_done, task);
  cl().clReleaseEvent(marker);
  if (err != CL_SUCCESS) {
    // The barrier is already queued: let it pass, marked failed, so that the
    // stream does not hang; the task never runs.
    cl().clSetUserEventStatus(gate, err);
    cl().clReleaseEvent(gate);
    cl().clReleaseEvent(barrier);
    delete task;
    return report_cl("clSetEventCallback", err, describe(stream, what, bytes));
  }
  track_command(stream, barrier, "host task", what, bytes);
  err = cl().clFlush(stream.queue);
  if (err != CL_SUCCESS) return report_cl("clFlush", err, describe(stream, what, bytes));
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::opencl
