// SPDX-License-Identifier: Apache-2.0
// Memory of the opencl backend: every allocation is a cl_mem buffer object
// in its device's context, and the cl_mem is the handle the core receives.
//
//  - Device buffers (device_alloc): clCreateBuffer(CL_MEM_READ_WRITE). OpenCL
//    1.2 has no device pointers, so the `address` handed to the core (what
//    unsafe_ptr() returns) is the cl_mem itself: an opaque token that must
//    never be dereferenced.
//  - Pinned host buffers (host_alloc): clCreateBuffer(CL_MEM_READ_WRITE |
//    CL_MEM_ALLOC_HOST_PTR), mapped once for reading and writing (a blocking
//    clEnqueueMapBuffer on the device's internal queue) and kept mapped
//    until freed. `address` is the mapped host pointer. Device commands never
//    touch the mapped cl_mem itself: copies to and from device buffers pass
//    the mapped pointer to clEnqueueWriteBuffer/ReadBuffer (the pinned
//    staging pattern OpenCL vendors recommend), and host-only work runs as a
//    host task (opencl_host_tasks.h).
//  - Registered host memory (host_register): clCreateBuffer(CL_MEM_READ_WRITE
//    | CL_MEM_USE_HOST_PTR) over the caller's pointer, used exactly like a
//    pinned host buffer whose mapped pointer is the caller's; released with
//    host_unregister (clReleaseMemObject; the memory stays the caller's).
//
// A registry maps each live cl_mem to its kind, device, size and mapped
// pointer, so that an unknown handle is an error rather than a crash.
// Thread-safe. The registry is never destroyed (handles may be freed at exit).
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_MEMORY_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_MEMORY_H_

#include <cstddef>

#include "opencl_devices.h"

namespace anydev::opencl {

struct Allocation {
  anydev_bk_memory_kind_t kind = ANYDEV_BK_MEMORY_DEVICE;
  Device* device = nullptr;
  std::size_t bytes = 0;
  char* host = nullptr;  // the mapped pointer of a pinned host buffer
  // A CL_MEM_USE_HOST_PTR buffer over the caller's memory (host_register):
  // `host` is the caller's pointer, never mapped or freed by the backend.
  bool registered = false;
};

// "device buffer", "pinned host buffer" or "user host memory", for messages.
const char* kind_name(anydev_bk_memory_kind_t kind);

// The live allocation whose handle is `handle`; false when there is none.
bool find_allocation(void* handle, Allocation* out);

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_MEMORY_H_
