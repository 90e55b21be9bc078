/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one list of backend table entries (backend ABI 3), included by
 * anydev/backend.h after the types it names; not a header of its own.
 *
 *   ANYDEV_BACKEND_ENTRIES(X, arg)  X(arg, need, name, params) for each entry
 *                                   in table order; `need` is REQUIRED or
 *                                   OPTIONAL, `params` the parenthesized
 *                                   parameter list without the instance.
 *                                   Every entry returns anydev_status_t and
 *                                   takes `void* instance` (the table's
 *                                   `instance` field) before `params`:
 *                                   ANYDEV_BK_WITH_INSTANCE(params) in
 *                                   backend.h spells the whole list.
 *
 * From it come the table struct (backend.h), the backend kit's entry lists
 * and table builder (include/anydev/kit/table.h) and the core's check of
 * the required entries (src/runtime/plugin_loader.cpp). A new entry is added here
 * only, at the end, and within an ABI version only as OPTIONAL: a table built
 * before it lacks it, and the core reads it as NULL (backend.h, "Growth
 * within ABI 3"). A new required entry, or a reordering, is a new ABI
 * version.
 *
 * The instance. Every entry's first argument is the `instance` of the table
 * it was called through, unchanged (the caller passes t->instance to t->f).
 * It is the table owner's pointer: NULL or what the backend (or a layer
 * wrapping a table) set, valid for the life of the process; the core never
 * reads through it. A backend built with the kit (anydev/kit/
 * table.h) may write its entries without it: the kit adapts them.
 *
 * The entries' contracts:
 *
 * initialize: called once. Returns ANYDEV_SUCCESS, or
 *   ANYDEV_BACKEND_UNAVAILABLE after core->set_error(...) with the exact
 *   reason (file, symbol, dlerror text, driver error). `library` receives the
 *   vendor library it opened or tried (empty for cpu); it stays valid for the
 *   life of the process.
 * device_count, device_props, memory_info: the devices. device_props fills
 *   anydev_bk_device_props_t, capabilities included.
 * stream_create: an in-order queue on `device`.
 * stream_destroy: waits for the stream's work, then destroys it. A stream
 *   from stream_wrap_native belongs to the caller, who may destroy the native
 *   stream once the anydev context over it is released (this call may come
 *   later, from the core's reclaimer): the backend then must not use the
 *   native stream unless it holds a reference to it (OpenCL retains its
 *   queue; CUDA cannot, so it frees only its wrapper).
 * stream_synchronize: waits for all work enqueued so far; returns (and
 *   clears) the first asynchronous error since the previous call.
 * event_create, event_destroy, event_record, event_synchronize, event_query:
 *   a fresh or never-recorded event is complete; recording captures the work
 *   enqueued on the stream so far; event_query sets *complete = 1 when the
 *   captured work has finished.
 * stream_wait_event: later work on `stream` waits (on the device, without
 *   blocking the caller) for the work `event` captured. The wait must not
 *   depend on the event object afterwards: the core may destroy or re-record
 *   the event as soon as this returns.
 * host_alloc, device_alloc: `bytes` > 0. `*handle` is what copies and fills
 *   will receive; `*address` is what unsafe_ptr() returns for offset 0 (for
 *   pointer-based backends the same as the handle; for host memory a
 *   host-dereferenceable pointer). An allocation the backend cannot satisfy
 *   is OUT_OF_MEMORY. device_alloc is ordered on `stream` (the memory may be
 *   used by work enqueued on `stream` after the call).
 * memory_free: frees memory from host_alloc/device_alloc. Called only after
 *   every operation that used it has completed. Must not block on the device.
 * memory_free_async (optional): frees device memory ordered on `stream`
 *   (e.g. cuMemFreeAsync). The core has already made `stream` wait for every
 *   other stream that used the memory. NULL, or ANYDEV_BK_DECLINED for this
 *   call (a device without stream-ordered free): the core waits on an event
 *   and calls memory_free.
 * copy: copies `bytes` from src to dst, ordered on `stream`. Both refs belong
 *   to this backend (or are USER_HOST); ranges are valid and do not overlap.
 * fill: writes `pattern` (pattern_size of 1, 2, 4, 8 or 16 bytes, at most the
 *   device's max_fill_pattern) repeatedly over `bytes` bytes of dst, ordered
 *   on `stream`; bytes % pattern_size == 0 and dst.offset %
 *   min(pattern_size, 4) == 0 (a view is aligned for its element type, and a
 *   complex64 view may start at any multiple of 4).
 * can_access_peer, enable_peer_access: peer access between two devices of
 *   this backend.
 * native_handle (optional): native handles (anydev_native_kind_t). `object`
 *   is a stream, event or memory handle of this backend, or NULL for
 *   device/context kinds. UNSUPPORTED when the backend has no such native
 *   object.
 * stream_wrap_native (optional): wraps an existing native stream without
 *   owning it; stream_destroy on the result must not destroy the native
 *   stream.
 * memory_is_locked (optional): *locked = 1 when host memory `handle` (from
 *   host_alloc) is page-locked (pinned), 0 when it is ordinary pageable
 *   memory. NULL: the core reports the memory as locked (the backend pins
 *   everything).
 *
 * Sharing between processes (all optional; docs/sharing.md). NULL entries,
 * or ANYDEV_ERROR_UNSUPPORTED with a message giving the reason, mean the
 * backend cannot share that object; the core passes the reason on.
 * shareable_alloc: like host_alloc/device_alloc (by `kind`), but memory that
 *   memory_export can describe. Not ordered on a stream: usable at once.
 *   Freed with memory_unshare, never memory_free.
 * memory_export: describes shareable memory `handle` (from shareable_alloc
 *   or memory_import) for another process; see anydev_bk_share_t.
 * memory_import: opens what memory_export wrote in another process (or
 *   this one) on `device`. `bytes` is the allocation's size as the exporter
 *   gave it; the backend checks the payload against it and against its own
 *   device (a payload of another device, a forged or truncated one, fds that
 *   are not what it exported: INVALID_ARGUMENT with the reason). The memory
 *   stays valid until memory_unshare here, whatever the exporter does
 *   (exits, frees, is killed); where the backend cannot promise that, it
 *   says how it fails in docs/sharing.md. Freed with memory_unshare.
 * memory_unshare: frees shareable or imported memory, after every operation
 *   that used it has completed (as memory_free).
 * event_create_shareable, event_export, event_import: an event another
 *   process can open. The imported event is an ordinary event of this
 *   backend (record, query, synchronize, stream_wait_event, event_destroy).
 *   A wait on it must not hang when the recording process dies: the backend
 *   fails the wait (DEVICE, naming the pid) within a bounded time.
 *
 * Timed events (optional; docs/timing.md). The core calls them only after
 * its own checks, so a backend sees valid arguments.
 * event_create_flags: like event_create, with `flags` a non-zero bitwise or
 *   of ANYDEV_EVENT_TIMING and ANYDEV_EVENT_BLOCKING_SYNC (anydev.h).
 *   NULL, or ANYDEV_BK_DECLINED for this call: the core makes a plain event
 *   and emulates BLOCKING_SYNC itself (its synchronize polls with sleeps);
 *   TIMING is then UNSUPPORTED. A backend that cannot time events on this
 *   device answers UNSUPPORTED with the reason instead.
 * event_elapsed_time: *ms between the completion of the work `start` and
 *   `end` captured, both timing events of this backend and device that have
 *   been recorded (the core checks both). ANYDEV_ERROR_NOT_READY (with a
 *   message) while either's work has not completed.
 *
 * Stream priorities (optional; docs/timing.md), with CUDA's meaning: a
 * lower number is a higher priority.
 * stream_priority_range: *least (the normal priority, what stream_create
 *   gives; always 0) and *greatest (the highest, <= 0) of `device`.
 *   NULL: the device has the one priority 0.
 * stream_create_priority: like stream_create, at `priority`, which the core
 *   has clamped into the device's range (it is never `least` alone: that is
 *   stream_create).
 *
 * Registered host memory (both optional; docs/registered-memory.md). NULL
 * entries: the core answers UNSUPPORTED naming the missing entry; a backend
 * whose driver lacks the means answers UNSUPPORTED itself, naming what is
 * missing.
 * host_register: makes `bytes` (> 0) of the caller's host memory at
 *   `pointer` (not NULL, any alignment, the range not overlapping another
 *   live registration of this backend: the core checks all that) usable
 *   like host_alloc memory: `*handle` is what copies and fills receive as
 *   ANYDEV_BK_MEMORY_HOST, and the host address is `pointer` itself. The
 *   memory stays the caller's: nothing the backend does frees it. Memory
 *   that is not mapped: INVALID_ARGUMENT; memory the driver cannot pin:
 *   OUT_OF_MEMORY or the driver's status, with its error. memory_is_locked
 *   answers for the handle like for host_alloc memory.
 * host_unregister: undoes host_register for `handle`, after every operation
 *   that used it has completed (as memory_free). Never frees the memory.
 *
 * Device attributes (all optional; anydev.h, "device attributes"). NULL
 * entries: the core answers UNSUPPORTED naming the missing entry.
 * device_attribute: *value = the value of `attribute` (an
 *   anydev_device_attribute_t, already checked to be in range) on `device`,
 *   in the unit its name gives; UNSUPPORTED, with a message saying why,
 *   where the backend or its driver has no such value.
 * device_uuid: the device's 16-byte UUID as the vendor gives it;
 *   UNSUPPORTED where there is none.
 * api_version: the vendor driver's or API's version as text (NUL-terminated,
 *   cut to `capacity` bytes), for the driver that serves `device`.
 *
 * Graphs (all optional; docs/graphs.md). Without them the core replays a
 * graph by enqueueing its nodes with copy and fill.
 * graph_create: a native graph of `count` nodes (anydev_bk_graph_node_t,
 *   in a topological order) on `device`, ready to launch. ANYDEV_BK_DECLINED
 *   when the backend cannot make this one natively (the core replays it).
 * graph_launch: runs the whole graph on `stream`, ordered like any enqueue
 *   there. May be called for one graph on several streams at once.
 * graph_destroy: frees the graph. May be called while launches of it are
 *   still running: the backend frees what they use after them (as
 *   cuGraphExecDestroy does). Never blocks on the device.
 */
#ifndef ANYDEV_BACKEND_ENTRIES_H_
#define ANYDEV_BACKEND_ENTRIES_H_

/* clang-format off */
#define ANYDEV_BACKEND_ENTRIES(X, arg)                                                        \
  X(arg, REQUIRED, initialize, (const anydev_core_services_t* core, const char** library))    \
  X(arg, REQUIRED, device_count, (int* count))                                                \
  X(arg, REQUIRED, device_props, (int device, anydev_bk_device_props_t* props))               \
  X(arg, REQUIRED, memory_info, (int device, size_t* free_bytes, size_t* total_bytes))        \
  X(arg, REQUIRED, stream_create, (int device, anydev_bk_stream_t* out))                      \
  X(arg, REQUIRED, stream_destroy, (anydev_bk_stream_t stream))                               \
  X(arg, REQUIRED, stream_synchronize, (anydev_bk_stream_t stream))                           \
  X(arg, REQUIRED, event_create, (int device, anydev_bk_event_t* out))                        \
  X(arg, REQUIRED, event_destroy, (anydev_bk_event_t event))                                  \
  X(arg, REQUIRED, event_record, (anydev_bk_event_t event, anydev_bk_stream_t stream))        \
  X(arg, REQUIRED, event_synchronize, (anydev_bk_event_t event))                              \
  X(arg, REQUIRED, event_query, (anydev_bk_event_t event, int* complete))                     \
  X(arg, REQUIRED, stream_wait_event, (anydev_bk_stream_t stream, anydev_bk_event_t event))   \
  X(arg, REQUIRED, host_alloc, (int device, size_t bytes, void** handle, void** address))     \
  X(arg, REQUIRED, device_alloc, (int device, size_t bytes, anydev_bk_stream_t stream,        \
                                  void** handle, void** address))                             \
  X(arg, REQUIRED, memory_free, (int device, anydev_bk_memory_kind_t kind, void* handle))     \
  X(arg, OPTIONAL, memory_free_async, (int device, void* handle, anydev_bk_stream_t stream))  \
  X(arg, REQUIRED, copy, (anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,              \
                          anydev_bk_memory_ref_t src, size_t bytes))                          \
  X(arg, REQUIRED, fill, (anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,              \
                          const void* pattern, size_t pattern_size, size_t bytes))            \
  X(arg, REQUIRED, can_access_peer, (int device, int peer, int* can_access))                  \
  X(arg, REQUIRED, enable_peer_access, (int device, int peer))                                \
  X(arg, OPTIONAL, native_handle, (int device, int kind, void* object, void** out))           \
  X(arg, OPTIONAL, stream_wrap_native, (int device, void* native_stream,                      \
                                        anydev_bk_stream_t* out))                             \
  X(arg, OPTIONAL, memory_is_locked, (int device, void* handle, int* locked))                \
  X(arg, OPTIONAL, shareable_alloc, (int device, anydev_bk_memory_kind_t kind, size_t bytes,  \
                                     void** handle, void** address))                          \
  X(arg, OPTIONAL, memory_export, (int device, anydev_bk_memory_kind_t kind, void* handle,    \
                                   anydev_bk_share_t* out))                                   \
  X(arg, OPTIONAL, memory_import, (int device, anydev_bk_memory_kind_t kind,                  \
                                   const anydev_bk_share_t* in, size_t bytes, void** handle,  \
                                   void** address))                                           \
  X(arg, OPTIONAL, memory_unshare, (int device, anydev_bk_memory_kind_t kind, void* handle))  \
  X(arg, OPTIONAL, event_create_shareable, (int device, anydev_bk_event_t* out))              \
  X(arg, OPTIONAL, event_export, (anydev_bk_event_t event, anydev_bk_share_t* out))           \
  X(arg, OPTIONAL, event_import, (int device, const anydev_bk_share_t* in,                    \
                                  anydev_bk_event_t* out))                                    \
  X(arg, OPTIONAL, event_create_flags, (int device, uint32_t flags, anydev_bk_event_t* out))  \
  X(arg, OPTIONAL, event_elapsed_time, (anydev_bk_event_t start, anydev_bk_event_t end,       \
                                        float* ms))                                           \
  X(arg, OPTIONAL, stream_priority_range, (int device, int* least, int* greatest))            \
  X(arg, OPTIONAL, stream_create_priority, (int device, int priority, anydev_bk_stream_t* out)) \
  X(arg, OPTIONAL, host_register, (int device, void* pointer, size_t bytes, void** handle))   \
  X(arg, OPTIONAL, host_unregister, (int device, void* handle))                              \
  X(arg, OPTIONAL, device_attribute, (int device, int attribute, int64_t* value))             \
  X(arg, OPTIONAL, device_uuid, (int device, uint8_t* uuid))                                  \
  X(arg, OPTIONAL, api_version, (int device, char* out, size_t capacity))                     \
  X(arg, OPTIONAL, graph_create, (int device, const anydev_bk_graph_node_t* nodes,            \
                                  size_t count, anydev_bk_graph_t* out))                      \
  X(arg, OPTIONAL, graph_launch, (anydev_bk_graph_t graph, anydev_bk_stream_t stream))        \
  X(arg, OPTIONAL, graph_destroy, (anydev_bk_graph_t graph))
/* clang-format on */

#endif /* ANYDEV_BACKEND_ENTRIES_H_ */
