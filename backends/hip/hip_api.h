// SPDX-License-Identifier: Apache-2.0
// HIP as the GPU core sees it (backends/gpu/gpu_api.h): the runtime API's
// types and constants, its error mapping (hip_errors.cpp), its device
// queries (hip_devices.cpp) and its current-device rule (hip_scope.cpp): HIP
// has no context to push, only the thread's current device, which an
// embedding runtime (PyTorch, ...) shares with anydev on the same thread; so
// a call that needs a device current sets it only when another one is, and
// sets the caller's back afterwards.
//
// HipApi holds no state: everything lives in gpu::state<HipApi>()
// (gpu_state.h). Every function is thread-safe.
#ifndef ANYDEV_BACKENDS_HIP_HIP_API_H_
#define ANYDEV_BACKENDS_HIP_HIP_API_H_

#include <dlpack/dlpack.h>
#include <hip/hip_runtime_api.h>

#include <cstddef>
#include <string>

#include "anydev/backend.h"
#include "gpu_state.h"
#include "hip_runtime.h"

namespace anydev::hip {

// Makes a device the calling thread's current one around runtime calls that
// act on the current device (allocations, stream and event creation, frees,
// peer access, memory info): one hipGetDevice when it already is; otherwise
// hipSetDevice to it, and at the scope's end hipSetDevice back to the device
// the caller had, so that an embedding runtime finds its own device current
// after every anydev call. Used on one thread; not copyable.
class ScopedDevice {
 public:
  ScopedDevice() = default;
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  ~ScopedDevice();

  // SUCCESS, or an error already reported that names `operation`.
  anydev_status_t enter(int device, const char* operation);

 private:
  int previous_ = -1;  // the caller's device, restored at the end; -1: nothing to restore
};

// A HIP device holds nothing beyond the core's DeviceState.
struct HipDevice {};

struct HipApi {
  using driver_t = HipRuntime;
  using scope = ScopedDevice;
  static constexpr const char* kName = "hip";
  using status_t = hipError_t;
  static constexpr hipError_t kSuccess = hipSuccess;
  static constexpr const char* kVendor = "HIP";
  using stream_t = hipStream_t;
  static constexpr hipError_t kNotReady = hipErrorNotReady;
  static constexpr const char* kDriverWhat = "HIP runtime";
  using event_t = hipEvent_t;
  static constexpr hipError_t kInvalidValue = hipErrorInvalidValue;
  static constexpr const char* kLibraryWhat = "HIP runtime library";
  using pool_t = hipMemPool_t;
  // Returned by call_on_stream when the device could not be made current.
  static constexpr hipError_t kScopeFailed = hipErrorInvalidDevice;
  static constexpr const char* kLibraryHint =
      "is ROCm's HIP runtime installed? ANYDEV_HIP_LIBRARY overrides the path";
  using device_t = int;
  static constexpr unsigned kStreamFlags = hipStreamNonBlocking;
  static constexpr const char* kLibraryVariable = "ANYDEV_HIP_LIBRARY";
  using device_ptr = void*;
  static constexpr unsigned kEventFlags = hipEventDisableTiming;
  static constexpr const char* kPoolsVariable = "ANYDEV_HIP_MEMORY_POOLS";
  using peer_t = int;  // hipMemcpyPeerAsync names each side by its ordinal
  static constexpr unsigned kHostAllocFlags = hipHostMallocPortable;
  // The newest first: ROCm 7, 6, 5, then the unversioned development link.
  static constexpr const char* kDefaultLibraries[] = {
      "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so", nullptr};
  using device_extra = HipDevice;
  static constexpr hipMemPoolAttr kPoolReleaseThresholdAttr = hipMemPoolAttrReleaseThreshold;
  static constexpr const char* kContextWhat = "HIP device";
  static constexpr int kDLDevice = kDLROCM;
  static constexpr int kDLHost = kDLROCMHost;

  // hip_errors.cpp
  static anydev_status_t status_for(hipError_t result);
  static bool is_sticky_fault(hipError_t result);
  static std::string describe(hipError_t result);

  // hip_devices.cpp
  static bool load(void* library, const std::string& path, const std::string& opened,
                   HipRuntime* runtime, std::string* reason) {
    return load_hip_runtime(library, path, opened, runtime, reason);
  }
  static anydev_status_t start(const HipRuntime& runtime, int* count);
  static anydev_status_t query_device(int index, gpu::DeviceState<HipApi>* d, bool* pools);
  static std::string library_text(const HipRuntime& runtime);
  static hipError_t pool_create(const HipRuntime& runtime, int device, hipMemPool_t* pool);
  static hipError_t pool_grant(const HipRuntime& runtime, hipMemPool_t pool, int device);
  static anydev_status_t enable_peer(int device, int peer, const std::string& what);

  // A stream from hipStreamCreateWithFlags carries its device: work on it
  // needs no current device. The null stream and hipStreamPerThread are the
  // current device's.
  static bool names_its_device(hipStream_t stream) {
    return stream != nullptr && stream != hipStreamPerThread;
  }
  // HIP runs work on a stream's own device whatever is current: no retry.
  static bool wants_device_current(hipError_t) { return false; }
  static anydev_status_t peer(int device, int* out) {
    *out = device;
    return ANYDEV_SUCCESS;
  }
  static hipError_t memcpy(const HipRuntime& runtime, void* dst, const void* src, std::size_t bytes,
                           hipStream_t stream) {
    return runtime.MemcpyAsync(dst, src, bytes, hipMemcpyDefault, stream);
  }
  // The HIP runtime API 5.2 has no call that names a stream's device without
  // a newer entry point (hipStreamGetDevice): a wrapped stream is taken as
  // the caller says (docs/backends.md).
  static anydev_status_t check_wrapped_stream(int, hipStream_t) { return ANYDEV_SUCCESS; }
  static anydev_status_t native_context(int device, void** out);
};

}  // namespace anydev::hip

#endif  // ANYDEV_BACKENDS_HIP_HIP_API_H_
