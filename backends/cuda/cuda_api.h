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
#include <cstdint>
#include <mutex>
#include <string>

#include "anydev/backend.h"
#include "cuda_driver.h"
#include "gpu_fill_kernel.h"
#include "gpu_fill_launch.h"
#include "gpu_objects.h"
#include "gpu_state.h"

namespace anydev::cuda {

// anydev's wide fill kernel in a device's primary context (cuda_fill_kernel.cpp,
// gpu_fill_launch.h), kept for the life of the process (as the context is).
using CudaFillKernel = gpu::FillKernelSlot<CUmodule, CUfunction>;

// What a CUDA device holds beyond the core's DeviceState.
struct CudaDevice {
  int compute_major = 0;
  int compute_minor = 0;
  std::string pci_bus_id;
  // Sharing (cuda_share.cpp, set by query_device): the identity handles
  // carry, and why device memory cannot be exported (empty: it can).
  std::uint8_t uuid[16] = {};
  std::string share_unsupported;
  std::once_flag context_once;
  CUcontext context = nullptr;  // the retained primary context
  anydev_status_t context_status = ANYDEV_SUCCESS;
  std::string context_error;
  CudaFillKernel fill_kernel;
};

// Makes a device's primary context current on the calling thread around a
// driver call that needs it current (one that creates or frees something in
// the current context, or one on the current context's default stream):
// nothing more when it already is (cuCtxGetCurrent says so); otherwise pushed
// for the scope's life and popped at its end, so that whatever the thread had
// current before (another context, an embedding runtime's, or none) is
// current again afterwards: the CUDA runtime takes its current device from
// the current context, so anydev leaves it as it found it. Stateless.
struct ContextRule {
  using saved_t = bool;  // whether enter pushed a context
  static constexpr bool kNothingSaved = false;
  static anydev_status_t enter(int device, const char* operation, bool* pushed);
  static void leave(bool pushed) noexcept;
};
using ScopedContext = gpu::CurrentScope<ContextRule>;

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
  static constexpr const char* kFillKernelVariable = "ANYDEV_CUDA_FILL_KERNEL";
  static constexpr const char* kDefaultLibraries[] = {"libcuda.so.1", nullptr};
  static constexpr const char* kContextWhat = "CUDA context";
  static constexpr int kDLDevice = kDLCUDA;
  static constexpr int kDLHost = kDLCUDAHost;
  // stream_wrap_native takes CU_STREAM_LEGACY (1) and CU_STREAM_PER_THREAD (2);
  // a CUdeviceptr plus an offset is a device pointer like any other.
  static constexpr std::uint64_t kTableFlags =
      ANYDEV_BK_FLAG_RESERVED_DEFAULT_STREAMS | ANYDEV_BK_FLAG_DEVICE_ADDRESS_HANDLES;
  static constexpr CUresult kSuccess = CUDA_SUCCESS;
  static constexpr CUresult kNotReady = CUDA_ERROR_NOT_READY;
  static constexpr CUresult kInvalidValue = CUDA_ERROR_INVALID_VALUE;
  static constexpr CUresult kScopeFailed = CUDA_ERROR_INVALID_CONTEXT;
  static constexpr unsigned kStreamFlags = CU_STREAM_NON_BLOCKING;
  static constexpr unsigned kEventFlags = CU_EVENT_DISABLE_TIMING;
  static constexpr unsigned kEventBlockingSync = CU_EVENT_BLOCKING_SYNC;
  static constexpr unsigned kHostAllocFlags = CU_MEMHOSTALLOC_PORTABLE;
  static constexpr CUmemPool_attribute kPoolReleaseThresholdAttr =
      CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;

  static constexpr CUmemAllocationType kPoolPinned = CU_MEM_ALLOCATION_TYPE_PINNED;
  static constexpr CUmemAllocationHandleType kPoolNoHandle = CU_MEM_HANDLE_TYPE_NONE;
  static constexpr CUmemLocationType kLocationDevice = CU_MEM_LOCATION_TYPE_DEVICE;
  static constexpr CUmemAccess_flags kAccessReadWrite = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  using pool_props = CUmemPoolProps;
  using access_desc = CUmemAccessDesc;

  // Sharing between processes (gpu_share.h); cuda_share.cpp.
  using alloc_handle_t = CUmemGenericAllocationHandle;
  using alloc_prop = CUmemAllocationProp;
  using ipc_event_handle_t = CUipcEventHandle;
  static constexpr CUmemAllocationHandleType kHandlePosixFd =
      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  static constexpr CUmemAllocationGranularity_flags kGranularityMinimum =
      CU_MEM_ALLOC_GRANULARITY_MINIMUM;
  static constexpr unsigned kSharedEventFlags = CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING;
  static constexpr unsigned kHostRegisterFlags = CU_MEMHOSTREGISTER_PORTABLE;
  static void make_alloc_prop(int device, CUmemAllocationProp* prop) {
    prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop->location.id = device;
  }
  static bool share_support(int device, std::string* why_not);
  static void device_uuid(int device, std::uint8_t (&out)[16]);

  // Device attributes (gpu_attributes.h); cuda_attributes.cpp.
  using attribute_t = CUdevice_attribute;
  using uuid_t = CUuuid;
  static bool attribute_of(int attribute, CUdevice_attribute* out);
  static std::string api_version_text();

  // status_for, is_sticky_fault, describe (cuda_errors.cpp); load (over
  // load_cuda_driver, cuda_driver.h), start, query_device, library_text
  // (cuda_devices.cpp); enable_peer,
  // native_context (cuda_context.cpp).
  ANYDEV_GPU_API_FUNCTIONS(CudaApi, CUresult, CudaDriver)

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
  static anydev_status_t check_wrapped_stream(int device, CUstream native);
  // cuda_fill_kernel.cpp: a wide fill as one cuLaunchKernel of anydev's fill
  // kernel on the stream (gpu_transfer.h, HasFillKernel).
  static gpu::KernelFill fill_kernel(const gpu::Stream<CudaApi>& stream,
                                     const gpu::WideFillArgs& args, CUresult* r, const char** call);

  // Graphs (gpu_graph.h): cuda_graph.cpp; the kernel node in cuda_fill_kernel.cpp.
  using graph_t = CUgraph;
  using graph_exec_t = CUgraphExec;
  using graph_node_t = CUgraphNode;
  // A 1-D copy of unified addresses, in the device's primary context.
  static CUresult graph_add_copy(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps,
                                 std::size_t count, CUdeviceptr dst, CUdeviceptr src,
                                 std::size_t bytes, int device);
  // `width` elements of `element` (1, 2 or 4) bytes of `value` at `dst`.
  static CUresult graph_add_memset(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps,
                                   std::size_t count, CUdeviceptr dst, unsigned value,
                                   unsigned element, std::size_t width, int device);
  static gpu::KernelFill graph_add_fill_kernel(CUgraphNode* out, CUgraph graph,
                                               const CUgraphNode* deps, std::size_t count,
                                               int device, const gpu::WideFillArgs& args,
                                               CUresult* r);
};

// The device's primary context, retained at the first call. Reports and
// returns an error when `device` is out of range or the retain failed.
anydev_status_t primary_context(int device, CUcontext* out);
// Fills x.uuid and x.share_unsupported of device `index` (cuda_share.cpp).
void query_sharing(int index, CUdevice device, CudaDevice* x);

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
