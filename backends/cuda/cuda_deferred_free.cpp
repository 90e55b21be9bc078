#include "cuda_deferred_free.h"

#include <thread>

#include "cuda_errors.h"
#include "cuda_state.h"

namespace anydev::cuda {

DeferredFree& DeferredFree::Instance() {
  static DeferredFree* instance = new DeferredFree;  // never destroyed: its thread may run at exit
  return *instance;
}

anydev_status_t DeferredFree::Enqueue(int device, CUdeviceptr memory, int stream_device,
                                      CUstream stream) {
  ScopedContext scope;  // the event must belong to the stream's context
  if (const anydev_status_t s = scope.Enter(stream_device, "memory_free_async");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const CudaDriver& drv = Driver();
  const std::string what = cat("memory_free_async of device memory ",
                               reinterpret_cast<void*>(memory), " on cuda device ", device);
  CUevent done = nullptr;
  CUresult r = drv.EventCreate(&done, CU_EVENT_DISABLE_TIMING);
  if (r != CUDA_SUCCESS) return ReportFailure(r, "cuEventCreate", what);
  if ((r = drv.EventRecord(done, stream)) != CUDA_SUCCESS) {
    drv.EventDestroy(done);
    return ReportFailure(r, "cuEventRecord", what);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(Pending{device, memory, done});
  if (!started_) {
    std::thread([this] { Run(); }).detach();
    started_ = true;
  }
  ready_.notify_one();
  return ANYDEV_SUCCESS;
}

void DeferredFree::Run() {
  for (;;) {
    Pending next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [this] { return !queue_.empty(); });
      next = queue_.front();
      queue_.pop_front();
    }
    ScopedContext scope;
    if (scope.Enter(next.device, "deferred device memory release") != ANYDEV_SUCCESS) {
      log(ANYDEV_LOG_ERROR,
          cat("deferred release of device memory ", reinterpret_cast<void*>(next.memory),
              " on cuda device ", next.device, ": cannot make the device's context current"));
      continue;
    }
    const CudaDriver& drv = Driver();
    CUresult r = drv.EventSynchronize(next.done);
    const char* call = "cuEventSynchronize";
    if (r == CUDA_SUCCESS) {
      r = drv.MemFree(next.memory);
      call = "cuMemFree";
    }
    drv.EventDestroy(next.done);
    if (r != CUDA_SUCCESS) {
      log(ANYDEV_LOG_ERROR,
          cat(call, " failed: ", DescribeResult(r), " in the deferred release of device memory ",
              reinterpret_cast<void*>(next.memory), " on cuda device ", next.device));
    }
  }
}

}  // namespace anydev::cuda
