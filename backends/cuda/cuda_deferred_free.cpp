#include "cuda_deferred_free.h"

#include <thread>

#include "cuda_errors.h"
#include "cuda_state.h"

namespace anydev::cuda {

DeferredFree& DeferredFree::instance() {
  static DeferredFree* instance = new DeferredFree;  // never destroyed: its thread may run at exit
  return *instance;
}

anydev_status_t DeferredFree::enqueue(int device, CUdeviceptr memory, int stream_device,
                                      CUstream stream) {
  ScopedContext scope;  // the event must belong to the stream's context
  if (const anydev_status_t s = scope.enter(stream_device, "memory_free_async");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const CudaDriver& drv = driver();
  const std::string what = cat("memory_free_async of device memory ",
                               reinterpret_cast<void*>(memory), " on cuda device ", device);
  CUevent done = nullptr;
  CUresult r = drv.EventCreate(&done, CU_EVENT_DISABLE_TIMING);
  if (r != CUDA_SUCCESS) return report_failure(r, "cuEventCreate", what);
  if ((r = drv.EventRecord(done, stream)) != CUDA_SUCCESS) {
    drv.EventDestroy(done);
    return report_failure(r, "cuEventRecord", what);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(Pending{device, memory, done});
  if (!started_) {
    std::thread([this] { run(); }).detach();
    started_ = true;
  }
  ready_.notify_one();
  return ANYDEV_SUCCESS;
}

void DeferredFree::run() {
  for (;;) {
    Pending next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [this] { return !queue_.empty(); });
      next = queue_.front();
      queue_.pop_front();
    }
    ScopedContext scope;
    if (scope.enter(next.device, "deferred device memory release") != ANYDEV_SUCCESS) {
      log(ANYDEV_LOG_ERROR,
          cat("deferred release of device memory ", reinterpret_cast<void*>(next.memory),
              " on cuda device ", next.device, ": cannot make the device's context current"));
      continue;
    }
    const CudaDriver& drv = driver();
    CUresult r = drv.EventSynchronize(next.done);
    const char* call = "cuEventSynchronize";
    if (r == CUDA_SUCCESS) {
      r = drv.MemFree(next.memory);
      call = "cuMemFree";
    }
    drv.EventDestroy(next.done);
    if (r != CUDA_SUCCESS) {
      log(ANYDEV_LOG_ERROR,
          cat(call, " failed: ", describe_result(r), " in the deferred release of device memory ",
              reinterpret_cast<void*>(next.memory), " on cuda device ", next.device));
    }
  }
}

}  // namespace anydev::cuda
