/* A complete, honest test backend with one fake device whose "device memory"
 * is host memory (malloc). Every operation runs synchronously when it is
 * enqueued, so streams are trivially in order and events are always
 * complete. Built as several plugins from this one file:
 *
 *   TEST_PLUGIN_NAME         backend name ("testgood", ...)
 *   TEST_PLUGIN_ABI_VERSION  abi_version written into the table
 *   TEST_PLUGIN_DEVICE_NAME  the device's name
 *   TEST_PLUGIN_FLAGS        the table's flags (ANYDEV_BK_FLAG_*; default 0)
 *   TEST_PLUGIN_SHORT_TABLE  hand over a table that ends before `flags`, the
 *                            last field of the first ABI 2 table (as an ABI 1
 *                            plugin's smaller table would): the memory ends
 *                            there, and the core must refuse it
 *   TEST_PLUGIN_MAX_FILL_PATTERN  the device's max_fill_pattern (default 16)
 *   TEST_PLUGIN_DECLINE_FREE_ASYNC  offer memory_free_async, which declines
 *                            every call (ANYDEV_BK_DECLINED); the exported
 *                            anydev_test_plugin_free_counts tells how many
 *                            calls it declined and how many device
 *                            allocations memory_free freed
 *
 * Its device declares its own DLPack device type, kDLExtDev, for device
 * memory (host memory is kDLCPU): the core exports and imports its buffers
 * through DLPack knowing nothing about it but these capabilities.
 *
 * Thread-safe: the only shared state is the core's services pointer, set
 * once by initialize() under the core's registry lock. */
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
#ifndef TEST_PLUGIN_DEVICE_NAME
#define TEST_PLUGIN_DEVICE_NAME TEST_PLUGIN_NAME ": fake device 0 (host memory)"
#endif

struct anydev_bk_stream_s {
  int device;
};
struct anydev_bk_event_s {
  int device;
};

static const anydev_core_services_t* g_core;

static anydev_status_t fail(anydev_status_t status, const char* message) {
  return g_core != NULL ? g_core->set_error(status, message) : status;
}

static anydev_status_t check_device(int device, const char* op) {
  if (device == 0) return ANYDEV_SUCCESS;
  char message[256];
  snprintf(message, sizeof message, "%s: %s: device %d does not exist (1 device)", TEST_PLUGIN_NAME,
           op, device);
  return fail(ANYDEV_ERROR_OUT_OF_RANGE, message);
}

static anydev_status_t initialize(const anydev_core_services_t* core, const char** library) {
  g_core = core;
  if (library != NULL) *library = "";
  return ANYDEV_SUCCESS;
}

static anydev_status_t device_count(int* count) {
  *count = 1;
  return ANYDEV_SUCCESS;
}

static size_t physical_bytes(int which) {
  const long pages = sysconf(which);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
}

static anydev_status_t device_props(int device, anydev_bk_device_props_t* props) {
  anydev_status_t s = check_device(device, "device_props");
  if (s != ANYDEV_SUCCESS) return s;
  if (props->struct_size < sizeof *props) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, TEST_PLUGIN_NAME ": device_props: struct too small");
  }
  snprintf(props->name, sizeof props->name, "%s", TEST_PLUGIN_DEVICE_NAME);
  snprintf(props->description, sizeof props->description,
           "anydev test plugin: synchronous, malloc-backed");
  props->total_memory = physical_bytes(_SC_PHYS_PAGES);
  props->host_memory_is_device_accessible = 1;
  /* Capabilities (ABI 2). */
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

static anydev_status_t memory_info(int device, size_t* free_bytes, size_t* total_bytes) {
  anydev_status_t s = check_device(device, "memory_info");
  if (s != ANYDEV_SUCCESS) return s;
  *total_bytes = physical_bytes(_SC_PHYS_PAGES);
  *free_bytes = physical_bytes(_SC_AVPHYS_PAGES);
  if (*free_bytes > *total_bytes) *free_bytes = *total_bytes;
  return ANYDEV_SUCCESS;
}

static anydev_status_t stream_create(int device, anydev_bk_stream_t* out) {
  anydev_status_t s = check_device(device, "stream_create");
  if (s != ANYDEV_SUCCESS) return s;
  anydev_bk_stream_t stream = calloc(1, sizeof *stream);
  if (stream == NULL) return fail(ANYDEV_ERROR_OUT_OF_MEMORY, TEST_PLUGIN_NAME ": stream_create");
  *out = stream;
  return ANYDEV_SUCCESS;
}

static anydev_status_t stream_destroy(anydev_bk_stream_t stream) {
  free(stream);
  return ANYDEV_SUCCESS;
}

/* Work finishes when it is enqueued: nothing to wait for. */
static anydev_status_t stream_synchronize(anydev_bk_stream_t stream) {
  (void)stream;
  return ANYDEV_SUCCESS;
}

static anydev_status_t event_create(int device, anydev_bk_event_t* out) {
  anydev_status_t s = check_device(device, "event_create");
  if (s != ANYDEV_SUCCESS) return s;
  anydev_bk_event_t event = calloc(1, sizeof *event);
  if (event == NULL) return fail(ANYDEV_ERROR_OUT_OF_MEMORY, TEST_PLUGIN_NAME ": event_create");
  *out = event;
  return ANYDEV_SUCCESS;
}

static anydev_status_t event_destroy(anydev_bk_event_t event) {
  free(event);
  return ANYDEV_SUCCESS;
}

static anydev_status_t event_record(anydev_bk_event_t event, anydev_bk_stream_t stream) {
  (void)event;
  (void)stream;
  return ANYDEV_SUCCESS;
}

static anydev_status_t event_synchronize(anydev_bk_event_t event) {
  (void)event;
  return ANYDEV_SUCCESS;
}

static anydev_status_t event_query(anydev_bk_event_t event, int* complete) {
  (void)event;
  *complete = 1;
  return ANYDEV_SUCCESS;
}

static anydev_status_t stream_wait_event(anydev_bk_stream_t stream, anydev_bk_event_t event) {
  (void)stream;
  (void)event;
  return ANYDEV_SUCCESS;
}

static anydev_status_t allocate(int device, size_t bytes, const char* op, void** handle,
                                void** address) {
  anydev_status_t s = check_device(device, op);
  if (s != ANYDEV_SUCCESS) return s;
  /* The fake device has as much memory as the host: more cannot be had. */
  const size_t total = physical_bytes(_SC_PHYS_PAGES);
  if (bytes > total) {
    char message[256];
    snprintf(message, sizeof message, "%s: %s: %zu bytes exceed the device's %zu bytes",
             TEST_PLUGIN_NAME, op, bytes, total);
    return fail(ANYDEV_ERROR_OUT_OF_MEMORY, message);
  }
  /* 64-byte alignment (enough for any element type); size rounded up. */
  void* memory = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (memory == NULL) {
    char message[256];
    snprintf(message, sizeof message, "%s: %s: aligned_alloc of %zu bytes failed", TEST_PLUGIN_NAME,
             op, bytes);
    return fail(ANYDEV_ERROR_OUT_OF_MEMORY, message);
  }
  *handle = memory;
  *address = memory;
  return ANYDEV_SUCCESS;
}

static anydev_status_t host_alloc(int device, size_t bytes, void** handle, void** address) {
  return allocate(device, bytes, "host_alloc", handle, address);
}

static anydev_status_t device_alloc(int device, size_t bytes, anydev_bk_stream_t stream,
                                    void** handle, void** address) {
  (void)stream;
  return allocate(device, bytes, "device_alloc", handle, address);
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
static anydev_status_t memory_free_async(int device, void* handle, anydev_bk_stream_t stream) {
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

static anydev_status_t memory_free(int device, anydev_bk_memory_kind_t kind, void* handle) {
  (void)device;
  TEST_PLUGIN_COUNT_FREE(kind);
  free(handle);
  return ANYDEV_SUCCESS;
}

static unsigned char* at(anydev_bk_memory_ref_t ref) {
  return (unsigned char*)ref.handle + ref.offset;
}

static anydev_status_t copy(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                            anydev_bk_memory_ref_t src, size_t bytes) {
  (void)stream;
  memcpy(at(dst), at(src), bytes);
  return ANYDEV_SUCCESS;
}

static anydev_status_t fill(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                            const void* pattern, size_t pattern_size, size_t bytes) {
  (void)stream;
  unsigned char* out = at(dst);
  for (size_t i = 0; i < bytes; i += pattern_size) memcpy(out + i, pattern, pattern_size);
  return ANYDEV_SUCCESS;
}

static anydev_status_t can_access_peer(int device, int peer, int* can_access) {
  (void)device;
  (void)peer;
  *can_access = 0;
  return ANYDEV_SUCCESS;
}

static anydev_status_t enable_peer_access(int device, int peer) {
  char message[256];
  snprintf(message, sizeof message, "%s: enable_peer_access(%d, %d): one device, no peers",
           TEST_PLUGIN_NAME, device, peer);
  return fail(ANYDEV_ERROR_UNSUPPORTED, message);
}

static const anydev_backend_table_t kTable = {
    .struct_size = sizeof(anydev_backend_table_t),
    .abi_version = TEST_PLUGIN_ABI_VERSION,
    .name = TEST_PLUGIN_NAME,
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
    .flags = TEST_PLUGIN_FLAGS,
};

#ifdef TEST_PLUGIN_SHORT_TABLE
/* A table that ends before `flags`; the bytes after it do not exist (a
 * sanitizer build reports any read past them). */
#define OLD_TABLE_BYTES offsetof(anydev_backend_table_t, flags)
static _Alignas(anydev_backend_table_t) unsigned char old_table[OLD_TABLE_BYTES];
#endif

ANYDEV_BACKEND_EXPORT anydev_status_t anydev_backend_entry(uint32_t core_abi_version,
                                                           const anydev_core_services_t* core,
                                                           const anydev_backend_table_t** out) {
  (void)core;
  /* The version check is the core's job (and what testversion exercises):
   * hand over the table as built. */
  (void)core_abi_version;
#ifdef TEST_PLUGIN_SHORT_TABLE
  const size_t size = OLD_TABLE_BYTES;
  memcpy(old_table, &kTable, size);
  memcpy(old_table + offsetof(anydev_backend_table_t, struct_size), &size, sizeof size);
  *out = (const anydev_backend_table_t*)(const void*)old_table;
#else
  *out = &kTable;
#endif
  return ANYDEV_SUCCESS;
}
