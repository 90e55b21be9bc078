// SPDX-License-Identifier: Apache-2.0
// What the cuda backend knows once initialize has run: the core's services,
// the driver, and one DeviceState per device; plus ScopedContext, which makes
// a device's primary context current around driver calls.
//
// Ownership and thread safety: BackendState is created by initialize (called
// once, under the core's registry lock) and never destroyed, so every entry
// may read it from any thread. The only thing that changes afterwards is each
// device's primary context, retained at first use behind a std::once_flag and
// kept for the life of the process.
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_STATE_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_STATE_H_

#include <cuda.h>
#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "anydev/backend.h"
#include "cuda_driver.h"

namespace anydev::cuda {

struct DeviceState {
  int index = 0;
  CUdevice device = 0;
  std::string name;
  std::string description;  // compute capability, PCI bus id, driver, allocator
  std::size_t total_memory = 0;
  int compute_major = 0;
  int compute_minor = 0;
  std::string pci_bus_id;
  // Device memory is stream-ordered (cuMemAllocFromPoolAsync from `pool`,
  // cuMemFreeAsync): the device supports memory pools, the driver has the
  // entry points, ANYDEV_CUDA_MEMORY_POOLS is not 0 and the pool was created.
  bool memory_pools = false;
  // anydev's own pool on this device (cuMemPoolCreate, cuda_pool.cpp), not the
  // device's current pool, which the application may change or tune. Created
  // by initialize and kept for the life of the process: memory from it may be
  // freed until the process exits. Null when memory_pools is false.
  CUmemoryPool pool = nullptr;

  std::once_flag context_once;
  CUcontext context = nullptr;  // the retained primary context
  anydev_status_t context_status = ANYDEV_SUCCESS;
  std::string context_error;
};

struct BackendState {
  // The process that initialized the driver; in a child of fork() getpid()
  // differs, and the driver refuses every call there (cuda_errors.cpp).
  pid_t initialized_pid = 0;
  CudaDriver driver;
  std::vector<std::unique_ptr<DeviceState>> devices;
};

// The backend's state. Before initialize it holds no driver and no device.
BackendState& backend_state();
const CudaDriver& driver();

// OUT_OF_RANGE (reported) unless 0 <= device < device count.
anydev_status_t check_device(int device, const char* operation);

// The device's primary context, retained at the first call. Reports and
// returns an error when `device` is out of range or the retain failed.
anydev_status_t primary_context(int device, CUcontext* out);

// Makes a device's primary context current on the calling thread around a
// driver call that needs it current (one that creates or frees something in
// the current context, or one on the current context's default stream):
// nothing more when it already is (cuCtxGetCurrent says so); otherwise pushed
// for the scope's life and popped at its end, so that whatever the thread had
// current before (another context, an embedding runtime's, or none) is
// current again afterwards: the CUDA runtime takes its current device from
// the current context, so anydev leaves it as it found it.
// Used on one thread; not copyable.
class ScopedContext {
 public:
  ScopedContext() = default;
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
  ~ScopedContext();

  // SUCCESS, or an error already reported that names `operation`.
  anydev_status_t enter(int device, const char* operation);

 private:
  bool pushed_ = false;
};

// Whether `stream` names its context itself (a CUstream from cuStreamCreate)
// rather than the default stream of whatever context is current
// (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, null: only through wrapping).
inline bool names_its_context(CUstream stream) {
  return stream != nullptr && stream != CU_STREAM_LEGACY && stream != CU_STREAM_PER_THREAD;
}

// Makes `call`, a driver call whose stream or event names its context (the
// steady-state operations: copies, memsets, records, waits, synchronizes),
// with no context switch: one driver call when the driver accepts it as it
// stands. A driver answers such a call with CUDA_ERROR_INVALID_CONTEXT when
// it wants a context (or that very context) current on the thread, which an
// embedding runtime may have changed between two anydev calls; then the call
// is made once more under a ScopedContext of `device`. Every other result is
// returned as it is. A call on a stream that does not name its context
// (names_its_context false) always runs under a ScopedContext: the default
// stream it means is the current context's.
template <class Call>
CUresult call_on_stream(int device, bool stream_names_context, const char* operation, Call&& call) {
  if (stream_names_context) {
    const CUresult r = call();
    if (r != CUDA_ERROR_INVALID_CONTEXT) return r;
  }
  ScopedContext scope;
  if (scope.enter(device, operation) != ANYDEV_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  return call();
}

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_STATE_H_
