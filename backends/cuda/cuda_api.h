// SPDX-License-Identifier: Apache-2.0
// CUDA as the GPU core sees it (backends/gpu/gpu_api.h): the driver API's
// types and constants, its error mapping (cuda_errors.cpp), its device
// queries (cuda_devices.cpp) and its current-context rule (cuda_context.cpp):
// a device's primary context is pushed around calls that need it current,
// only when it is not current already, and popped afterwards.
//
// CudaApi holds no state: everything lives in gpu::state<CudaApi>()
// (gpu_state.h) and in each device's CudaDevice (its primary context,
// retained at first use behind a std::once_flag and kept for the life of the
// process). Every function is thread-safe.
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_API_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_API_H_

#include <cuda.h>
#include <dlpack/dlpack.h>

#include <cstddef>
#include <mutex>
#include <string>

#include "anydev/backend.h"
#include "cuda_driver.h"
#include "gpu_state.h"

namespace anydev::cuda {

// What a CUDA device holds beyond the core's DeviceState.
struct CudaDevice {
  int compute_major = 0;
  int compute_minor = 0;
  std::string pci_bus_id;
  std::once_flag context_once;
  CUcontext context = nullptr;  // the retained primary context
  anydev_status_t context_status = ANYDEV_SUCCESS;
  std::string context_error;
};

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

struct CudaApi {
  using status_t = CUresult;
  using stream_t = CUstream;
  using event_t = CUevent;
  using pool_t = CUmemoryPool;
  using device_t = CUdevice;
  using device_ptr = CUdeviceptr;
  using peer_t = CUcontext;
  using driver_t = CudaDriver;
  using device_extra = CudaDevice;
  using scope = ScopedContext;

  static constexpr const char* kName = "cuda";
  static constexpr const char* kVendor = "CUDA";
  static constexpr const char* kDriverWhat = "CUDA driver";
  static constexpr const char* kLibraryWhat = "CUDA driver library";
  static constexpr const char* kLibraryHint =
      "is the NVIDIA driver installed? ANYDEV_CUDA_LIBRARY overrides the path";
  static constexpr const char* kLibraryVariable = "ANYDEV_CUDA_LIBRARY";
  static constexpr const char* kPoolsVariable = "ANYDEV_CUDA_MEMORY_POOLS";
  static constexpr const char* kDefaultLibraries[] = {"libcuda.so.1", nullptr};
  static constexpr const char* kContextWhat = "CUDA context";
  static constexpr int kDLDevice = kDLCUDA;
  static constexpr int kDLHost = kDLCUDAHost;
  static constexpr CUresult kSuccess = CUDA_SUCCESS;
  static constexpr CUresult kNotReady = CUDA_ERROR_NOT_READY;
  static constexpr CUresult kInvalidValue = CUDA_ERROR_INVALID_VALUE;
  static constexpr CUresult kScopeFailed = CUDA_ERROR_INVALID_CONTEXT;
  static constexpr unsigned kStreamFlags = CU_STREAM_NON_BLOCKING;
  static constexpr unsigned kEventFlags = CU_EVENT_DISABLE_TIMING;
  static constexpr unsigned kHostAllocFlags = CU_MEMHOSTALLOC_PORTABLE;
  static constexpr CUmemPool_attribute kPoolReleaseThresholdAttr =
      CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;

  // cuda_errors.cpp
  static anydev_status_t status_for(CUresult result);
  static bool is_sticky_fault(CUresult result);
  static std::string describe(CUresult result);

  // cuda_devices.cpp
  static bool load(void* library, const std::string& path, const std::string& opened,
                   CudaDriver* driver, std::string* reason) {
    return load_cuda_driver(library, path, opened, driver, reason);
  }
  static anydev_status_t start(const CudaDriver& driver, int* count);
  static anydev_status_t query_device(int index, gpu::DeviceState<CudaApi>* d, bool* pools);
  static std::string library_text(const CudaDriver& driver);
  static CUresult pool_create(const CudaDriver& driver, CUdevice device, CUmemoryPool* pool);
  static CUresult pool_grant(const CudaDriver& driver, CUmemoryPool pool, CUdevice device);

  // cuda_context.cpp
  // Whether `stream` names its context itself (a CUstream from
  // cuStreamCreate) rather than the default stream of whatever context is
  // current (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, null: only through
  // wrapping).
  static bool names_its_device(CUstream stream) {
    return stream != nullptr && stream != CU_STREAM_LEGACY && stream != CU_STREAM_PER_THREAD;
  }
  // A driver answers a call on a stream with CUDA_ERROR_INVALID_CONTEXT when
  // it wants a context (or that very context) current on the thread.
  static bool wants_device_current(CUresult r) { return r == CUDA_ERROR_INVALID_CONTEXT; }
  static anydev_status_t peer(int device, CUcontext* out);
  static CUresult memcpy(const CudaDriver& driver, CUdeviceptr dst, CUdeviceptr src,
                         std::size_t bytes, CUstream stream) {
    return driver.MemcpyAsync(dst, src, bytes, stream);
  }
  static anydev_status_t enable_peer(int device, int peer, const std::string& what);
  static anydev_status_t check_wrapped_stream(int device, CUstream native);
  static anydev_status_t native_context(int device, void** out);
};

// The device's primary context, retained at the first call. Reports and
// returns an error when `device` is out of range or the retain failed.
anydev_status_t primary_context(int device, CUcontext* out);

inline const CudaDriver& driver() { return gpu::driver<CudaApi>(); }

inline anydev_status_t report_failure(CUresult result, const char* call,
                                      const std::string& operation) {
  return gpu::report_failure<CudaApi>(result, call, operation);
}
inline anydev_status_t report_failure(anydev_status_t status, CUresult result, const char* call,
                                      const std::string& operation) {
  return gpu::report_failure<CudaApi>(status, result, call, operation);
}
inline anydev_status_t report_error(anydev_status_t status, const std::string& message) {
  return gpu::report_error<CudaApi>(status, message);
}
using kit::cat;

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_API_H_
