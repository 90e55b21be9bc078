/* SPDX-License-Identifier: Apache-2.0 */
/*
 * anydev backend ABI.
 *
 * Every backend -- the built-in CPU fallback and each plugin
 * (libanydev-backend-NAME.so) -- hands the core one table of function
 * pointers, `anydev_backend_table_t`. The core never calls a vendor API
 * itself and never special-cases a backend: everything it knows about a
 * backend comes through this table.
 *
 * Versioning. A plugin exports one symbol, ANYDEV_BACKEND_ENTRY_SYMBOL:
 *
 *   anydev_status_t anydev_backend_entry(uint32_t core_abi_version,
 *                                        const anydev_core_services_t* core,
 *                                        const anydev_backend_table_t** out);
 *
 * The core refuses a table whose `abi_version` differs from
 * ANYDEV_BACKEND_ABI_VERSION (a plugin of an earlier ABI gets a reason naming
 * both versions).
 *
 * Growth within ABI 3. The table starts with its fixed fields (struct_size,
 * abi_version, name, instance, flags; their offsets are pinned below), then
 * one function pointer per entry of ANYDEV_BACKEND_ENTRIES in list order. New
 * entries are only ever appended to that list, and only as optional entries
 * (a new required entry, or any change to the fixed fields, is a new ABI
 * version). So, for a table of ABI version 3:
 *   - struct_size is the size of the table the plugin was built with. It must
 *     hold every fixed field and every required entry (it reaches at least the
 *     end of the last required entry); a shorter table is refused with both
 *     sizes.
 *   - a smaller struct_size than the core's (a plugin built against an older
 *     ABI 3 header): the core reads nothing at or past struct_size; the
 *     optional entries there read as NULL, that is, declined.
 *   - a bigger struct_size (a plugin built against a newer ABI 3 header): the
 *     core ignores the entries past its own table.
 * The same rule holds for the two other structs that cross the boundary,
 * both of which start with struct_size and grow only at their end:
 * anydev_core_services_t (a backend calls a service only when the core's
 * struct_size holds it; the kit's core_services does) and
 * anydev_bk_device_props_t (the core zero-fills it and sets struct_size; a
 * backend writes only the fields inside it, as the kit's set_capabilities
 * does, and the core reads the fields a backend left alone as 0).
 *
 * Ownership. Handles that a backend returns (streams, events, memory) are
 * owned by the core until it hands them back through the matching destroy or
 * free entry. The core guarantees:
 *   - `memory_free` is called only after every operation that used the memory
 *     has completed (the core waits on an event first), or through
 *     `memory_free_async`, which the backend orders on the given stream;
 *   - `stream_destroy` is called only when no other thread can use the stream;
 *   - zero-byte allocations, copies and fills never reach the backend.
 *
 * Thread safety. Every entry may be called from any thread, concurrently with
 * any other entry, including several calls on the same stream (the backend
 * serializes them in some order). `initialize` is called once, before any
 * other entry, under the core's registry lock.
 *
 * Errors. An entry returns ANYDEV_SUCCESS or a status; on failure it first
 * calls `core->set_error(status, message)` with a message naming the vendor
 * call, its error name and text. Asynchronous failures are kept by the stream
 * and returned (once) by the next `stream_synchronize`. The status is one
 * anydev.h defines, or ANYDEV_BK_DECLINED from an optional entry: the core
 * turns ANYDEV_BK_DECLINED from a required entry, and any other value, into
 * ANYDEV_ERROR_INTERNAL with a message naming the backend, the entry and the
 * value; a failure that set no message gets one naming the backend, the entry
 * and the status (never an earlier failure's text).
 *
 * Exceptions. Neither the entry point nor any entry may throw: a backend
 * written in C++ catches inside each entry and returns a status. When one
 * throws anyway:
 *   - the entry point, initialize, device_count, device_props (loading and
 *     probing, under the registry lock): the core catches it; the backend is
 *     unavailable, its reason "<entry> threw: <what()>" (or "<entry> threw an
 *     exception that is not a std::exception"). A plugin whose entry point or
 *     initialize threw is dlclosed; after device_count or device_props it
 *     stays loaded (it is initialized and may run threads in its code).
 *   - any other entry called while a C API function runs: the exception
 *     unwinds through the core. Functions that create objects or enqueue
 *     work (contexts, streams, events, buffers, copy, fill, ...) catch it and
 *     return ANYDEV_ERROR_INTERNAL with its what() text, possibly with the
 *     operation half done; the others (synchronize, event record, query and
 *     synchronize, stream wait, peer access, native handles) let it leave the
 *     C function into the application.
 *   - an entry called on a release path, which is noexcept (memory_free,
 *     memory_free_async, stream_destroy, event_destroy, and the event and
 *     synchronize calls made while memory is released, including every call
 *     from the core's reclaimer thread): std::terminate ends the process.
 *
 * This header includes only anydev.h: a backend never includes core internals.
 */
#ifndef ANYDEV_BACKEND_H_
#define ANYDEV_BACKEND_H_

#include <stddef.h>
#include <stdint.h>

#include "anydev/anydev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change to the structs or entries below. */
#define ANYDEV_BACKEND_ABI_VERSION 3u

/* The one symbol a backend plugin exports. */
#define ANYDEV_BACKEND_ENTRY_SYMBOL "anydev_backend_entry"

/* Opaque backend objects. The core treats them as tokens. */
typedef struct anydev_bk_stream_s* anydev_bk_stream_t;
typedef struct anydev_bk_event_s* anydev_bk_event_t;

/* Log levels a backend may use with core->log (same order as spdlog). */
typedef enum anydev_log_level_t ANYDEV_ENUM_BASE {
  ANYDEV_LOG_TRACE = 0,
  ANYDEV_LOG_DEBUG = 1,
  ANYDEV_LOG_INFO = 2,
  ANYDEV_LOG_WARN = 3,
  ANYDEV_LOG_ERROR = 4,
} anydev_log_level_t;

/* Services the core offers to a backend. Valid for the life of the process.
 * Thread-safe. */
typedef struct anydev_core_services_t {
  size_t struct_size;
  /* Records the calling thread's last error (status + message). The message
   * is copied. Returns `status` so a backend can `return core->set_error(...)`. */
  anydev_status_t (*set_error)(anydev_status_t status, const char* message);
  /* Logs through the core's logger; `backend` names the caller. */
  void (*log)(anydev_log_level_t level, const char* backend, const char* message);
  /* Reads an environment variable through the core (NULL when unset). */
  const char* (*getenv)(const char* name);
} anydev_core_services_t;

/* Where a copy or fill reads or writes. */
typedef enum anydev_bk_memory_kind_t ANYDEV_ENUM_BASE {
  /* `handle` is a plain host pointer the user passed (pageable memory). */
  ANYDEV_BK_MEMORY_USER_HOST = 0,
  /* `handle` came from host_alloc. */
  ANYDEV_BK_MEMORY_HOST = 1,
  /* `handle` came from device_alloc. */
  ANYDEV_BK_MEMORY_DEVICE = 2,
} anydev_bk_memory_kind_t;

/* One side of a copy or fill: a backend memory handle plus a byte offset.
 * For pointer-based backends (cpu, cuda, hip, level_zero) `handle` is the
 * address of the allocation; for OpenCL it may be a cl_mem. */
typedef struct anydev_bk_memory_ref_t {
  void* handle;
  size_t offset;
  anydev_bk_memory_kind_t kind;
  int device; /* device index of the allocation; -1 for USER_HOST */
} anydev_bk_memory_ref_t;

/* What a backend says about one device. The core zero-fills it and sets
 * struct_size before the call. */
typedef struct anydev_bk_device_props_t {
  size_t struct_size;
  char name[256];                       /* e.g. "cpu: AMD EPYC 7B13" or "NVIDIA H200" */
  char description[512];                /* free text for anydev-info: driver, version, bus id */
  size_t total_memory;                  /* bytes */
  int host_memory_is_device_accessible; /* 1 when device memory == host memory */
  /* 1 when the device is the host's own processor (e.g. an OpenCL CPU device
   * such as PoCL). Without ANYDEV_BACKEND, selection prefers accelerators and
   * then anydev's cpu backend over such devices. */
  int is_host_processor;

  /* Capabilities. The core decides by these, never by the backend's name. */
  /* DLPack DLDeviceType of this device's device memory, and of its host
   * memory (host_alloc); 0: that memory has no DLPack device type and cannot
   * be exported. A backend without a registered DLPack type may use
   * kDLExtDev (12) or a vendor value. */
  int32_t dlpack_device_type;
  int32_t dlpack_host_device_type;
  /* DLDevice.device_id of this device (usually its index). */
  int32_t dlpack_device_id;
  /* 1 when device memory exports through DLPack as the backend's native
   * memory object (native_handle ANYDEV_NATIVE_MEMORY, e.g. a cl_mem) with
   * the view's offset in byte_offset, rather than as an address. Such memory
   * cannot be imported: the backend can use only objects it allocated. */
  int dlpack_data_is_native_memory;
  /* 1 when device memory is ordinary host memory (the host may read and
   * write it through the address device_alloc returned). */
  int device_memory_is_host_accessible;
  /* 1 when memory_free_async frees this device's memory ordered on a stream
   * (it never answers ANYDEV_BK_DECLINED for it); 0 when it declines and the
   * core's stream-ordered release frees it. */
  int stream_ordered_free;
  /* 1 when can_access_peer may answer 1 for some other device of this
   * backend; 0 when this device never accesses a peer's memory. */
  int peer_access;
  /* The largest fill pattern, in bytes: 1, 2, 4, 8 or 16. The core refuses
   * larger patterns (ANYDEV_ERROR_UNSUPPORTED) before calling fill, and
   * refuses a backend whose device reports any other value. */
  uint32_t max_fill_pattern;
} anydev_bk_device_props_t;

/* Returned by an optional entry for one call it does not handle on that
 * device (today: memory_free_async on a device without memory pools). It is
 * not an error: the backend sets no error message and changes nothing, and
 * the core takes its own fallback path (for memory_free_async: its
 * stream-ordered release, then memory_free). Never returned to the
 * application. */
#define ANYDEV_BK_DECLINED ((anydev_status_t)0x4b440001)

/* One object (memory or an event) as a backend describes it to another
 * process: `payload` bytes that only this backend reads (its IPC handle,
 * the device's identity, sizes) and the file descriptors the object needs.
 * From an export entry the fds are new and the core's (it closes them);
 * into an import entry they are borrowed (the backend dups what it keeps).
 * The core zero-fills it and sets struct_size and the fds to -1 before an
 * export. */
#define ANYDEV_BK_SHARE_PAYLOAD_MAX 128
#define ANYDEV_BK_SHARE_MAX_FDS 2
typedef struct anydev_bk_share_t {
  size_t struct_size;
  uint32_t payload_size;
  uint8_t payload[ANYDEV_BK_SHARE_PAYLOAD_MAX];
  uint32_t fd_count;
  int fds[ANYDEV_BK_SHARE_MAX_FDS];
} anydev_bk_share_t;

/* Native handle kinds a backend may expose (anydev_native_kind_t in anydev.h
 * is the public spelling of the same values). */

/* Graphs (optional entries graph_create, graph_launch, graph_destroy). One
 * node of a graph as the core hands it to graph_create: a copy (`bytes`
 * from src to dst), a fill (`pattern_size` bytes of `pattern` over `bytes`
 * of dst, the rules of the fill entry) or an empty node; `deps` are indices
 * of earlier nodes of the same array (so the nodes are in a topological
 * order). The core has checked every value as for copy and fill. */
typedef struct anydev_bk_graph_s* anydev_bk_graph_t;
typedef enum anydev_bk_graph_node_kind_t ANYDEV_ENUM_BASE {
  ANYDEV_BK_GRAPH_EMPTY = 0,
  ANYDEV_BK_GRAPH_COPY = 1,
  ANYDEV_BK_GRAPH_FILL = 2,
} anydev_bk_graph_node_kind_t;
typedef struct anydev_bk_graph_node_t {
  anydev_bk_graph_node_kind_t kind;
  anydev_bk_memory_ref_t dst;
  anydev_bk_memory_ref_t src; /* copies only */
  size_t bytes;
  unsigned char pattern[16]; /* fills only */
  size_t pattern_size;
  const size_t* deps;
  size_t dep_count;
} anydev_bk_graph_node_t;

#include "anydev/backend_entries.h"

/* An entry's parameter list with the instance first: for the entry list's
 * parenthesized `params` (never empty), ANYDEV_BK_WITH_INSTANCE(params) is
 * `(void* instance, params...)`. */
#define ANYDEV_BK_PREPEND_INSTANCE_(...) (void* instance, __VA_ARGS__)
#define ANYDEV_BK_WITH_INSTANCE(params) ANYDEV_BK_PREPEND_INSTANCE_ params

/* The backend's table: its fixed fields, then one function pointer per entry
 * of ANYDEV_BACKEND_ENTRIES (backend_entries.h, where each entry's contract
 * is), in that order, and nothing after the entries (see "Growth within ABI
 * 3" above). Every entry takes the table's `instance` first: the core calls
 * `t->copy(t->instance, stream, ...)`.
 *
 * The instance. `instance` is the backend's own pointer (NULL when it needs
 * none), passed back unchanged as the first argument of every entry of this
 * table, so one set of functions can serve several tables (a layer wraps any
 * number of backends this way, each wrapped table's instance being that
 * layer's state for it). The backend (or layer) that made the table owns
 * what it points to; it must stay valid as long as the table, which is for
 * the life of the process (the core never frees a table). The core never
 * dereferences it and may pass it from any thread concurrently, so whatever
 * it points to is the backend's to make thread-safe, like the rest of its
 * state. */
#define ANYDEV_BK_TABLE_FIELD_(unused, need, name, params) \
  anydev_status_t(*name) ANYDEV_BK_WITH_INSTANCE(params);
typedef struct anydev_backend_table_t {
  /* The fixed fields: every ABI 3 table has them, at these offsets. */
  size_t struct_size;   /* bytes of this table as the backend built it */
  uint32_t abi_version; /* ANYDEV_BACKEND_ABI_VERSION */
  const char* name;     /* "cpu", "cuda", ...: lowercase, [a-z0-9_] */
  void* instance;       /* the first argument of every entry (see above) */
  uint64_t flags;       /* backend-wide properties: a bitwise or of ANYDEV_BK_FLAG_* */

  /* The entries, from `initialize` on; appended to only at the end. */
  ANYDEV_BACKEND_ENTRIES(ANYDEV_BK_TABLE_FIELD_, ~)
} anydev_backend_table_t;
#undef ANYDEV_BK_TABLE_FIELD_

/* The ABI 3 layout, pinned: the fixed fields keep their offsets and all come
 * before the first entry (a C99 compiler, without static assertions, skips
 * these; the core checks them when it is built). The numbers are those of
 * 64-bit platforms; the order holds everywhere. */
#if defined(__cplusplus)
#define ANYDEV_BK_STATIC_ASSERT_(condition, message) static_assert(condition, message)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define ANYDEV_BK_STATIC_ASSERT_(condition, message) _Static_assert(condition, message)
#endif
#ifdef ANYDEV_BK_STATIC_ASSERT_
ANYDEV_BK_STATIC_ASSERT_(offsetof(anydev_backend_table_t, struct_size) == 0,
                         "struct_size starts the backend table");
ANYDEV_BK_STATIC_ASSERT_(offsetof(anydev_backend_table_t, abi_version) == sizeof(size_t),
                         "abi_version follows struct_size");
ANYDEV_BK_STATIC_ASSERT_(offsetof(anydev_backend_table_t, name) <
                                 offsetof(anydev_backend_table_t, instance) &&
                             offsetof(anydev_backend_table_t, instance) <
                                 offsetof(anydev_backend_table_t, flags) &&
                             offsetof(anydev_backend_table_t, flags) + sizeof(uint64_t) ==
                                 offsetof(anydev_backend_table_t, initialize),
                         "the fixed fields come before the first entry, in their order");
#if UINTPTR_MAX == UINT64_MAX && SIZE_MAX == UINT64_MAX
ANYDEV_BK_STATIC_ASSERT_(offsetof(anydev_backend_table_t, abi_version) == 8,
                         "ABI 3 layout: abi_version at 8");
ANYDEV_BK_STATIC_ASSERT_(offsetof(anydev_backend_table_t, name) == 16, "ABI 3 layout: name at 16");
ANYDEV_BK_STATIC_ASSERT_(offsetof(anydev_backend_table_t, instance) == 24,
                         "ABI 3 layout: instance at 24");
ANYDEV_BK_STATIC_ASSERT_(offsetof(anydev_backend_table_t, flags) == 32,
                         "ABI 3 layout: flags at 32");
ANYDEV_BK_STATIC_ASSERT_(offsetof(anydev_backend_table_t, initialize) == 40,
                         "ABI 3 layout: the first entry, initialize, at 40");
ANYDEV_BK_STATIC_ASSERT_(offsetof(anydev_core_services_t, set_error) == 8,
                         "core services: set_error follows struct_size");
ANYDEV_BK_STATIC_ASSERT_(offsetof(anydev_bk_device_props_t, name) == 8,
                         "device props: name follows struct_size");
#endif
#undef ANYDEV_BK_STATIC_ASSERT_
#endif

/* anydev_backend_table_t.flags: the backend's state (threads, driver) is
 * usable in a child process forked after the backend was initialized. A
 * backend without it that was initialized before fork() is unavailable in the
 * child (contexts: ANYDEV_ERROR_BACKEND_UNAVAILABLE, with a reason naming the
 * backend and fork()); one never initialized before the fork may still be
 * initialized in the child. */
#define ANYDEV_BK_FLAG_SURVIVES_FORK (1ull << 0)

/* anydev_backend_table_t.flags: event_query only reads state the backend
 * keeps in memory (no driver call, no system call, never blocks). The core
 * may then ask, right after recording the release event of memory that a
 * stream used, whether that work has already finished: the caching pool keeps
 * such a block without an event, and a block freed without the pool is freed
 * at once instead of by the core's reclaimer thread. A backend whose query is
 * a driver call leaves it unset: a release then stays one event_record. */
#define ANYDEV_BK_FLAG_CHEAP_EVENT_QUERY (1ull << 1)

/* anydev_backend_table_t.flags: stream_wrap_native accepts the native stream
 * values 1 and 2 as its API's reserved default streams (the legacy default
 * stream and the per-thread default stream, the values DLPack gives a
 * consumer stream for them; CUDA's CU_STREAM_LEGACY and CU_STREAM_PER_THREAD).
 * Without it the core refuses those values, like every other value below
 * 4096, before they reach the backend. */
#define ANYDEV_BK_FLAG_RESERVED_DEFAULT_STREAMS (1ull << 2)

/* anydev_backend_table_t.flags: a device memory handle from device_alloc is
 * the memory's device address, and handle + n (as a char pointer) for
 * 0 <= n < bytes is a valid handle of the byte n in every copy, fill and
 * graph entry (and the address DLPack exports). The core may then carve
 * small device buffers out of one device_alloc (the caching pool's segments,
 * docs/memory-pools.md); memory_free is only ever given the handle
 * device_alloc returned. */
#define ANYDEV_BK_FLAG_DEVICE_ADDRESS_HANDLES (1ull << 3)

/* anydev_backend_table_t.flags: a device memory handle from device_alloc is
 * an object (e.g. a cl_mem), device_alloc returns it as the address too, and
 * the memory reference {handle, n + offset} names the byte n + offset of it
 * in every copy, fill and graph entry. The core may then carve small device
 * buffers out of one device_alloc, as with ANYDEV_BK_FLAG_DEVICE_ADDRESS_HANDLES:
 * such a buffer's address is an opaque token of the core's (never a pointer
 * into the object), and native_handle is given the object's handle, whose
 * offset the core reports beside it (anydev_buffer_info_t). memory_free is
 * only ever given the handle device_alloc returned. */
#define ANYDEV_BK_FLAG_DEVICE_OBJECT_OFFSETS (1ull << 4)

/* The signature of the entry symbol. */
typedef anydev_status_t (*anydev_backend_entry_fn)(uint32_t core_abi_version,
                                                   const anydev_core_services_t* core,
                                                   const anydev_backend_table_t** out);

/* Plugins mark their entry point with this. */
#if defined(__GNUC__)
#define ANYDEV_BACKEND_EXPORT __attribute__((visibility("default")))
#else
#define ANYDEV_BACKEND_EXPORT
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ANYDEV_BACKEND_H_ */
