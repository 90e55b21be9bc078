// Stream-ordered release of device memory from cuMemAlloc, for devices
// without memory pools (where cuMemFreeAsync cannot be used).
//
// enqueue records an event on the stream and returns at once; one backend
// thread waits for each event in turn and then calls cuMemFree, so no caller
// ever blocks on the device. Thread-safe. The single instance is created at
// first use and never destroyed; its thread is detached and lives until the
// process exits. Failures on that thread can reach no caller: they are logged.
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_DEFERRED_FREE_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_DEFERRED_FREE_H_

#include <cuda.h>

#include <condition_variable>
#include <deque>
#include <mutex>

#include "anydev/backend.h"

namespace anydev::cuda {

class DeferredFree {
 public:
  static DeferredFree& instance();

  // Frees `memory` (of device `device`) after the work enqueued so far on
  // `stream` (of device `stream_device`).
  anydev_status_t enqueue(int device, CUdeviceptr memory, int stream_device, CUstream stream);

 private:
  struct Pending {
    int device;
    CUdeviceptr memory;
    CUevent done;
  };

  DeferredFree() = default;
  void run();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Pending> queue_;
  bool started_ = false;
};

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_DEFERRED_FREE_H_
