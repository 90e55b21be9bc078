/* SPDX-License-Identifier: Apache-2.0 */
/* A complete, honest test backend with one fake device whose "device memory"
 * is host memory (malloc). Every operation runs synchronously when it is
 * enqueued, so streams are trivially in order and events are always
 * complete. Built as several plugins from this one file:
 *
 *   TEST_PLUGIN_NAME         backend name ("testgood", ...)
 *   TEST_PLUGIN_ABI_VERSION  abi_version written into the table
 *   TEST_PLUGIN_DEVICE_NAME  the device's name
 *   TEST_PLUGIN_FLAGS        the table's flags (ANYDEV_BK_FLAG_*; default 0)
 *   TEST_PLUGIN_SHORT_TABLE  hand over a table that ends before its last
 *                            required entry (enable_peer_access): the memory
 *                            ends there, and the core must refuse it
 *   TEST_PLUGIN_OLDER_TABLE  offer memory_is_locked (host memory is pageable:
 *                            0), but hand over a table whose struct_size ends
 *                            after enable_peer_access, before the optional
 *                            entries that follow it (as a plugin built
 *                            against an older ABI 3 header would): the core
 *                            must read those entries as NULL, although the
 *                            memory after struct_size holds them
 *   TEST_PLUGIN_NEWER_TABLE  offer memory_is_locked (0), and hand over a
 *                            table longer than the core's: entries the core
 *                            does not know follow, non-NULL garbage it must
 *                            ignore
 *   TEST_PLUGIN_MAX_FILL_PATTERN  the device's max_fill_pattern (default 16)
 *   TEST_PLUGIN_DECLINE_FREE_ASYNC  offer memory_free_async, which declines
 *                            every call (ANYDEV_BK_DECLINED); the exported
 *                            anydev_test_plugin_free_counts tells how many
 *                            calls it declined and how many device
 *                            allocations memory_free freed
 *   TEST_PLUGIN_DEVICE_COUNT  how many devices device_count reports (default
 *                            1); device_props describes any index below it
 *   TEST_PLUGIN_SCRIPTED_FILL  fill returns what the exported
 *                            anydev_test_plugin_script_fill set last: a
 *                            status (0: fill normally), with or without a
 *                            message through core->set_error
 *   TEST_PLUGIN_HOOKS        the entry point and initialize first call
 *                            test_plugin_entry_hook / _initialize_hook,
 *                            defined by another source of the plugin (C++
 *                            ones throw through this file, which is then
 *                            built with -fexceptions)
 *
 * Its device declares its own DLPack device type, kDLExtDev, for device
 * memory (host memory is kDLCPU): the core exports and imports its buffers
 * through DLPack knowing nothing about it but these capabilities.
 *
 * It uses its instance (the table's `instance`, which the core passes back
 * as every entry's first argument): the core's services live there, and
 * every entry checks that it got the table's own instance (else
 * ANYDEV_ERROR_INTERNAL naming the entry and both pointers), so any plugin
 * test fails when the core passes a wrong one.
 *
 * Thread-safe: the only shared state is the instance, whose services
 * pointer initialize() sets once under the core's registry lock. */
#define _POSIX_C_SOURCE 200809L

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anydev/backend.h"

#ifndef TEST_PLUGIN_NAME
#error "TEST_PLUGIN_NAME must be defined"
#endif
#ifndef TEST_PLUGIN_ABI_VERSION
#define TEST_PLUGIN_ABI_VERSION ANYDEV_BACKEND_ABI_VERSION
#endif
#ifndef TEST_PLUGIN_FLAGS
#define TEST_PLUGIN_FLAGS 0
#endif
#ifndef TEST_PLUGIN_MAX_FILL_PATTERN
#define TEST_PLUGIN_MAX_FILL_PATTERN 16
#endif
#ifndef TEST_PLUGIN_DEVICE_COUNT
#define TEST_PLUGIN_DEVICE_COUNT 1
#endif
#ifndef TEST_PLUGIN_DEVICE_NAME
#define TEST_PLUGIN_DEVICE_NAME TEST_PLUGIN_NAME ": fake device 0 (host memory)"
#endif

struct anydev_bk_stream_s {
  int device;
};
struct anydev_bk_event_s {
  int device;
};

/* The backend's instance: owned by this plugin, lives for the process. */
struct fake_backend {
  const anydev_core_services_t* core; /* set by initialize() */
};
static struct fake_backend g_backend;

/* Declares `self`, this entry's instance, returning an error when the core
 * passed anything but the table's own instance. */
#define FAKE_SELF(instance, op)                                 \
  struct fake_backend* self = (struct fake_backend*)(instance); \
  if (self != &g_backend) return wrong_instance((instance), (op))

static anydev_status_t fail(struct fake_backend* self, anydev_status_t status,
                            const char* message) {
  return self->core != NULL ? self->core->set_error(status, message) : status;
}

static anydev_status_t wrong_instance(void* instance, const char* op) {
  char message[256];
  snprintf(message, sizeof message, "%s: %s: called with instance %p, not the table's %p",
           TEST_PLUGIN_NAME, op, instance, (void*)&g_backend);
  return fail(&g_backend, ANYDEV_ERROR_INTERNAL, message);
}

#ifdef TEST_PLUGIN_HOOKS
void test_plugin_entry_hook(void);
void test_plugin_initialize_hook(void);
#define TEST_PLUGIN_HOOK(name) test_plugin_##name##_hook()
#else
#define TEST_PLUGIN_HOOK(name) (void)0
#endif

static anydev_status_t check_device(struct fake_backend* self, int device, const char* op) {
  if (device >= 0 && device < TEST_PLUGIN_DEVICE_COUNT) return ANYDEV_SUCCESS;
  char message[256];
  snprintf(message, sizeof message, "%s: %s: device %d does not exist (%d devices)",
           TEST_PLUGIN_NAME, op, device, TEST_PLUGIN_DEVICE_COUNT);
  return fail(self, ANYDEV_ERROR_OUT_OF_RANGE, message);
}

static anydev_status_t initialize(void* instance, const anydev_core_services_t* core,
                                  const char** library) {
  FAKE_SELF(instance, "initialize");
  TEST_PLUGIN_HOOK(initialize);
  self->core = core;
  if (library != NULL) *library = "";
  return ANYDEV_SUCCESS;
}

static anydev_status_t device_count(void* instance, int* count) {
  FAKE_SELF(instance, "device_count");
  *count = TEST_PLUGIN_DEVICE_COUNT;
  return ANYDEV_SUCCESS;
}

static size_t physical_bytes(int which) {
  const long pages = sysconf(which);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
}

static anydev_status_t device_props(void* instance, int device, anydev_bk_device_props_t* props) {
  FAKE_SELF(instance, "device_props");
  anydev_status_t s = check_device(self, device, "device_props");
  if (s != ANYDEV_SUCCESS) return s;
  if (props->struct_size < sizeof *props) {
    return fail(self, ANYDEV_ERROR_INVALID_ARGUMENT,
                TEST_PLUGIN_NAME ": device_props: struct too small");
  }
  snprintf(props->name, sizeof props->name, "%s", TEST_PLUGIN_DEVICE_NAME);
  snprintf(props->description, sizeof props->description,
           "anydev test plugin: synchronous, malloc-backed");
  props->total_memory = physical_bytes(_SC_PHYS_PAGES);
  props->host_memory_is_device_accessible = 1;
  /* Capabilities. */
  props->dlpack_device_type = kDLExtDev;
  props->dlpack_host_device_type = kDLCPU;
  props->dlpack_device_id = device;
  props->dlpack_data_is_native_memory = 0;
  props->device_memory_is_host_accessible = 1; /* malloc */
  props->stream_ordered_free = 0;              /* no memory_free_async */
  props->peer_access = 0;                      /* one device */
  props->max_fill_pattern = TEST_PLUGIN_MAX_FILL_PATTERN;
  return ANYDEV_SUCCESS;
}

static anydev_status_t memory_info(void* instance, int device, size_t* free_bytes,
                                   size_t* total_bytes) {
  FAKE_SELF(instance, "memory_info");
  anydev_status_t s = check_device(self, device, "memory_info");
  if (s != ANYDEV_SUCCESS) return s;
  *total_bytes = physical_bytes(_SC_PHYS_PAGES);
  *free_bytes = physical_bytes(_SC_AVPHYS_PAGES);
  if (*free_bytes > *total_bytes) *free_bytes = *total_bytes;
  return ANYDEV_SUCCESS;
}

static anydev_status_t stream_create(void* instance, int device, anydev_bk_stream_t* out) {
  FAKE_SELF(instance, "stream_create");
  anydev_status_t s = check_device(self, device, "stream_create");
  if (s != ANYDEV_SUCCESS) return s;
  anydev_bk_stream_t stream = calloc(1, sizeof *stream);
  if (stream == NULL)
    return fail(self, ANYDEV_ERROR_OUT_OF_MEMORY, TEST_PLUGIN_NAME ": stream_create");
  *out = stream;
  return ANYDEV_SUCCESS;
}

static anydev_status_t stream_destroy(void* instance, anydev_bk_stream_t stream) {
  FAKE_SELF(instance, "stream_destroy");
  free(stream);
  return ANYDEV_SUCCESS;
}

/* Work finishes when it is enqueued: nothing to wait for. */
static anydev_status_t stream_synchronize(void* instance, anydev_bk_stream_t stream) {
  FAKE_SELF(instance, "stream_synchronize");
  (void)stream;
  return ANYDEV_SUCCESS;
}

static anydev_status_t event_create(void* instance, int device, anydev_bk_event_t* out) {
  FAKE_SELF(instance, "event_create");
  anydev_status_t s = check_device(self, device, "event_create");
  if (s != ANYDEV_SUCCESS) return s;
  anydev_bk_event_t event = calloc(1, sizeof *event);
  if (event == NULL)
    return fail(self, ANYDEV_ERROR_OUT_OF_MEMORY, TEST_PLUGIN_NAME ": event_create");
  *out = event;
  return ANYDEV_SUCCESS;
}

static anydev_status_t event_destroy(void* instance, anydev_bk_event_t event) {
  FAKE_SELF(instance, "event_destroy");
  free(event);
  return ANYDEV_SUCCESS;
}

static anydev_status_t event_record(void* instance, anydev_bk_event_t event,
                                    anydev_bk_stream_t stream) {
  FAKE_SELF(instance, "event_record");
  (void)event;
  (void)stream;
  return ANYDEV_SUCCESS;
}

static anydev_status_t event_synchronize(void* instance, anydev_bk_event_t event) {
  FAKE_SELF(instance, "event_synchronize");
  (void)event;
  return ANYDEV_SUCCESS;
}

static anydev_status_t event_query(void* instance, anydev_bk_event_t event, int* complete) {
  FAKE_SELF(instance, "event_query");
  (void)event;
  *complete = 1;
  return ANYDEV_SUCCESS;
}

static anydev_status_t stream_wait_event(void* instance, anydev_bk_stream_t stream,
                                         anydev_bk_event_t event) {
  FAKE_SELF(instance, "stream_wait_event");
  (void)stream;
  (void)event;
  return ANYDEV_SUCCESS;
}

static anydev_status_t allocate(struct fake_backend* self, int device, size_t bytes, const char* op,
                                void** handle, void** address) {
  anydev_status_t s = check_device(self, device, op);
  if (s != ANYDEV_SUCCESS) return s;
  /* The fake device has as much memory as the host: more cannot be had. */
  const size_t total = physical_bytes(_SC_PHYS_PAGES);
  if (bytes > total) {
    char message[256];
    snprintf(message, sizeof message, "%s: %s: %zu bytes exceed the device's %zu bytes",
             TEST_PLUGIN_NAME, op, bytes, total);
    return fail(self, ANYDEV_ERROR_OUT_OF_MEMORY, message);
  }
  /* 64-byte alignment (enough for any element type); size rounded up. */
  void* memory = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (memory == NULL) {
    char message[256];
    snprintf(message, sizeof message, "%s: %s: aligned_alloc of %zu bytes failed", TEST_PLUGIN_NAME,
             op, bytes);
    return fail(self, ANYDEV_ERROR_OUT_OF_MEMORY, message);
  }
  *handle = memory;
  *address = memory;
  return ANYDEV_SUCCESS;
}

static anydev_status_t host_alloc(void* instance, int device, size_t bytes, void** handle,
                                  void** address) {
  FAKE_SELF(instance, "host_alloc");
  return allocate(self, device, bytes, "host_alloc", handle, address);
}

static anydev_status_t device_alloc(void* instance, int device, size_t bytes,
                                    anydev_bk_stream_t stream, void** handle, void** address) {
  FAKE_SELF(instance, "device_alloc");
  (void)stream;
  return allocate(self, device, bytes, "device_alloc", handle, address);
}

#ifdef TEST_PLUGIN_DECLINE_FREE_ASYNC
static _Atomic long g_declined;
static _Atomic long g_device_frees;

/* For the test, found with dlsym on the loaded plugin. */
ANYDEV_BACKEND_EXPORT void anydev_test_plugin_free_counts(long* declined, long* device_frees) {
  *declined = g_declined;
  *device_frees = g_device_frees;
}

/* Declines, sets no error and changes nothing: the core frees the memory
 * through its stream-ordered release and memory_free. */
static anydev_status_t memory_free_async(void* instance, int device, void* handle,
                                         anydev_bk_stream_t stream) {
  FAKE_SELF(instance, "memory_free_async");
  (void)device;
  (void)handle;
  (void)stream;
  ++g_declined;
  return ANYDEV_BK_DECLINED;
}
#define TEST_PLUGIN_MEMORY_FREE_ASYNC memory_free_async
#define TEST_PLUGIN_COUNT_FREE(kind) \
  if ((kind) == ANYDEV_BK_MEMORY_DEVICE) ++g_device_frees
#else
#define TEST_PLUGIN_MEMORY_FREE_ASYNC NULL
#define TEST_PLUGIN_COUNT_FREE(kind) (void)(kind)
#endif

static anydev_status_t memory_free(void* instance, int device, anydev_bk_memory_kind_t kind,
                                   void* handle) {
  FAKE_SELF(instance, "memory_free");
  (void)device;
  TEST_PLUGIN_COUNT_FREE(kind);
  free(handle);
  return ANYDEV_SUCCESS;
}

static unsigned char* at(anydev_bk_memory_ref_t ref) {
  return (unsigned char*)ref.handle + ref.offset;
}

static anydev_status_t copy(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                            anydev_bk_memory_ref_t src, size_t bytes) {
  FAKE_SELF(instance, "copy");
  (void)stream;
  memcpy(at(dst), at(src), bytes);
  return ANYDEV_SUCCESS;
}

#ifdef TEST_PLUGIN_SCRIPTED_FILL
/* What the next fills return; set by the test, read by fill (one thread at a
 * time in the test, so plain variables). */
static anydev_status_t g_fill_status = ANYDEV_SUCCESS;
static char g_fill_message[256];

/* For the test, found with dlsym on the loaded plugin: every later fill
 * returns `status` (any value, undefined ones included; ANYDEV_SUCCESS: fill
 * normally), after core->set_error(status, message) when `message` is not
 * NULL. */
ANYDEV_BACKEND_EXPORT void anydev_test_plugin_script_fill(int status, const char* message) {
  g_fill_status = (anydev_status_t)status;
  g_fill_message[0] = '\0';
  if (message != NULL) snprintf(g_fill_message, sizeof g_fill_message, "%s", message);
}
#endif

static anydev_status_t fill(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                            const void* pattern, size_t pattern_size, size_t bytes) {
  FAKE_SELF(instance, "fill");
  (void)stream;
#ifdef TEST_PLUGIN_SCRIPTED_FILL
  if (g_fill_status != ANYDEV_SUCCESS) {
    if (g_fill_message[0] != '\0') return fail(self, g_fill_status, g_fill_message);
    return g_fill_status;
  }
#endif
  unsigned char* out = at(dst);
  for (size_t i = 0; i < bytes; i += pattern_size) memcpy(out + i, pattern, pattern_size);
  return ANYDEV_SUCCESS;
}

static anydev_status_t can_access_peer(void* instance, int device, int peer, int* can_access) {
  FAKE_SELF(instance, "can_access_peer");
  (void)device;
  (void)peer;
  *can_access = 0;
  return ANYDEV_SUCCESS;
}

static anydev_status_t enable_peer_access(void* instance, int device, int peer) {
  FAKE_SELF(instance, "enable_peer_access");
  char message[256];
  snprintf(message, sizeof message, "%s: enable_peer_access(%d, %d): one device, no peers",
           TEST_PLUGIN_NAME, device, peer);
  return fail(self, ANYDEV_ERROR_UNSUPPORTED, message);
}

#if defined(TEST_PLUGIN_OLDER_TABLE) || defined(TEST_PLUGIN_NEWER_TABLE)
static _Atomic long g_lock_queries;

/* For the test, found with dlsym on the loaded plugin: how many times the
 * core called memory_is_locked. */
ANYDEV_BACKEND_EXPORT long anydev_test_plugin_lock_queries(void) { return g_lock_queries; }

/* malloc'ed memory is pageable. */
static anydev_status_t memory_is_locked(void* instance, int device, void* handle, int* locked) {
  FAKE_SELF(instance, "memory_is_locked");
  (void)device;
  (void)handle;
  ++g_lock_queries;
  *locked = 0;
  return ANYDEV_SUCCESS;
}
#define TEST_PLUGIN_MEMORY_IS_LOCKED memory_is_locked
#else
#define TEST_PLUGIN_MEMORY_IS_LOCKED NULL
#endif

static const anydev_backend_table_t kTable = {
    .struct_size = sizeof(anydev_backend_table_t),
    .abi_version = TEST_PLUGIN_ABI_VERSION,
    .name = TEST_PLUGIN_NAME,
    .instance = &g_backend,
    .flags = TEST_PLUGIN_FLAGS,
    .initialize = initialize,
    .device_count = device_count,
    .device_props = device_props,
    .memory_info = memory_info,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_synchronize = stream_synchronize,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .event_synchronize = event_synchronize,
    .event_query = event_query,
    .stream_wait_event = stream_wait_event,
    .host_alloc = host_alloc,
    .device_alloc = device_alloc,
    .memory_free = memory_free,
    .memory_free_async = TEST_PLUGIN_MEMORY_FREE_ASYNC,
    .copy = copy,
    .fill = fill,
    .can_access_peer = can_access_peer,
    .enable_peer_access = enable_peer_access,
    .native_handle = NULL,
    .stream_wrap_native = NULL,
    .memory_is_locked = TEST_PLUGIN_MEMORY_IS_LOCKED,
};

#ifdef TEST_PLUGIN_SHORT_TABLE
/* A table that ends before its last required entry; the bytes after it do
 * not exist (a sanitizer build reports any read past them). */
#define HANDED_TABLE_BYTES offsetof(anydev_backend_table_t, enable_peer_access)
static _Alignas(anydev_backend_table_t) unsigned char g_handed_table[HANDED_TABLE_BYTES];
#elif defined(TEST_PLUGIN_OLDER_TABLE)
/* The whole table, every entry in place, but struct_size says it ends after
 * enable_peer_access. */
#define HANDED_TABLE_BYTES sizeof(anydev_backend_table_t)
#define HANDED_STRUCT_SIZE                                \
  (offsetof(anydev_backend_table_t, enable_peer_access) + \
   sizeof(((const anydev_backend_table_t*)NULL)->enable_peer_access))
static _Alignas(anydev_backend_table_t) unsigned char g_handed_table[HANDED_TABLE_BYTES];
#elif defined(TEST_PLUGIN_NEWER_TABLE)
/* The table followed by entries of a newer header: non-NULL values that are
 * no functions (calling one crashes). */
struct newer_table {
  anydev_backend_table_t table;
  void (*later_entries[3])(void);
};
#define HANDED_TABLE_BYTES sizeof(struct newer_table)
static _Alignas(struct newer_table) unsigned char g_handed_table[HANDED_TABLE_BYTES];
#endif

ANYDEV_BACKEND_EXPORT anydev_status_t anydev_backend_entry(uint32_t core_abi_version,
                                                           const anydev_core_services_t* core,
                                                           const anydev_backend_table_t** out) {
  (void)core;
  TEST_PLUGIN_HOOK(entry);
  /* The version check is the core's job (and what testversion exercises):
   * hand over the table as built. */
  (void)core_abi_version;
#ifdef HANDED_TABLE_BYTES
  /* Copies the table (as much of it as the handed bytes hold), fills what
   * follows it with garbage, and writes the struct_size the variant claims. */
#ifndef HANDED_STRUCT_SIZE
#define HANDED_STRUCT_SIZE HANDED_TABLE_BYTES
#endif
  const size_t copied = HANDED_TABLE_BYTES < sizeof kTable ? HANDED_TABLE_BYTES : sizeof kTable;
  memcpy(g_handed_table, &kTable, copied);
  memset(g_handed_table + copied, 0xA5, HANDED_TABLE_BYTES - copied);
  const size_t size = HANDED_STRUCT_SIZE;
  memcpy(g_handed_table + offsetof(anydev_backend_table_t, struct_size), &size, sizeof size);
  *out = (const anydev_backend_table_t*)(const void*)g_handed_table;
#else
  *out = &kTable;
#endif
  return ANYDEV_SUCCESS;
}
