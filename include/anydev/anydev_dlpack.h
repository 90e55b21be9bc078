/* SPDX-License-Identifier: Apache-2.0 */
/*
 * anydev DLPack interop: hand a buffer to NumPy, PyTorch, CuPy, JAX ... as a
 * DLManagedTensor without copying, and use theirs as an anydev buffer.
 *
 * Needs the DLPack header (Debian: libdlpack-dev, <dlpack/dlpack.h>, 0.6).
 * Two kinds of tensor are exchanged:
 *   - DLPack 0.x: the unversioned DLManagedTensor (anydev_buffer_to_dlpack,
 *     anydev_buffer_from_dlpack);
 *   - DLPack 1.x: the versioned tensor, anydev_dlpack_managed_tensor_versioned_t
 *     (version, flags; _versioned functions). When <dlpack/dlpack.h> is
 *     1.0 or newer it is that header's DLManagedTensorVersioned; with an
 *     older header anydev declares the same layout under its own names (the
 *     DLPack 1.0 specification), so both headers can be included together.
 *
 * Devices. A buffer is exported on the DLPack device that matches where its
 * memory lives:
 *
 *   backend     HostBuffer      DeviceBuffer    data pointer
 *   cpu         kDLCPU          kDLCPU          the host address
 *   cuda        kDLCUDAHost     kDLCUDA         the host / device address
 *   hip         kDLROCMHost     kDLROCM         the host / device address
 *   level_zero  kDLCPU          kDLOneAPI       (kDLOneAPI needs DLPack >= 0.7)
 *   opencl      kDLCPU          kDLOpenCL       mapped host pointer / cl_mem
 *
 * The cpu backend's device memory is host memory, hence kDLCPU for both. An
 * OpenCL host buffer is mapped host memory (kDLCPU); an OpenCL device
 * buffer has no address, so its tensor's `data` is the allocation's cl_mem
 * and `byte_offset` the view's offset in it, as DLPack specifies for
 * OpenCL. device_id is the anydev device index. Other backends are
 * UNSUPPORTED.
 *
 * Element types map one to one (int8..int64 kDLInt, uint8..uint64 kDLUInt,
 * float16/32/64 kDLFloat, bfloat16 kDLBfloat, complex64/128 kDLComplex, all
 * with lanes 1). bool is kDLBool (6) with 8 bits: the versioned (1.x)
 * export gives it; the unversioned export refuses it as UNSUPPORTED (0.6
 * consumers have no such code: make a uint8 view with
 * anydev_buffer_create_sub_buffer). Both imports take kDLBool 8 bits as bool.
 *
 * Lifetimes. An exported tensor holds a reference to the buffer: the memory
 * stays valid until the consumer calls the tensor's deleter (from any
 * thread, exactly once), even if every other anydev handle is gone. An
 * imported buffer holds the producer's tensor: anydev calls its deleter once
 * the last anydev reference is gone and every operation anydev enqueued on
 * the memory has finished (possibly on an anydev thread).
 *
 * Ordering. Exporting does not wait for anything: call
 * anydev_buffer_make_ready first (the Python package does it in
 * __dlpack__). A consumer that keeps using device memory on its own stream
 * after it called the deleter must order that itself.
 *
 * All functions follow anydev.h's conventions: a status, the thread's last
 * error naming the operation and the values, and no change on failure.
 */
#ifndef ANYDEV_ANYDEV_DLPACK_H_
#define ANYDEV_ANYDEV_DLPACK_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

#include "anydev/anydev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most dimensions an exported or imported tensor may have. */
#define ANYDEV_DLPACK_MAX_NDIM 32

/* ---- DLPack 1.x: the versioned tensor ---------------------------------- */

/* The DLPack version anydev's versioned export writes into `version`. */
#define ANYDEV_DLPACK_MAJOR_VERSION 1
#define ANYDEV_DLPACK_MINOR_VERSION 0
/* Flag bits of the versioned tensor (DLPack 1.0's
 * DLPACK_FLAG_BITMASK_READ_ONLY and DLPACK_FLAG_BITMASK_IS_COPIED). */
#define ANYDEV_DLPACK_FLAG_READ_ONLY ((uint64_t)1)
#define ANYDEV_DLPACK_FLAG_IS_COPIED ((uint64_t)2)
/* DLPack 1.x's boolean type code (kDLBool, absent from 0.6 headers). */
#define ANYDEV_DLPACK_CODE_BOOL 6

#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
typedef DLPackVersion anydev_dlpack_version_t;
typedef DLManagedTensorVersioned anydev_dlpack_managed_tensor_versioned_t;
#else
/* DLPack 1.0's DLPackVersion, under anydev's name (same layout). */
typedef struct anydev_dlpack_version_s {
  uint32_t major;
  uint32_t minor;
} anydev_dlpack_version_t;
/* DLPack 1.0's DLManagedTensorVersioned, under anydev's name (same layout).
 * Owned by whoever holds it until deleter(self) is called (once). */
typedef struct anydev_dlpack_managed_tensor_versioned_s {
  anydev_dlpack_version_t version;
  void* manager_ctx;
  void (*deleter)(struct anydev_dlpack_managed_tensor_versioned_s* self);
  uint64_t flags;
  DLTensor dl_tensor;
} anydev_dlpack_managed_tensor_versioned_t;
#endif

/* The DLPack device the buffer exports to (see the table above). */
ANYDEV_API anydev_status_t anydev_buffer_dlpack_device(anydev_buffer_t buf, int* device_type,
                                                       int* device_id);

/* Exports buf (a host or device buffer, or a view) as a new DLManagedTensor
 * that shares its memory, row-major and contiguous (strides given).
 * shape == NULL: one dimension of the buffer's size (ndim must be 0 or 1).
 * Otherwise ndim (0..ANYDEV_DLPACK_MAX_NDIM) extents, all >= 0, whose product
 * is the buffer's element count (ndim 0: a scalar, count 1), else
 * INVALID_ARGUMENT. The caller owns *out and gives it up by calling
 * (*out)->deleter(*out) -- or by handing it to a consumer that will. */
ANYDEV_API anydev_status_t anydev_buffer_to_dlpack(anydev_buffer_t buf, int ndim,
                                                   const int64_t* shape, DLManagedTensor** out);

/* The same as a DLPack 1.0 versioned tensor: version {1, 0}, the dtype table
 * above including bool (kDLBool), and `flags`: 0 or
 * ANYDEV_DLPACK_FLAG_READ_ONLY (the consumer must not write the memory;
 * anydev does not enforce it). Any other bit is INVALID_ARGUMENT (anydev
 * never copies, so it never sets IS_COPIED). The caller owns *out and gives
 * it up by calling (*out)->deleter(*out). */
ANYDEV_API anydev_status_t
anydev_buffer_to_dlpack_versioned(anydev_buffer_t buf, int ndim, const int64_t* shape,
                                  uint64_t flags, anydev_dlpack_managed_tensor_versioned_t** out);

/* Imports a producer's tensor as a buffer that shares its memory (a
 * HostBuffer for host memory, a DeviceBuffer for device memory) with the
 * tensor's element count (product of its shape) and dtype. On success anydev
 * owns `tensor` and calls its deleter as described above; on failure it does
 * not (the caller still owns it).
 *
 *   kDLCPU, kDLCUDAHost, kDLROCMHost: host memory. ctx == NULL: a context on
 *     the cpu backend (device 0). Any ctx works: the memory is a plain host
 *     pointer to every backend (pinned memory of ctx's own backend -- cuda
 *     for kDLCUDAHost, hip for kDLROCMHost -- is used as such).
 *   kDLCUDA / kDLROCM: device memory of the cuda / hip backend's device
 *     device_id. ctx == NULL: a new context on it; else ctx must be that
 *     backend and device.
 *   kDLOpenCL and every other device type: UNSUPPORTED (anydev's opencl
 *     backend can use only cl_mem objects it allocated).
 *
 * The tensor must be row-major contiguous (strides NULL, or the compact
 * strides; extents of 1 may have any stride), lanes 1, a dtype above (kDLUInt
 * 8 -- PyTorch's bool -- imports as uint8), and data + byte_offset aligned
 * for the dtype; anything else is UNSUPPORTED or INVALID_ARGUMENT naming the
 * field and its value. byte_offset becomes the view's offset. */
ANYDEV_API anydev_status_t anydev_buffer_from_dlpack(anydev_context_t ctx, DLManagedTensor* tensor,
                                                     anydev_buffer_t* out);

/* The same for a DLPack 1.x versioned tensor, with these checks first (each
 * UNSUPPORTED naming the value, the caller still owning the tensor):
 * version.major must be 1 (any minor: minor versions keep the layout);
 * flags may hold ANYDEV_DLPACK_FLAG_IS_COPIED (anydev then owns the only
 * reference, as the producer promised) but not
 * ANYDEV_DLPACK_FLAG_READ_ONLY (anydev buffers are writable: copy it first)
 * nor any bit DLPack 1.0 does not define. */
ANYDEV_API anydev_status_t anydev_buffer_from_dlpack_versioned(
    anydev_context_t ctx, anydev_dlpack_managed_tensor_versioned_t* tensor, anydev_buffer_t* out);

/* Makes the work already enqueued that uses buf's memory visible to a
 * consumer. consumer_stream == NULL: blocks until that work has finished
 * (what a host-side consumer needs). Otherwise consumer_stream is a native
 * stream of buf's backend and device (a CUstream -- including
 * CU_STREAM_LEGACY (1) and CU_STREAM_PER_THREAD (2) on cuda only -- or an
 * OpenCL in-order cl_command_queue of anydev's context): it is made to wait
 * for that work on the device, without blocking the caller and without
 * taking ownership of it (UNSUPPORTED on a backend that cannot wrap a native
 * stream, e.g. cpu). Any other value below 4096 (1 and 2 on a backend other
 * than cuda) has no meaning as a stream: INVALID_ARGUMENT, never passed to
 * the driver. Does not clear asynchronous errors of anydev's streams
 * (synchronize reports them). */
ANYDEV_API anydev_status_t anydev_buffer_make_ready(anydev_buffer_t buf, void* consumer_stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ANYDEV_ANYDEV_DLPACK_H_ */
