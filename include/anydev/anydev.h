/* SPDX-License-Identifier: Apache-2.0 */
/*
 * anydev C ABI.
 *
 * Everything the C++ API (anydev.hpp) and the Python package do goes through
 * these functions. Conventions:
 *
 *  - Every function returns anydev_status_t. On failure the calling thread's
 *    last error is set: anydev_last_error_message() names the operation and
 *    the values involved. Success leaves the last error as it was. A failing
 *    call changes nothing: no buffer contents, no handle, no output argument.
 *  - Handles are opaque and reference-counted: a function that creates or
 *    returns a handle gives the caller one reference, released with the
 *    matching *_release. *_retain adds one. Releasing a buffer never blocks:
 *    its memory is freed after the work already enqueued that uses it.
 *  - Structs passed in or out start with `struct_size`, which the caller sets
 *    to sizeof(the struct it was compiled with); the library reads and writes
 *    only the fields that fit, so the ABI can grow.
 *  - Sizes of buffers are counted in elements of the buffer's dtype; byte
 *    counts say so in their names.
 *  - Thread safety: every function may be called from any thread, at the
 *    same time as any other, also on the same handle. Calls that enqueue on
 *    the same stream from several threads are serialized in some order. A
 *    handle may be released on any thread. What is NOT synchronized, and so
 *    is the caller's to order:
 *      - using a handle while another thread drops its last reference (hold
 *        your own reference: *_retain);
 *      - host memory an enqueued operation reads or writes (the `src` of
 *        anydev_enqueue_copy_from_host, the `dst` of _copy_to_host, a host
 *        buffer's elements during a copy or fill) until the stream or an
 *        event recorded after the operation is synchronized
 *        (ANYDEV_VALIDATE=1 reports host-buffer element access from C++);
 *      - anydev_last_error_message: per thread, valid until that thread's
 *        next anydev call;
 *      - anydev_buffer_take_ptr: needs the only reference, so it fails with
 *        INVALID_STATE while another thread holds or takes one;
 *      - anydev_buffer_format of a host buffer reads its memory as is (a
 *        concurrent copy or fill into it is a data race).
 *    Per-call notes below say "Thread safety:" where a call differs.
 *  - Fork: a handle created before fork() gives ANYDEV_ERROR_INVALID_STATE in
 *    the child.
 */
#ifndef ANYDEV_ANYDEV_H_
#define ANYDEV_ANYDEV_H_

#include <stddef.h>
#include <stdint.h>

#if defined(ANYDEV_BUILDING_LIBRARY) && defined(__GNUC__)
#define ANYDEV_API __attribute__((visibility("default")))
#else
#define ANYDEV_API
#endif

/* In C++ the enums get a fixed underlying type, so that any int a C caller
 * passes is a valid value to inspect (and reject) rather than undefined
 * behaviour. The layout is int in both languages. */
#ifdef __cplusplus
#define ANYDEV_ENUM_BASE : int
#else
#define ANYDEV_ENUM_BASE
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define ANYDEV_VERSION_MAJOR 0
#define ANYDEV_VERSION_MINOR 1
#define ANYDEV_VERSION_PATCH 0

typedef enum anydev_status_t ANYDEV_ENUM_BASE {
  ANYDEV_SUCCESS = 0,
  ANYDEV_ERROR_INVALID_ARGUMENT = 1,
  ANYDEV_ERROR_OUT_OF_RANGE = 2,
  ANYDEV_ERROR_OUT_OF_MEMORY = 3,
  ANYDEV_ERROR_BACKEND_UNAVAILABLE = 4,
  ANYDEV_ERROR_DEVICE = 5,
  ANYDEV_ERROR_UNSUPPORTED = 6,
  ANYDEV_ERROR_INVALID_STATE = 7,
  ANYDEV_ERROR_INTERNAL = 8,
  /* The work an operation depends on has not completed yet; asking again
   * later may succeed (CUDA's CUDA_ERROR_NOT_READY): anydev_event_elapsed_time. */
  ANYDEV_ERROR_NOT_READY = 9,
} anydev_status_t;

/* Element types. Sizes: boolean/int8/uint8 1; int16/uint16/float16/bfloat16 2;
 * int32/uint32/float32 4; int64/uint64/float64/complex64 8; complex128 16. */
typedef enum anydev_dtype_t ANYDEV_ENUM_BASE {
  ANYDEV_DTYPE_BOOL = 0,
  ANYDEV_DTYPE_INT8 = 1,
  ANYDEV_DTYPE_INT16 = 2,
  ANYDEV_DTYPE_INT32 = 3,
  ANYDEV_DTYPE_INT64 = 4,
  ANYDEV_DTYPE_UINT8 = 5,
  ANYDEV_DTYPE_UINT16 = 6,
  ANYDEV_DTYPE_UINT32 = 7,
  ANYDEV_DTYPE_UINT64 = 8,
  ANYDEV_DTYPE_FLOAT16 = 9,
  ANYDEV_DTYPE_BFLOAT16 = 10,
  ANYDEV_DTYPE_FLOAT32 = 11,
  ANYDEV_DTYPE_FLOAT64 = 12,
  ANYDEV_DTYPE_COMPLEX64 = 13,
  ANYDEV_DTYPE_COMPLEX128 = 14,
} anydev_dtype_t;

typedef enum anydev_memory_kind_t ANYDEV_ENUM_BASE {
  ANYDEV_MEMORY_HOST = 0,   /* pinned host memory: HostBuffer */
  ANYDEV_MEMORY_DEVICE = 1, /* device memory: DeviceBuffer */
} anydev_memory_kind_t;

/* Native handle kinds for anydev_*_native_handle. */
typedef enum anydev_native_kind_t ANYDEV_ENUM_BASE {
  ANYDEV_NATIVE_DEVICE = 0,  /* CUdevice, cl_device_id, ze_device_handle_t ... */
  ANYDEV_NATIVE_CONTEXT = 1, /* CUcontext, cl_context, ze_context_handle_t ... */
  ANYDEV_NATIVE_STREAM = 2,  /* CUstream, cl_command_queue ... */
  ANYDEV_NATIVE_EVENT = 3,   /* CUevent, cl_event ... */
  ANYDEV_NATIVE_MEMORY = 4,  /* CUdeviceptr, cl_mem ... */
} anydev_native_kind_t;

typedef struct anydev_context_s* anydev_context_t; /* device + stream */
typedef struct anydev_stream_s* anydev_stream_t;
typedef struct anydev_event_s* anydev_event_t;
typedef struct anydev_buffer_s* anydev_buffer_t; /* host or device buffer (or a view) */

/* ---- errors, version ---------------------------------------------------- */

/* The calling thread's last error message ("" when none). Valid until the
 * thread's next anydev call. */
ANYDEV_API const char* anydev_last_error_message(void);
/* The calling thread's last error status (ANYDEV_SUCCESS when none). */
ANYDEV_API anydev_status_t anydev_last_error_status(void);
/* Clears the calling thread's last error. */
ANYDEV_API void anydev_clear_last_error(void);
/* "success", "invalid_argument", ...; "unknown" for other values. */
ANYDEV_API const char* anydev_status_name(anydev_status_t status);
/* "0.1.0" */
ANYDEV_API const char* anydev_version_string(void);

/* ---- dtypes ------------------------------------------------------------- */

/* Bytes per element; 0 for an unknown dtype. */
ANYDEV_API size_t anydev_dtype_size(anydev_dtype_t dtype);
/* "bool", "int8", ..., "complex128"; NULL for an unknown dtype. */
ANYDEV_API const char* anydev_dtype_name(anydev_dtype_t dtype);
ANYDEV_API anydev_status_t anydev_dtype_from_name(const char* name, anydev_dtype_t* out);

/* ---- backends ----------------------------------------------------------- */

typedef struct anydev_backend_info_t {
  size_t struct_size;
  const char* name;    /* "cpu", "cuda", ...: valid for the life of the process */
  int available;       /* 1 when it has at least one device and loaded cleanly */
  const char* reason;  /* why it is unavailable ("" when available) */
  int device_count;    /* 0 when unavailable */
  const char* library; /* plugin path and vendor library tried ("" for cpu) */
} anydev_backend_info_t;

/* Number of known backends (cpu, cuda, hip, level_zero, opencl, and any other
 * plugin found in the plugin folders). Probes (opens) every backend. */
ANYDEV_API anydev_status_t anydev_backend_count(size_t* count);
ANYDEV_API anydev_status_t anydev_backend_info(size_t index, anydev_backend_info_t* info);
/* Number of devices of `api` (NULL: the first available backend of the
 * preference order); 0 when unavailable. Never fails for a known name. */
ANYDEV_API int anydev_device_count(const char* api);
/* Plugin folders searched, separated by ':' (valid for the process life). */
ANYDEV_API const char* anydev_plugin_path(void);

/* ---- contexts ----------------------------------------------------------- */

typedef struct anydev_memory_info_t {
  size_t struct_size;
  size_t free_bytes;
  size_t total_bytes;
} anydev_memory_info_t;

/* Creates a context: one device of one backend plus a new stream.
 * api == NULL and device < 0: the first entry of ANYDEV_BACKEND (or the
 * default order cuda, hip, level_zero, opencl, cpu) that has its device.
 * api == NULL and device >= 0: the first backend of that order with that
 * device. api != NULL: exactly that backend (device -1 means 0). Any other
 * negative device is INVALID_ARGUMENT. */
ANYDEV_API anydev_status_t anydev_context_create(const char* api, int device,
                                                 anydev_context_t* out);
ANYDEV_API anydev_status_t anydev_context_retain(anydev_context_t ctx);
ANYDEV_API anydev_status_t anydev_context_release(anydev_context_t ctx);
/* `*out` stays valid while ctx lives. */
ANYDEV_API anydev_status_t anydev_context_api(anydev_context_t ctx, const char** out);
ANYDEV_API anydev_status_t anydev_context_device_name(anydev_context_t ctx, const char** out);
ANYDEV_API anydev_status_t anydev_context_device_id(anydev_context_t ctx, int* out);
/* Free text the backend gives about the device ("" when none): driver and
 * runtime versions, compute capability, PCI bus id, ... `*out` stays valid
 * while ctx lives. */
ANYDEV_API anydev_status_t anydev_context_device_description(anydev_context_t ctx,
                                                             const char** out);
ANYDEV_API anydev_status_t anydev_context_memory_info(anydev_context_t ctx,
                                                      anydev_memory_info_t* out);
/* Waits for everything enqueued on the context's stream; returns the first
 * asynchronous error since the previous synchronize. Thread safety: when
 * several threads synchronize the same stream, the error goes to one of
 * them. */
ANYDEV_API anydev_status_t anydev_context_synchronize(anydev_context_t ctx);
/* The context's stream (a new reference). */
ANYDEV_API anydev_status_t anydev_context_stream(anydev_context_t ctx, anydev_stream_t* out);
/* A new stream on the context's device. */
ANYDEV_API anydev_status_t anydev_context_create_stream(anydev_context_t ctx, anydev_stream_t* out);
/* A context on the same device whose work goes to `stream`. */
ANYDEV_API anydev_status_t anydev_context_with_stream(anydev_context_t ctx, anydev_stream_t stream,
                                                      anydev_context_t* out);
ANYDEV_API anydev_status_t anydev_context_create_event(anydev_context_t ctx, anydev_event_t* out);
/* Later work on ctx waits for the work already enqueued on other. */
ANYDEV_API anydev_status_t anydev_context_wait_for(anydev_context_t ctx, anydev_context_t other);
/* *out = 1 when ctx's device can access peer's memory (0 for itself, cpu). */
ANYDEV_API anydev_status_t anydev_context_can_access(anydev_context_t ctx, anydev_context_t peer,
                                                     int* out);
ANYDEV_API anydev_status_t anydev_context_enable_peer_access(anydev_context_t ctx,
                                                             anydev_context_t peer);
/* Frees memory obtained with anydev_buffer_take_ptr, ordered on ctx's
 * stream (after the work already enqueued there). Any other pointer (NULL,
 * an address inside a taken allocation, one taken on another device) is
 * INVALID_ARGUMENT and frees nothing. Thread safety: a pointer is freed
 * once; a second free (on any thread) is INVALID_ARGUMENT. */
ANYDEV_API anydev_status_t anydev_context_free(anydev_context_t ctx, void* taken);
/* A native handle of the context (ANYDEV_NATIVE_DEVICE or _CONTEXT). */
ANYDEV_API anydev_status_t anydev_context_native_handle(anydev_context_t ctx,
                                                        anydev_native_kind_t kind, void** out);
/* A context on `device` of `api` (-1 means 0; other negative values are
 * INVALID_ARGUMENT) whose stream wraps native_stream without owning it.
 * native_stream must be the address of a native stream of that backend (a
 * CUstream, cl_command_queue, ...) or, on a backend with reserved default
 * streams (cuda), 1 (CU_STREAM_LEGACY) or 2 (CU_STREAM_PER_THREAD); any other
 * value below 4096 is INVALID_ARGUMENT and is never passed to the driver. */
ANYDEV_API anydev_status_t anydev_context_wrap_native_stream(const char* api, int device,
                                                             void* native_stream,
                                                             anydev_context_t* out);

/* ---- streams and events ------------------------------------------------- */

ANYDEV_API anydev_status_t anydev_stream_retain(anydev_stream_t stream);
ANYDEV_API anydev_status_t anydev_stream_release(anydev_stream_t stream);
ANYDEV_API anydev_status_t anydev_stream_synchronize(anydev_stream_t stream);
ANYDEV_API anydev_status_t anydev_stream_record_event(anydev_stream_t stream, anydev_event_t event);
ANYDEV_API anydev_status_t anydev_stream_wait_event(anydev_stream_t stream, anydev_event_t event);
ANYDEV_API anydev_status_t anydev_stream_native_handle(anydev_stream_t stream, void** out);

ANYDEV_API anydev_status_t anydev_event_retain(anydev_event_t event);
ANYDEV_API anydev_status_t anydev_event_release(anydev_event_t event);
ANYDEV_API anydev_status_t anydev_event_synchronize(anydev_event_t event);
/* *complete = 1 when the work the event captured has finished (1 for an
 * event never recorded). */
ANYDEV_API anydev_status_t anydev_event_query(anydev_event_t event, int* complete);
ANYDEV_API anydev_status_t anydev_event_native_handle(anydev_event_t event, void** out);

/* ---- buffers ------------------------------------------------------------ */

/* Allocates `count` elements of `dtype`. Host buffers are pinned and usable at
 * once; device buffers are allocated in stream order on ctx's stream. A
 * count of 0 gives an empty buffer (unsafe_ptr NULL). */
ANYDEV_API anydev_status_t anydev_buffer_create(anydev_context_t ctx, anydev_memory_kind_t kind,
                                                anydev_dtype_t dtype, size_t count,
                                                anydev_buffer_t* out);
ANYDEV_API anydev_status_t anydev_buffer_retain(anydev_buffer_t buf);
ANYDEV_API anydev_status_t anydev_buffer_release(anydev_buffer_t buf);

typedef struct anydev_buffer_info_t {
  size_t struct_size;
  anydev_memory_kind_t kind;
  anydev_dtype_t dtype;
  size_t count;        /* elements */
  size_t size_bytes;   /* count * dtype size */
  void* address;       /* unsafe_ptr(): host pointer for host buffers; device address */
  size_t offset_bytes; /* offset of this view in its allocation */
  /* Offset of this view's first byte in the object anydev_buffer_native_handle
   * returns: offset_bytes, plus where the allocation starts in that object
   * when the pool carved it out of a larger one (OpenCL: a cl_mem shared by
   * small buffers). Written when struct_size covers it; a caller built
   * against an older header (struct_size ending at offset_bytes) gets the
   * other fields. */
  size_t native_offset_bytes;
} anydev_buffer_info_t;
ANYDEV_API anydev_status_t anydev_buffer_get_info(anydev_buffer_t buf, anydev_buffer_info_t* out);
/* The buffer's context (a new reference). */
ANYDEV_API anydev_status_t anydev_buffer_context(anydev_buffer_t buf, anydev_context_t* out);

/* A view of `count` elements of `dtype` starting at element `offset` (counted
 * in elements of `dtype`) of buf. It shares memory and keeps the parent's
 * memory alive. OUT_OF_RANGE when it does not lie inside buf;
 * INVALID_ARGUMENT when its start is not aligned for dtype. */
ANYDEV_API anydev_status_t anydev_buffer_create_sub_buffer(anydev_buffer_t buf,
                                                           anydev_dtype_t dtype, size_t offset,
                                                           size_t count, anydev_buffer_t* out);

/* Copies dst's size from src (which must be at least as large, and of the
 * same backend). ctx == NULL: on dst's context. If src was last used on
 * another stream, the copy first waits for that stream's earlier work. */
ANYDEV_API anydev_status_t anydev_enqueue_copy(anydev_context_t ctx, anydev_buffer_t dst,
                                               anydev_buffer_t src);
/* Copies the buffer's size from host memory `src` (src_bytes available,
 * >= the buffer's size in bytes). ctx == NULL: on dst's context. `src` must
 * stay valid until the copy completes (synchronize). */
ANYDEV_API anydev_status_t anydev_enqueue_copy_from_host(anydev_context_t ctx, anydev_buffer_t dst,
                                                         const void* src, size_t src_bytes);
/* Copies the buffer's size into host memory `dst` (dst_bytes available). */
ANYDEV_API anydev_status_t anydev_enqueue_copy_to_host(anydev_context_t ctx, void* dst,
                                                       size_t dst_bytes, anydev_buffer_t src);
/* Writes the exact bits of `pattern` (pattern_size bytes: 1, 2, 4, 8 or 16,
 * dividing the buffer's size in bytes) into the whole buffer. ctx == NULL: on
 * buf's context. */
ANYDEV_API anydev_status_t anydev_enqueue_fill(anydev_context_t ctx, anydev_buffer_t buf,
                                               const void* pattern, size_t pattern_size);
/* The buffer's later operations and its release run on ctx's stream. Same
 * backend and device, else INVALID_ARGUMENT. */
ANYDEV_API anydev_status_t anydev_buffer_reassign_ownership(anydev_buffer_t buf,
                                                            anydev_context_t ctx);
/* Hands the memory to the caller (release it with anydev_context_free). Needs
 * the only handle to that memory: another reference or a live view is
 * INVALID_STATE. Only a whole allocation changes hands: a view (even an
 * empty one) is INVALID_ARGUMENT, imported (DLPack) memory is UNSUPPORTED;
 * an empty buffer gives NULL. Afterwards the handle is empty: every use but
 * release is INVALID_STATE. */
ANYDEV_API anydev_status_t anydev_buffer_take_ptr(anydev_buffer_t buf, void** out);
/* Mojo's printing: "HostBuffer([0, 1, 2])", "DeviceBuffer([1.0, ...])".
 * Device buffers are copied to the host synchronously. Writes at most
 * `capacity` bytes including the terminating NUL; *needed (optional)
 * receives the full length + 1. OUT_OF_RANGE when capacity is too small
 * (out then holds a truncated, NUL-terminated prefix). */
ANYDEV_API anydev_status_t anydev_buffer_format(anydev_buffer_t buf, char* out, size_t capacity,
                                                size_t* needed);
/* A native handle of the buffer's memory (ANYDEV_NATIVE_MEMORY).
 * UNSUPPORTED for imported (DLPack) memory: its producer holds the native
 * object. */
ANYDEV_API anydev_status_t anydev_buffer_native_handle(anydev_buffer_t buf, void** out);
/* *locked = 1 when the host buffer's memory is page-locked (pinned), 0 when
 * it is ordinary pageable memory: past the lock limit (RLIMIT_MEMLOCK), with
 * a backend that does not lock host memory, or memory not allocated by
 * anydev (DLPack imports); 0 for an empty buffer. A view answers for its
 * allocation. INVALID_ARGUMENT for a device buffer. */
ANYDEV_API anydev_status_t anydev_buffer_is_locked(anydev_buffer_t buf, int* locked);
/* Host memory this process holds from ctx's device and backend (live host
 * buffers, taken pointers and the host pool's cache): *total_bytes of it,
 * *locked_bytes page-locked. Either pointer may be NULL. */
ANYDEV_API anydev_status_t anydev_context_host_memory_locks(anydev_context_t ctx,
                                                            size_t* locked_bytes,
                                                            size_t* total_bytes);

/* ---- caching pools (docs/memory-pools.md) ------------------------------- */

/* Statistics of one pool. Sizes are block sizes (requests rounded up to a
 * size class). allocation_count == cache_hits + cache_misses. The caller
 * sets struct_size. */
typedef struct anydev_pool_stats_t {
  size_t struct_size;
  size_t bytes_in_use;      /* held by buffers (memory taken with take_ptr is not) */
  size_t bytes_cached;      /* released blocks kept for reuse */
  size_t peak_bytes_in_use; /* highest bytes_in_use since the pool was made */
  uint64_t allocation_count;
  uint64_t cache_hits;   /* allocations served from the cache */
  uint64_t cache_misses; /* allocations not served from the cache */
  /* Released blocks whose stream work has not finished, waiting to be freed
   * by a core thread (bounded: docs/memory-pools.md). Filled when
   * struct_size covers them; a caller built against the struct without
   * these fields gets the others. */
  size_t bytes_waiting_for_release;
  uint64_t blocks_waiting_for_release;
  /* Device memory held in the segments that small blocks are carved from
   * (0 when the pool does not carve, docs/memory-pools.md): what the driver
   * holds for the carved blocks among bytes_in_use and bytes_cached. Filled
   * when struct_size covers it. */
  size_t bytes_in_segments;
} anydev_pool_stats_t;

/* The pool of ctx's device and backend for that kind. */
ANYDEV_API anydev_status_t anydev_context_pool_stats(anydev_context_t ctx,
                                                     anydev_memory_kind_t kind,
                                                     anydev_pool_stats_t* out);
/* Hands every cached block of ctx's device (both kinds) to a core thread,
 * which frees those no stream still uses at once and the others as soon as
 * their stream work is done. Never blocks and never frees on the caller's
 * thread. bytes_cached is 0 afterwards. */
ANYDEV_API anydev_status_t anydev_context_release_cached_memory(anydev_context_t ctx);
/* The release threshold of the pool of ctx's device for `kind`: the pool
 * keeps at most this many cached bytes plus a quarter of its bytes in use
 * (the block released last is always kept); beyond that its oldest cached
 * blocks are freed by a core thread. SIZE_MAX: never trims. Starts at
 * ANYDEV_POOL_RELEASE_THRESHOLD (default 16 MiB). Setting it trims at once
 * without blocking; it applies to every context on the device. */
ANYDEV_API anydev_status_t anydev_context_set_pool_release_threshold(anydev_context_t ctx,
                                                                     anydev_memory_kind_t kind,
                                                                     size_t bytes);
ANYDEV_API anydev_status_t anydev_context_pool_release_threshold(anydev_context_t ctx,
                                                                 anydev_memory_kind_t kind,
                                                                 size_t* out);
/* 1 when the pools cache, 0 when ANYDEV_POOL=0. */
ANYDEV_API int anydev_pool_enabled(void);

/* Host memory anydev holds for its own per-buffer records (the handle of
 * every buffer and view, the record of every allocation), for the whole
 * process. Records come from 2 MiB chunks mapped for them (not from malloc:
 * docs/memory-pools.md, *Records*). The caller sets struct_size. */
typedef struct anydev_record_memory_t {
  size_t struct_size;
  size_t bytes_in_use;   /* records of live handles and allocations */
  size_t bytes_reserved; /* chunks mapped for records: in use, free slots and headers */
} anydev_record_memory_t;
ANYDEV_API anydev_status_t anydev_record_memory(anydev_record_memory_t* out);

/* ---- sharing between processes (docs/sharing.md) ------------------------ */

/* A buffer or an event that another process can open: `data` is a
 * serialisable value (send its bytes any way you like), `fds` the file
 * descriptors it needs (send them with anydev_share_handle_send, or fetch
 * them with anydev_share_handle_fetch_fds). A handle filled by an export
 * owns its fds: close them with anydev_share_handle_close once they are sent
 * (or imported). Unused fds are -1. Not thread-safe: one thread per handle. */
#define ANYDEV_SHARE_HANDLE_BYTES 256
#define ANYDEV_SHARE_MAX_FDS 2
typedef struct anydev_share_handle_t {
  uint8_t data[ANYDEV_SHARE_HANDLE_BYTES];
  uint32_t fd_count;
  int fds[ANYDEV_SHARE_MAX_FDS];
} anydev_share_handle_t;

/* Like anydev_buffer_create, but the memory can be exported to other
 * processes (anydev_buffer_export). It never comes from or goes back to the
 * caching pool, and its memory stays valid in every importer until the last
 * one has released it (docs/sharing.md, "Lifetime"). UNSUPPORTED, naming the
 * backend and the reason, where the backend cannot share that kind of memory
 * (opencl; see docs/sharing.md for the table). */
ANYDEV_API anydev_status_t anydev_buffer_create_shareable(anydev_context_t ctx,
                                                          anydev_memory_kind_t kind,
                                                          anydev_dtype_t dtype, size_t count,
                                                          anydev_buffer_t* out);
/* Fills *out with a handle to buf (a view exports its allocation plus its
 * offset, dtype and count). UNSUPPORTED when buf was not created shareable
 * (or imported); INVALID_STATE for a taken buffer. Thread safety: any
 * thread; each call gives new fds. */
ANYDEV_API anydev_status_t anydev_buffer_export(anydev_buffer_t buf, anydev_share_handle_t* out);
/* Opens a handle exported by another process (or this one) as a buffer of
 * ctx's backend and device, with the exported view's dtype and count. The
 * handle's fds are only read: the caller still closes them. Errors name the
 * values: a handle of another backend or device (INVALID_ARGUMENT), a
 * damaged, forged or truncated handle or one of an event
 * (INVALID_ARGUMENT), missing or closed fds (INVALID_ARGUMENT), memory the
 * backend can no longer map (DEVICE). Later operations on the buffer run on
 * ctx's stream; releasing it unmaps the memory after that work. */
ANYDEV_API anydev_status_t anydev_buffer_import(anydev_context_t ctx,
                                                const anydev_share_handle_t* handle,
                                                anydev_buffer_t* out);
/* An event that can be exported (Mojo's create_event(interprocess=True)).
 * It records and waits like any event; it never measures time. */
ANYDEV_API anydev_status_t anydev_context_create_shareable_event(anydev_context_t ctx,
                                                                 anydev_event_t* out);
/* Fills *out with a handle to a shareable event. UNSUPPORTED for an event
 * not created shareable. */
ANYDEV_API anydev_status_t anydev_event_export(anydev_event_t event, anydev_share_handle_t* out);
/* Opens an exported event on ctx's backend and device. Waiting on it
 * (anydev_stream_wait_event) orders a stream of this process after the work
 * the exporter's last record before the wait captured, without the host;
 * query and synchronize work too, and recording it signals the exporter's
 * waiters. If the process that recorded it dies before that work completes,
 * a wait fails (the stream's next synchronize: DEVICE, naming the pid)
 * rather than hang. Errors as anydev_buffer_import. */
ANYDEV_API anydev_status_t anydev_event_import(anydev_context_t ctx,
                                               const anydev_share_handle_t* handle,
                                               anydev_event_t* out);
/* Closes the handle's fds and marks them unused (-1, fd_count 0); NULL is
 * fine. Never fails. */
ANYDEV_API void anydev_share_handle_close(anydev_share_handle_t* handle);
/* Sends the handle (its bytes, and its fds as SCM_RIGHTS) over `socket`, a
 * connected AF_UNIX stream or seqpacket socket. The handle keeps its fds
 * (close them after). Blocks until sent; EINTR is retried. DEVICE, naming
 * errno, when the socket fails; INVALID_ARGUMENT for a socket that is not
 * AF_UNIX. */
ANYDEV_API anydev_status_t anydev_share_handle_send(int socket,
                                                    const anydev_share_handle_t* handle);
/* Receives one handle sent with anydev_share_handle_send; *out owns the fds
 * received (close them with anydev_share_handle_close). OUT_OF_RANGE when
 * the peer closed the socket before a whole handle arrived; INVALID_ARGUMENT
 * for a message that is not a handle (its fds are closed). */
ANYDEV_API anydev_status_t anydev_share_handle_receive(int socket, anydev_share_handle_t* out);
/* Fills the handle's fds by copying them out of the exporting process
 * (pidfd_open + pidfd_getfd; Linux 5.6+, and ptrace permission over that
 * process: same user and kernel.yama.ptrace_scope 0, or an ancestor). Lets a
 * handle travel as bytes alone (a pipe, a file, a queue). The exporter must
 * still hold the buffer or event. UNSUPPORTED when the kernel lacks the
 * calls; INVALID_STATE when the exporter is gone or permission is refused
 * (naming the pid and errno). Once every fd was copied, the ones the handle
 * had are closed and replaced; on failure the handle is unchanged. */
ANYDEV_API anydev_status_t anydev_share_handle_fetch_fds(anydev_share_handle_t* handle);

/* ---- validation layer (ANYDEV_VALIDATE, docs/reliability.md) ------------ */

/* 1 when ANYDEV_VALIDATE turned the validation layer on, else 0. Cheap (one
 * load after the first call); thread-safe. */
ANYDEV_API int anydev_validation_enabled(void);
/* Validation layer: host access to `count` elements from element `offset`
 * of a host buffer. INVALID_STATE (also logged at error level) when an
 * enqueued copy or fill still writes any of them; OUT_OF_RANGE when they lie
 * outside the buffer. Always ANYDEV_SUCCESS when validation is off.
 * HostBuffer::at() and operator[] call it when validation is on. Thread-safe. */
ANYDEV_API anydev_status_t anydev_buffer_check_host_access(anydev_buffer_t buf, size_t offset,
                                                           size_t count);

/* ---- logging (docs/embedding.md "Logging") ------------------------------ */

/* Severity of a log message, and the threshold below which messages are
 * dropped. The numbers are those of ANYDEV_LOG_LEVEL's names (trace 0 ..
 * off 6) and of the backend ABI's anydev_log_level_t. */
typedef enum anydev_log_severity_t ANYDEV_ENUM_BASE {
  ANYDEV_LOG_SEVERITY_TRACE = 0,
  ANYDEV_LOG_SEVERITY_DEBUG = 1,
  ANYDEV_LOG_SEVERITY_INFO = 2,
  ANYDEV_LOG_SEVERITY_WARN = 3,
  ANYDEV_LOG_SEVERITY_ERROR = 4,
  ANYDEV_LOG_SEVERITY_CRITICAL = 5,
  ANYDEV_LOG_SEVERITY_OFF = 6, /* as a threshold only: nothing is logged */
} anydev_log_severity_t;

/* Receives one log message: its severity, the text (the same as stderr
 * would show after "[anydev] [level] ": every control character but the
 * newline escaped as \xHH; valid only during the call) and the user_data given with the callback.
 * Called on whichever thread logs: the caller's, or one of anydev's own (a backend's worker, the
 * pools' trimming thread), possibly on several threads at once. */
typedef void (*anydev_log_callback_t)(anydev_log_severity_t severity, const char* message,
                                      void* user_data);

/* Routes every message at or above the threshold (anydev_set_log_level) to
 * `callback` with `user_data`; NULL restores the default, stderr as
 * "[anydev] [level] message". Never fails.
 * Thread safety and reentrancy, exactly:
 *  - The swap is atomic: each message goes whole to either the old or the
 *    new destination, never both and never neither.
 *  - Once this returns, the previous callback is never entered again.
 *  - Called outside a log callback, it also waits until every call of the
 *    previous callback still running on another thread has returned, so the
 *    previous user_data may be freed as soon as it returns. A callback that
 *    blocks forever blocks this.
 *  - Called from inside a log callback (on that callback's thread) it does
 *    not wait (it could wait for itself, or for another callback waiting for
 *    it): the previous callback may still be running on other threads when
 *    it returns, though never entered again.
 *  - A callback may call any anydev function, and may block (on a lock of
 *    its own, Python's GIL): anydev never calls it while the calling thread
 *    holds one of anydev's locks (a message logged under one waits until
 *    the thread lets go of it, still before the anydev call returns), so it
 *    stops no other thread's anydev call. The thread's last error is as it
 *    was before the callback. Messages logged on a thread while it is
 *    inside the callback go to stderr, not to a callback, so a callback
 *    never recurses into itself.
 *  - The callback must not unwind out of itself (a C++ exception or a
 *    longjmp through anydev): catch inside it. */
ANYDEV_API anydev_status_t anydev_set_log_callback(anydev_log_callback_t callback, void* user_data);
/* Sets the threshold: messages below it are dropped before they are
 * formatted. Starts at ANYDEV_LOG_LEVEL (default warn); this overrides it
 * for the rest of the process. INVALID_ARGUMENT for a value outside trace ..
 * off. Thread-safe; takes effect for messages logged after it returns. */
ANYDEV_API anydev_status_t anydev_set_log_level(anydev_log_severity_t level);
/* The current threshold. Thread-safe. */
ANYDEV_API anydev_log_severity_t anydev_log_level(void);

/* ---- timed events and stream priorities (docs/timing.md) ---------------- */

/* Flags of anydev_context_create_event_with_flags; a bitwise or. */
typedef enum anydev_event_flag_t ANYDEV_ENUM_BASE {
  ANYDEV_EVENT_DEFAULT = 0,
  /* The event can measure time (anydev_event_elapsed_time). Timing costs on
   * some drivers (CUDA, HIP), so events without this flag never measure. */
  ANYDEV_EVENT_TIMING = 1,
  /* anydev_event_synchronize sleeps in the OS until the work completes
   * instead of spinning (CUDA's CU_EVENT_BLOCKING_SYNC; Mojo's
   * blocking_sync). docs/backends.md says what each backend does. */
  ANYDEV_EVENT_BLOCKING_SYNC = 2,
} anydev_event_flag_t;

/* An event with `flags` (0 is anydev_context_create_event). An unknown bit
 * is INVALID_ARGUMENT; ANYDEV_EVENT_TIMING on a backend that cannot time
 * events is UNSUPPORTED, naming the backend and why. */
ANYDEV_API anydev_status_t anydev_context_create_event_with_flags(anydev_context_t ctx,
                                                                  unsigned flags,
                                                                  anydev_event_t* out);
/* The flags the event was created with. */
ANYDEV_API anydev_status_t anydev_event_flags(anydev_event_t event, unsigned* out);
/* *ms = the time in milliseconds between the completion of the work `start`
 * captured and that `end` captured, as CUDA's cuEventElapsedTime (negative
 * when end completed first; resolution is the backend's, about 0.5 us on
 * CUDA). Both events must be timing events of the same device, recorded
 * (on any streams). Errors, and *ms unchanged: an event created without
 * ANYDEV_EVENT_TIMING, or of another device or backend: INVALID_ARGUMENT;
 * an event never recorded: INVALID_STATE; the work of either not complete
 * yet: NOT_READY (synchronize the end event first). */
ANYDEV_API anydev_status_t anydev_event_elapsed_time(anydev_event_t start, anydev_event_t end,
                                                     float* ms);
/* Mojo's DeviceContext.execution_time: records a timing event on ctx's
 * stream, calls fn(ctx, user_data) `iterations` times (each call enqueues
 * work on ctx), records a second one, waits for it and sets *nanoseconds to
 * the time the device took for all of it (rounded to whole nanoseconds).
 * iterations == 0 is INVALID_ARGUMENT. A call of fn that returns anything
 * but ANYDEV_SUCCESS ends the measurement: that status is returned (the
 * work already enqueued stays enqueued) and *nanoseconds is unchanged. */
typedef anydev_status_t (*anydev_timed_fn_t)(anydev_context_t ctx, void* user_data);
ANYDEV_API anydev_status_t anydev_context_execution_time(anydev_context_t ctx, anydev_timed_fn_t fn,
                                                         void* user_data, size_t iterations,
                                                         int64_t* nanoseconds);

/* Stream priorities, as CUDA's: a lower number is a higher priority. *least
 * is the normal priority, always 0 (every stream made without a priority
 * has it), and *greatest the highest, <= 0 (CUDA's range is [-5, 0] on
 * current GPUs). A device without priorities
 * (docs/backends.md) has the one priority 0: least == greatest == 0.
 * Either pointer may be NULL. */
ANYDEV_API anydev_status_t anydev_context_stream_priority_range(anydev_context_t ctx, int* least,
                                                                int* greatest);
/* A new stream on ctx's device at `priority`. A priority outside the range
 * is clamped into it, as CUDA does (anydev_stream_priority says what the
 * stream got); work of a higher-priority stream is started before queued
 * work of lower ones where the backend can (docs/backends.md). */
ANYDEV_API anydev_status_t anydev_context_create_stream_with_priority(anydev_context_t ctx,
                                                                      int priority,
                                                                      anydev_stream_t* out);
/* The priority the stream was created with (after clamping); the normal
 * priority for a context's own stream or a wrapped native one. */
ANYDEV_API anydev_status_t anydev_stream_priority(anydev_stream_t stream, int* out);
/* ---- registered host memory (docs/registered-memory.md) ---------------- */

/* Called once a registration is undone (see below), with the user_data
 * given to anydev_context_register_host_memory; on any thread (a core
 * thread, or the one releasing the last handle). The memory is the
 * caller's again from then on. */
typedef void (*anydev_unregistered_callback_t)(void* user_data);

/* Registers (page-locks for the device) `bytes` of host memory the caller
 * owns at `pointer` and returns a host buffer of `bytes / size(dtype)`
 * elements of `dtype` over it (Mojo's DeviceContext.register_host_memory):
 * copies from and to it run as from pinned memory (cuMemHostRegister,
 * hipHostRegister, zexDriverImportExternalPointer, an OpenCL
 * CL_MEM_USE_HOST_PTR buffer, mlock on cpu). anydev never frees the memory:
 * when the last handle to the buffer (and every view) is released, the
 * registration is undone after the work that used it has completed, on
 * ctx's stream order, and then `on_unregistered(user_data)` runs (when not
 * NULL); keep the memory valid until then.
 * Rules, each an error that registers nothing:
 *  - pointer NULL, bytes 0, or bytes not a multiple of the dtype's size:
 *    INVALID_ARGUMENT; pointer not aligned to the dtype's alignment:
 *    INVALID_ARGUMENT (any alignment is fine for uint8; no page alignment
 *    is needed);
 *  - pointer + bytes past the end of the address space, or bytes above
 *    PTRDIFF_MAX: OUT_OF_RANGE;
 *  - a range sharing a page with memory registered through anydev on the
 *    same backend (any device) and not yet unregistered, the same range
 *    again included: INVALID_ARGUMENT naming both ranges (the drivers
 *    register whole pages; CUDA answers
 *    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED). A registration whose last
 *    handle is gone but whose work is still running is waited for first;
 *  - memory that is not mapped: INVALID_ARGUMENT; memory the driver cannot
 *    pin: its error;
 *  - a backend without registration: UNSUPPORTED naming why.
 * anydev_buffer_is_locked says whether the pages really are locked (cpu:
 * mlock within RLIMIT_MEMLOCK). take_ptr on such a buffer: UNSUPPORTED.
 * Thread-safe. */
ANYDEV_API anydev_status_t anydev_context_register_host_memory(
    anydev_context_t ctx, void* pointer, size_t bytes, anydev_dtype_t dtype,
    anydev_unregistered_callback_t on_unregistered, void* user_data, anydev_buffer_t* out);
/* *registered = 1 when buf (or the allocation a view is of) is registered
 * host memory, else 0. */
ANYDEV_API anydev_status_t anydev_buffer_is_registered(anydev_buffer_t buf, int* registered);

/* ---- device attributes (docs/backends.md, "Device attributes") ---------- */

/* Portable device attributes, each a 64-bit integer in the unit its name
 * gives. A backend without a value for one answers UNSUPPORTED with the
 * reason; docs/backends.md has the table of which backend gives what. */
typedef enum anydev_device_attribute_t ANYDEV_ENUM_BASE {
  ANYDEV_ATTRIBUTE_COMPUTE_UNITS = 0,             /* SMs, CUs, EUs, OpenCL compute units, cpus */
  ANYDEV_ATTRIBUTE_CLOCK_RATE_KHZ = 1,            /* the highest core clock */
  ANYDEV_ATTRIBUTE_MEMORY_CLOCK_RATE_KHZ = 2,     /* the device memory's peak clock */
  ANYDEV_ATTRIBUTE_MEMORY_BUS_WIDTH_BITS = 3,     /* the device memory's bus width */
  ANYDEV_ATTRIBUTE_L2_CACHE_BYTES = 4,            /* L2 (OpenCL: the global memory cache) */
  ANYDEV_ATTRIBUTE_MAX_ALLOCATION_BYTES = 5,      /* the largest single device allocation */
  ANYDEV_ATTRIBUTE_TOTAL_MEMORY_BYTES = 6,        /* the device's memory */
  ANYDEV_ATTRIBUTE_UNIFIED_ADDRESSING = 7,        /* 1: host and device share one address space */
  ANYDEV_ATTRIBUTE_INTEGRATED = 8,                /* 1: the device shares the host's memory */
  ANYDEV_ATTRIBUTE_PCI_DOMAIN = 9,                /* PCI address: domain, */
  ANYDEV_ATTRIBUTE_PCI_BUS = 10,                  /* bus, */
  ANYDEV_ATTRIBUTE_PCI_DEVICE = 11,               /* device, */
  ANYDEV_ATTRIBUTE_PCI_FUNCTION = 12,             /* function */
  ANYDEV_ATTRIBUTE_MAX_THREADS_PER_GROUP = 13,    /* threads per block / work-group */
  ANYDEV_ATTRIBUTE_SIMD_WIDTH = 14,               /* warp, wavefront or EU SIMD width */
  ANYDEV_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 15, /* CUDA compute capability / HIP gfx */
  ANYDEV_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 16,
  ANYDEV_ATTRIBUTE_COUNT = 17 /* not an attribute: how many there are */
} anydev_device_attribute_t;

/* "compute_units", "clock_rate_khz", ...: the name without the prefix, in
 * lower case; NULL for a value outside the enum. */
ANYDEV_API const char* anydev_device_attribute_name(anydev_device_attribute_t attribute);
/* The attribute of that name; INVALID_ARGUMENT naming it when none. */
ANYDEV_API anydev_status_t anydev_device_attribute_from_name(const char* name,
                                                             anydev_device_attribute_t* out);
/* *value = the attribute of ctx's device. INVALID_ARGUMENT for a value
 * outside the enum; UNSUPPORTED, naming the attribute, the device and why,
 * where the backend has no value for it. Thread-safe; asks the driver on
 * every call. */
ANYDEV_API anydev_status_t anydev_context_get_attribute(anydev_context_t ctx,
                                                        anydev_device_attribute_t attribute,
                                                        int64_t* value);
/* The device's 16-byte UUID as its vendor gives it (cuDeviceGetUuid,
 * hipDeviceGetUuid, the Level Zero device properties, cl_khr_device_uuid);
 * UNSUPPORTED where there is none (cpu). */
ANYDEV_API anydev_status_t anydev_context_device_uuid(anydev_context_t ctx, uint8_t uuid[16]);
/* "dddd:bb:dd.f" (hexadecimal, as lspci and cuDeviceGetPCIBusId write it)
 * from the four PCI attributes; `capacity` >= 13, else OUT_OF_RANGE.
 * UNSUPPORTED where the device has no PCI address. */
ANYDEV_API anydev_status_t anydev_context_pci_bus_id(anydev_context_t ctx, char* out,
                                                     size_t capacity);
/* The vendor driver's or API's version as text ("CUDA driver API 12.4
 * (cuDriverGetVersion 12040)", "OpenCL 3.0 PoCL ..., driver 5.0", ...), cut
 * to `capacity` bytes (NUL-terminated). */
ANYDEV_API anydev_status_t anydev_context_api_version(anydev_context_t ctx, char* out,
                                                      size_t capacity);

/* ---- graphs: copies and fills recorded once, replayed many times -------- */

/* A graph (Mojo's DeviceGraph) is a DAG of copies, fills and empty (join)
 * nodes on buffers of one context's device, built once and replayed on a
 * stream of that device as often as wanted. A replay costs one vendor launch
 * where the backend has native graphs (anydev_graph_is_native), else one
 * pass over the nodes that enqueues them in the order they were added (a
 * topological order; in-order streams make it correct): either way no
 * argument is checked again. docs/graphs.md.
 *
 * Nodes are named by anydev_graph_node_t values that the add_* calls
 * return; a node's dependencies must be nodes of the same graph added
 * before it (so the graph is always acyclic). Nodes with no path between
 * them may run in any order or at the same time: give a dependency between
 * two nodes that touch the same bytes when one of them writes.
 *
 * Buffers: a copy copies dst's size from the start of src (a sub-buffer
 * names a range), as anydev_enqueue_copy; a fill writes the whole buffer, as
 * anydev_enqueue_fill. Every buffer must be on the graph's backend and
 * device. The graph keeps the memory of every buffer it names alive until
 * the graph is released: the caller may release its buffer handles at once.
 * A replay reads the memory when it runs, so a source changed between
 * replays is seen by the next one. Buffers in a graph cannot be taken
 * (anydev_buffer_take_ptr: INVALID_STATE) while the graph lives.
 *
 * Building (add_*) ends at the first instantiate or replay: later add_* are
 * INVALID_STATE. Thread safety: every call is thread-safe; add_* calls on
 * one graph from several threads are serialized in some order; replays of
 * one graph may run at the same time on several streams (each replay waits
 * for the earlier users of the graph's buffers, as any enqueue does). */
typedef struct anydev_graph_s* anydev_graph_t;
/* A node of one graph; 0 is never a node. */
typedef uint64_t anydev_graph_node_t;

/* An empty graph on ctx's backend and device. */
ANYDEV_API anydev_status_t anydev_graph_create(anydev_context_t ctx, anydev_graph_t* out);
ANYDEV_API anydev_status_t anydev_graph_retain(anydev_graph_t graph);
/* Never blocks: the graph's memory is released after its replays. */
ANYDEV_API anydev_status_t anydev_graph_release(anydev_graph_t graph);
/* A copy node: dst's size from src, after `deps` (dep_count nodes; deps may
 * be NULL when dep_count is 0). *out (may be NULL) names the node. Errors,
 * each naming the operation and the values: src smaller than dst, ranges of
 * the same memory that overlap, a buffer of another backend or device, an
 * unknown or foreign dependency. */
ANYDEV_API anydev_status_t anydev_graph_add_copy(anydev_graph_t graph, anydev_buffer_t dst,
                                                 anydev_buffer_t src,
                                                 const anydev_graph_node_t* deps, size_t dep_count,
                                                 anydev_graph_node_t* out);
/* A fill node: the pattern rules of anydev_enqueue_fill (1, 2, 4, 8 or 16
 * bytes, dividing the buffer's size, within the device's max pattern). The
 * pattern is copied: the caller's memory is not read afterwards. */
ANYDEV_API anydev_status_t anydev_graph_add_fill(anydev_graph_t graph, anydev_buffer_t buf,
                                                 const void* pattern, size_t pattern_size,
                                                 const anydev_graph_node_t* deps, size_t dep_count,
                                                 anydev_graph_node_t* out);
/* A node that does nothing but wait for `deps`: a join. */
ANYDEV_API anydev_status_t anydev_graph_add_empty(anydev_graph_t graph,
                                                  const anydev_graph_node_t* deps, size_t dep_count,
                                                  anydev_graph_node_t* out);
ANYDEV_API anydev_status_t anydev_graph_node_count(anydev_graph_t graph, size_t* out);
/* Ends building and prepares replays (the backend's native graph, where it
 * has one). Optional: the first replay does it. A second call does
 * nothing. */
ANYDEV_API anydev_status_t anydev_graph_instantiate(anydev_graph_t graph);
/* Runs the graph on ctx's stream (NULL: the graph's context), ordered like
 * any enqueue: after the work enqueued there before, and before the work
 * enqueued after. ctx must be on the graph's backend and device. */
ANYDEV_API anydev_status_t anydev_graph_replay(anydev_graph_t graph, anydev_context_t ctx);
/* *out = 1 when a replay is one native launch of the backend's graph, 0
 * when the core enqueues the nodes (instantiates the graph first). */
ANYDEV_API anydev_status_t anydev_graph_is_native(anydev_graph_t graph, int* out);

/* Stream capture (CUDA's cuStreamBeginCapture, on every backend): between
 * begin and end, the copies and fills enqueued on ctx's stream (through any
 * context on that stream, from C, C++ or Python, also with ctx == NULL on a
 * buffer of such a context) are not run: each becomes a node of `graph`
 * that depends on the previously captured node (the first one on the nodes
 * the graph already had that nothing follows), checked as the matching
 * anydev_graph_add_* checks it. The backend stream itself never captures:
 * replay the graph to run the work (the graph then gets the backend's
 * native graph where there is one). docs/graphs.md, "Stream capture".
 *
 * During a capture, on the capturing stream, INVALID_STATE naming the call
 * (nothing is run or changed): copies to or from a host pointer
 * (anydev_enqueue_copy_from_host / _to_host: use a host buffer or
 * registered memory), synchronize, event record and wait, wait_for (either
 * side), execution_time, a graph replay, anydev_buffer_format of a device
 * buffer, communicator transfers. Not captured, and run at once as usual:
 * buffer creation (the memory exists at once; captured nodes may use it),
 * buffer release and anydev_context_free (stream-ordered after the work
 * really enqueued; a graph keeps the memory it names alive). The graph
 * cannot be instantiated or replayed until the capture ends; adding nodes
 * to it explicitly stays allowed.
 *
 * A capture belongs to the thread that began it: a copy or fill enqueued
 * on the capturing stream from another thread is INVALID_STATE, and only
 * that thread can end it. Errors: begin on a stream already capturing, into
 * an instantiated graph or a graph another stream captures into, INVALID_
 * STATE; a graph of another backend or device, INVALID_ARGUMENT; end on a
 * stream that is not capturing, INVALID_STATE. A capture never ended keeps
 * its graph alive. Thread safety: thread-safe; the capture check costs the
 * normal enqueue one relaxed atomic load. */
ANYDEV_API anydev_status_t anydev_context_begin_capture(anydev_context_t ctx, anydev_graph_t graph);
/* Ends the capture of ctx's stream (begun through any context on it). */
ANYDEV_API anydev_status_t anydev_context_end_capture(anydev_context_t ctx);
/* *out = 1 while ctx's stream captures, else 0. */
ANYDEV_API anydev_status_t anydev_context_is_capturing(anydev_context_t ctx, int* out);
/* ---- Transfers between processes and nodes over UCX (docs/distributed.md) ----
 *
 * A communicator belongs to one context (its backend and device). It is
 * built on UCX's UCP API, opened at run time (libucp.so.0, or
 * ANYDEV_UCX_LIBRARY); where UCX is absent anydev_comm_create fails with
 * BACKEND_UNAVAILABLE and the reason. Its address is bytes that peers pass
 * to anydev_comm_connect (exchanged by any channel: MPI, a pipe, a file).
 *
 * Transfers are stream-ordered on the buffer's context: a transfer starts
 * after the work enqueued on that stream before it; work enqueued there
 * after it (copies, fills, events, synchronize) waits for it, so it sees
 * received bytes and may overwrite sent ones. Transfers enqueued back to back
 * run concurrently with each other (many in flight, tags matched in any
 * order). A failed transfer's error is returned by the next synchronize of
 * that stream (DEVICE, with the reason: peer died, timed out, size
 * mismatch). Every transfer ends within the communicator's timeout
 * (ANYDEV_UCX_TIMEOUT_MS, default 30000 ms). Send and receive must agree on
 * the byte size. All calls are thread-safe. */
typedef struct anydev_comm_s* anydev_comm_t;               /* communicator */
typedef struct anydev_comm_region_s* anydev_comm_region_t; /* this process's exposed buffer */
typedef struct anydev_comm_remote_s* anydev_comm_remote_t; /* a peer's exposed buffer, imported */

/* Creates a communicator on ctx. timeout_ms 0: ANYDEV_UCX_TIMEOUT_MS, else
 * 30000. BACKEND_UNAVAILABLE (UCX missing or failing to start), with why. */
ANYDEV_API anydev_status_t anydev_comm_create(anydev_context_t ctx, uint32_t timeout_ms,
                                              anydev_comm_t* out);
ANYDEV_API anydev_status_t anydev_comm_retain(anydev_comm_t comm);
/* The last release waits for the transfers in flight (each bounded by the
 * timeout), then closes the connections. */
ANYDEV_API anydev_status_t anydev_comm_release(anydev_comm_t comm);
/* The address: *size receives its length; it is copied to `out` when
 * capacity allows (OUT_OF_RANGE when it does not; out may be NULL with
 * capacity 0 to ask the size). */
ANYDEV_API anydev_status_t anydev_comm_address(anydev_comm_t comm, void* out, size_t capacity,
                                               size_t* size);
/* Connects to the peer whose address is `address`; *peer receives its
 * index (0, 1, ... in connection order). INVALID_ARGUMENT for bytes that are
 * not an address, this communicator's own, or one already connected. */
ANYDEV_API anydev_status_t anydev_comm_connect(anydev_comm_t comm, const void* address, size_t size,
                                               int* peer);
ANYDEV_API anydev_status_t anydev_comm_peer_count(anydev_comm_t comm, int* count);
/* The memory types UCX reaches directly, e.g. "host" or "host,cuda" (a
 * static string for the communicator's life). Device memory of another kind
 * is staged through pinned host bounce buffers. */
ANYDEV_API const char* anydev_comm_memory_types(anydev_comm_t comm);
/* Sends all of `buffer` to `peer` with `tag` / receives a message with `tag`
 * from `peer` into all of `buffer`. Stream-ordered (above). */
ANYDEV_API anydev_status_t anydev_comm_enqueue_send(anydev_comm_t comm, anydev_buffer_t buffer,
                                                    int peer, uint32_t tag);
ANYDEV_API anydev_status_t anydev_comm_enqueue_recv(anydev_comm_t comm, anydev_buffer_t buffer,
                                                    int peer, uint32_t tag);
/* Exposes `buffer` (host memory, or device memory UCX reaches directly;
 * UNSUPPORTED otherwise) to peers' put and get; the region keeps the buffer
 * alive. Its key (bytes) goes to the peer, which imports it. */
ANYDEV_API anydev_status_t anydev_comm_expose(anydev_comm_t comm, anydev_buffer_t buffer,
                                              anydev_comm_region_t* out);
/* Allocates `count` elements of `dtype` through UCX (ucp_mem_map with
 * UCP_MEM_MAP_ALLOCATE) and exposes them at once: *buffer receives a host
 * buffer of comm's context over that memory, usable wherever a host buffer
 * is (copies, fills, send/recv, the source of puts and gets), and *region
 * its exposed region (as anydev_comm_expose's, from the same mapping). The
 * target of puts over shared memory (UCX_TLS=sm,self or posix,self) should
 * be such memory: UCX maps it into the peer, so puts into it are plain
 * stores, where memory the backend allocated has UCX carry every put in
 * messages this process's progress thread copies in. The buffer is
 * registered host memory (anydev_buffer_is_registered: 1; take_ptr:
 * UNSUPPORTED). The memory is unmapped once both the buffer (after its
 * last use has completed, in stream order) and the region are released;
 * each keeps comm alive. Errors, allocating nothing: NULL comm, buffer or
 * region, an unknown dtype or count 0: INVALID_ARGUMENT; a byte count that
 * overflows: OUT_OF_RANGE; more than PTRDIFF_MAX bytes, more than the
 * machine's available memory (MemAvailable; checked before UCX allocates,
 * since UCX backs the memory with shared memory in RAM), or more than UCX
 * can allocate: OUT_OF_MEMORY. Without the UCX transport:
 * BACKEND_UNAVAILABLE. */
ANYDEV_API anydev_status_t anydev_comm_expose_new(anydev_comm_t comm, anydev_dtype_t dtype,
                                                  size_t count, anydev_buffer_t* buffer,
                                                  anydev_comm_region_t* region);
ANYDEV_API anydev_status_t anydev_comm_region_key(anydev_comm_region_t region, void* out,
                                                  size_t capacity, size_t* size);
ANYDEV_API anydev_status_t anydev_comm_region_release(anydev_comm_region_t region);
/* Imports the key of a region that `peer` exposed. INVALID_ARGUMENT for
 * bytes that are not a key or a key of another process than `peer`. */
ANYDEV_API anydev_status_t anydev_comm_import(anydev_comm_t comm, int peer, const void* key,
                                              size_t size, anydev_comm_remote_t* out);
ANYDEV_API anydev_status_t anydev_comm_remote_release(anydev_comm_remote_t remote);
/* Writes all of `buffer` into the remote region at byte `offset` / reads
 * that many bytes from it into `buffer`. OUT_OF_RANGE when it does not fit.
 * A put completes when the bytes are in the peer's memory; the peer learns
 * of it by another message (a send, MPI). Stream-ordered (above). */
ANYDEV_API anydev_status_t anydev_comm_enqueue_put(anydev_comm_t comm, anydev_buffer_t buffer,
                                                   anydev_comm_remote_t remote, size_t offset);
ANYDEV_API anydev_status_t anydev_comm_enqueue_get(anydev_comm_t comm, anydev_buffer_t buffer,
                                                   anydev_comm_remote_t remote, size_t offset);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ANYDEV_ANYDEV_H_ */
