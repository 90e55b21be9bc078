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

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "anydev/backend.h"
#include "gpu_fill_kernel.h"
#include "gpu_fill_launch.h"
#include "gpu_objects.h"
#include "gpu_state.h"
#include "hip_runtime.h"

namespace anydev::hip {

// Makes a device the calling thread's current one around runtime calls that
// act on the current device (allocations, stream and event creation, frees,
// peer access, memory info): one hipGetDevice when it already is; otherwise
// hipSetDevice to it, and at the scope's end hipSetDevice back to the device
// the caller had, so that an embedding runtime finds its own device current
// after every anydev call. Stateless.
struct DeviceRule {
  using saved_t = int;  // the caller's device, to set again; -1: none
  static constexpr int kNothingSaved = -1;
  static anydev_status_t enter(int device, const char* operation, int* previous);
  static void leave(int previous) noexcept;
};
using ScopedDevice = gpu::CurrentScope<DeviceRule>;

// anydev's wide fill kernel in one device (hip_fill_kernel.cpp,
// gpu_fill_launch.h), kept for the life of the process.
using HipFillKernel = gpu::FillKernelSlot<hipModule_t, hipFunction_t>;

// What a HIP device holds beyond the core's DeviceState.
// Sharing (hip_share.cpp, set by query_device): the identity handles carry,
// and why device memory cannot be exported (empty: it can).
// graph_kernel_refused: the runtime refused the fill kernel as a graph's
// kernel node once (releases that take only host-registered kernels there),
// so graphs with wide fills are declined from then on.
struct HipDevice {
  std::uint8_t uuid[16] = {};
  std::string share_unsupported;
  HipFillKernel fill_kernel;
  std::atomic<bool> graph_kernel_refused{false};
};

// hipMemAllocationProp in HIP 5's layout (its headers') or ROCm 6's (CUDA's
// order, with allocFlags); make_alloc_prop fills the loaded runtime's.
union HipAllocationProp {
  hipMemAllocationProp v5;
  struct {
    hipMemAllocationType type;
    hipMemAllocationHandleType requestedHandleTypes;
    hipMemLocation location;
    void* win32HandleMetaData;
    struct {
      unsigned char compressionType;
      unsigned char gpuDirectRDMACapable;
      unsigned short usage;
    } allocFlags;
  } v6;
};

// Fills x->uuid and x->share_unsupported of device `index` (hip_share.cpp).
void query_sharing(int index, const std::string& pci_bus_id, HipDevice* x);

struct HipApi {
  using driver_t = HipRuntime;
  using scope = ScopedDevice;
  static constexpr const char* kName = "hip";
  // No reserved stream values: DLPack gives ROCm's default stream as 0. A
  // device pointer plus an offset is a device pointer like any other.
  static constexpr std::uint64_t kTableFlags = ANYDEV_BK_FLAG_DEVICE_ADDRESS_HANDLES;
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
  static constexpr hipMemAllocationType kPoolPinned = hipMemAllocationTypePinned;
  static constexpr unsigned kStreamFlags = hipStreamNonBlocking;
  static constexpr const char* kLibraryVariable = "ANYDEV_HIP_LIBRARY";
  using device_ptr = void*;
  static constexpr hipMemAllocationHandleType kPoolNoHandle = hipMemHandleTypeNone;
  static constexpr unsigned kEventFlags = hipEventDisableTiming;
  static constexpr unsigned kEventBlockingSync = hipEventBlockingSync;
  static constexpr const char* kPoolsVariable = "ANYDEV_HIP_MEMORY_POOLS";
  static constexpr const char* kFillKernelVariable = "ANYDEV_HIP_FILL_KERNEL";
  using peer_t = int;  // hipMemcpyPeerAsync names each side by its ordinal
  static constexpr hipMemLocationType kLocationDevice = hipMemLocationTypeDevice;
  using pool_props = hipMemPoolProps;
  static constexpr unsigned kHostAllocFlags = hipHostMallocPortable;
  // The newest first: ROCm 7, 6, 5, then the unversioned development link.
  static constexpr const char* kDefaultLibraries[] = {
      "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so", nullptr};
  using device_extra = HipDevice;
  using access_desc = hipMemAccessDesc;
  static constexpr hipMemAccessFlags kAccessReadWrite = hipMemAccessFlagsProtReadWrite;
  static constexpr hipMemPoolAttr kPoolReleaseThresholdAttr = hipMemPoolAttrReleaseThreshold;
  static constexpr const char* kContextWhat = "HIP device";
  static constexpr int kDLDevice = kDLROCM;
  static constexpr int kDLHost = kDLROCMHost;

  // Sharing between processes (gpu_share.h); hip_share.cpp.
  using alloc_handle_t = hipMemGenericAllocationHandle_t;
  using alloc_prop = HipAllocationProp;
  using ipc_event_handle_t = hipIpcEventHandle_t;
  static constexpr hipMemAllocationHandleType kHandlePosixFd = hipMemHandleTypePosixFileDescriptor;
  static constexpr hipMemAllocationGranularity_flags kGranularityMinimum =
      hipMemAllocationGranularityMinimum;
  static constexpr unsigned kSharedEventFlags = hipEventInterprocess | hipEventDisableTiming;
  static constexpr unsigned kHostRegisterFlags = hipHostRegisterPortable;
  static void make_alloc_prop(int device, HipAllocationProp* prop);
  static bool share_support(int device, std::string* why_not);
  static void device_uuid(int device, std::uint8_t (&out)[16]);

  // Device attributes (gpu_attributes.h); hip_attributes.cpp.
  using attribute_t = hipDeviceAttribute_t;
  using uuid_t = hipUUID;
  static bool attribute_of(int attribute, hipDeviceAttribute_t* out);
  static std::string api_version_text();

  // status_for, is_sticky_fault, describe (hip_errors.cpp); load (over
  // load_hip_runtime, hip_runtime.h), start, query_device, library_text,
  // enable_peer, native_context (hip_devices.cpp).
  ANYDEV_GPU_API_FUNCTIONS(HipApi, hipError_t, HipRuntime)

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

  // Graphs (gpu_graph.h).
  using graph_t = hipGraph_t;
  using graph_exec_t = hipGraphExec_t;
  using graph_node_t = hipGraphNode_t;
  static hipError_t graph_add_copy(hipGraphNode_t* out, hipGraph_t graph,
                                   const hipGraphNode_t* deps, std::size_t count, void* dst,
                                   void* src, std::size_t bytes, int) {
    return gpu::driver<HipApi>().GraphAddMemcpyNode(out, graph, deps, count, dst, src, bytes,
                                                    hipMemcpyDefault);
  }
  static hipError_t graph_add_memset(hipGraphNode_t* out, hipGraph_t graph,
                                     const hipGraphNode_t* deps, std::size_t count, void* dst,
                                     unsigned value, unsigned element, std::size_t width, int) {
    hipMemsetParams p{};
    p.dst = dst;
    p.elementSize = element;
    p.height = 1;
    p.pitch = width * element;  // one row: the pitch is its width
    p.value = value;
    p.width = width;
    return gpu::driver<HipApi>().GraphAddMemsetNode(out, graph, deps, count, &p);
  }
  // hip_fill_kernel.cpp: a wide fill as one hipModuleLaunchKernel of
  // anydev's fill kernel on the stream (gpu_transfer.h, HasFillKernel).
  static gpu::KernelFill fill_kernel(const gpu::Stream<HipApi>& stream,
                                     const gpu::WideFillArgs& args, hipError_t* r,
                                     const char** call);
  // hip_fill_kernel.cpp: a wide fill as a kernel node of anydev's fill
  // kernel (gpu_graph.h, HasGraphFillKernel).
  static gpu::KernelFill graph_add_fill_kernel(hipGraphNode_t* out, hipGraph_t graph,
                                               const hipGraphNode_t* deps, std::size_t count,
                                               int device, const gpu::WideFillArgs& args,
                                               hipError_t* r);
};

}  // namespace anydev::hip

#endif  // ANYDEV_BACKENDS_HIP_HIP_API_H_
