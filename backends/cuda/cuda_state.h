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

// Makes a device's primary context current on the calling thread for the
// scope's life and then restores what was current before; does nothing when
// it already is current. Used on one thread; not copyable.
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

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_STATE_H_
