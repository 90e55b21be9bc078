/* SPDX-License-Identifier: Apache-2.0 */
/* The C ABI from C11: creation, copies, fills, views, printing, ownership,
 * streams and events, the thread-local last error, status and dtype names,
 * and bad inputs (NULL arguments, unknown values, short sizes); the newer
 * blocks: timing events, stream priorities, registered host memory, device
 * attributes, UUID and API version, graphs and stream capture. Prints
 * "backend B: N passed, M failed" and exits non-zero on any failure.
 *
 * The backend-generic checks run on the backend named by
 * ANYDEV_C_API_BACKEND (unset: cpu); an unknown or unavailable backend is a
 * failure that names it, never a fallback. The cpu-specific checks (one
 * device, its name and description) run only when that backend is cpu.
 * ctest runs it on cpu and on each emulated backend (tests/emulators). */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anydev/anydev.h"

static int g_passed;
static int g_failed;
/* The backend under test (ANYDEV_C_API_BACKEND; main sets it). */
static const char* g_backend = "cpu";
static int g_is_cpu = 1;

static void check(int ok, const char* expr, const char* file, int line) {
  if (ok) {
    ++g_passed;
    return;
  }
  ++g_failed;
  fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s: %s\n", file, line, expr,
          anydev_status_name(anydev_last_error_status()), anydev_last_error_message());
}

#define CHECK(cond) check((cond) != 0, #cond, __FILE__, __LINE__)

/* `call` returns `status` and leaves a non-empty message naming something. */
#define CHECK_STATUS(call, status)                                                 \
  do {                                                                             \
    anydev_clear_last_error();                                                     \
    anydev_status_t got_ = (call);                                                 \
    check(got_ == (status), #call " == " #status, __FILE__, __LINE__);             \
    if (got_ != (status)) fprintf(stderr, "  got %s\n", anydev_status_name(got_)); \
    if ((status) != ANYDEV_SUCCESS) {                                              \
      CHECK(anydev_last_error_status() == (status));                               \
      CHECK(strlen(anydev_last_error_message()) > 0);                              \
    }                                                                              \
  } while (0)

static int contains(const char* text, const char* part) {
  return text != NULL && strstr(text, part) != NULL;
}

static void test_names_and_version(void) {
  CHECK(strcmp(anydev_version_string(), "0.1.0") == 0);
  CHECK(strcmp(anydev_status_name(ANYDEV_SUCCESS), "success") == 0);
  CHECK(strcmp(anydev_status_name(ANYDEV_ERROR_INVALID_ARGUMENT), "invalid_argument") == 0);
  CHECK(strcmp(anydev_status_name(ANYDEV_ERROR_OUT_OF_RANGE), "out_of_range") == 0);
  CHECK(strcmp(anydev_status_name(ANYDEV_ERROR_OUT_OF_MEMORY), "out_of_memory") == 0);
  CHECK(strcmp(anydev_status_name(ANYDEV_ERROR_BACKEND_UNAVAILABLE), "backend_unavailable") == 0);
  CHECK(strcmp(anydev_status_name(ANYDEV_ERROR_DEVICE), "device_error") == 0);
  CHECK(strcmp(anydev_status_name(ANYDEV_ERROR_UNSUPPORTED), "unsupported") == 0);
  CHECK(strcmp(anydev_status_name(ANYDEV_ERROR_INVALID_STATE), "invalid_state") == 0);
  CHECK(strcmp(anydev_status_name(ANYDEV_ERROR_INTERNAL), "internal") == 0);
  CHECK(strcmp(anydev_status_name(ANYDEV_ERROR_NOT_READY), "not_ready") == 0);
  CHECK(strcmp(anydev_status_name((anydev_status_t)99), "unknown") == 0);
  CHECK(strcmp(anydev_status_name((anydev_status_t)-1), "unknown") == 0);
}

static void test_dtypes(void) {
  static const struct {
    anydev_dtype_t dtype;
    size_t size;
    const char* name;
  } kCases[] = {
      {ANYDEV_DTYPE_BOOL, 1, "bool"},
      {ANYDEV_DTYPE_INT8, 1, "int8"},
      {ANYDEV_DTYPE_INT16, 2, "int16"},
      {ANYDEV_DTYPE_INT32, 4, "int32"},
      {ANYDEV_DTYPE_INT64, 8, "int64"},
      {ANYDEV_DTYPE_UINT8, 1, "uint8"},
      {ANYDEV_DTYPE_UINT16, 2, "uint16"},
      {ANYDEV_DTYPE_UINT32, 4, "uint32"},
      {ANYDEV_DTYPE_UINT64, 8, "uint64"},
      {ANYDEV_DTYPE_FLOAT16, 2, "float16"},
      {ANYDEV_DTYPE_BFLOAT16, 2, "bfloat16"},
      {ANYDEV_DTYPE_FLOAT32, 4, "float32"},
      {ANYDEV_DTYPE_FLOAT64, 8, "float64"},
      {ANYDEV_DTYPE_COMPLEX64, 8, "complex64"},
      {ANYDEV_DTYPE_COMPLEX128, 16, "complex128"},
  };
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; ++i) {
    anydev_dtype_t parsed = (anydev_dtype_t)-1;
    CHECK(anydev_dtype_size(kCases[i].dtype) == kCases[i].size);
    CHECK(anydev_dtype_name(kCases[i].dtype) != NULL &&
          strcmp(anydev_dtype_name(kCases[i].dtype), kCases[i].name) == 0);
    CHECK_STATUS(anydev_dtype_from_name(kCases[i].name, &parsed), ANYDEV_SUCCESS);
    CHECK(parsed == kCases[i].dtype);
  }
  CHECK(anydev_dtype_size((anydev_dtype_t)15) == 0);
  CHECK(anydev_dtype_name((anydev_dtype_t)15) == NULL);
  CHECK(anydev_dtype_name((anydev_dtype_t)-1) == NULL);
  anydev_dtype_t out = ANYDEV_DTYPE_INT8;
  CHECK_STATUS(anydev_dtype_from_name("float33", &out), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(contains(anydev_last_error_message(), "float33"));
  CHECK(out == ANYDEV_DTYPE_INT8); /* a failing call leaves its output alone */
  CHECK_STATUS(anydev_dtype_from_name(NULL, &out), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_dtype_from_name("float32", NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
}

static void test_backends(void) {
  size_t count = 0;
  CHECK_STATUS(anydev_backend_count(&count), ANYDEV_SUCCESS);
  CHECK(count >= 5);
  int found_cpu = 0;
  for (size_t i = 0; i < count; ++i) {
    anydev_backend_info_t info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK_STATUS(anydev_backend_info(i, &info), ANYDEV_SUCCESS);
    CHECK(info.name != NULL && info.reason != NULL && info.library != NULL);
    if (info.name == NULL) continue;
    if (info.available) {
      CHECK(info.device_count > 0 && info.reason[0] == '\0');
    } else {
      CHECK(info.device_count == 0 && info.reason[0] != '\0');
    }
    if (strcmp(info.name, "cpu") == 0) {
      found_cpu = 1;
      CHECK(info.available == 1);
      CHECK(info.device_count == 1);
      CHECK(strcmp(info.library, "") == 0);
    }
  }
  CHECK(found_cpu);
  CHECK(anydev_device_count(g_backend) >= 1);
  anydev_backend_info_t past;
  memset(&past, 0, sizeof past);
  past.struct_size = sizeof past;
  CHECK_STATUS(anydev_backend_info(count, &past), ANYDEV_ERROR_OUT_OF_RANGE);
  CHECK_STATUS(anydev_backend_info(0, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_backend_count(NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(anydev_device_count("cpu") == 1);
  CHECK(anydev_device_count(NULL) >= 1);
  CHECK(anydev_plugin_path() != NULL);
}

static anydev_context_t make_context(void) {
  anydev_context_t ctx = NULL;
  CHECK_STATUS(anydev_context_create(g_backend, 0, &ctx), ANYDEV_SUCCESS);
  return ctx;
}

/* The log sink from C (tests/logging has the rest): a
 * callback gets the severity, the message and its user data; NULL restores
 * stderr; a level outside trace .. off is refused and changes nothing.
 * anydev_context_create logs the device it selects at info level. */
struct log_seen {
  int selected;
  anydev_log_severity_t severity;
  char expected[64]; /* "selected <backend>:0" */
};

static void count_selected(anydev_log_severity_t severity, const char* message, void* user_data) {
  struct log_seen* seen = (struct log_seen*)user_data;
  if (contains(message, seen->expected)) {
    ++seen->selected;
    seen->severity = severity;
  }
}

static void test_log_callback(void) {
  struct log_seen seen = {0, ANYDEV_LOG_SEVERITY_OFF, ""};
  snprintf(seen.expected, sizeof seen.expected, "selected %s:0", g_backend);
  const anydev_log_severity_t initial = anydev_log_level();
  CHECK_STATUS(anydev_set_log_level((anydev_log_severity_t)7), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(contains(anydev_last_error_message(), "anydev_set_log_level: level 7"));
  CHECK(anydev_log_level() == initial);
  CHECK_STATUS(anydev_set_log_level(ANYDEV_LOG_SEVERITY_INFO), ANYDEV_SUCCESS);
  CHECK(anydev_log_level() == ANYDEV_LOG_SEVERITY_INFO);
  CHECK_STATUS(anydev_set_log_callback(count_selected, &seen), ANYDEV_SUCCESS);
  anydev_context_t ctx = make_context();
  CHECK_STATUS(anydev_set_log_callback(NULL, NULL), ANYDEV_SUCCESS);
  CHECK(seen.selected == 1);
  CHECK(seen.severity == ANYDEV_LOG_SEVERITY_INFO);
  CHECK_STATUS(anydev_set_log_level(initial), ANYDEV_SUCCESS);
  if (ctx != NULL) CHECK_STATUS(anydev_context_release(ctx), ANYDEV_SUCCESS);
}

/* -1 is the one "default device" value; -5 must not mean device 0. */
static void test_negative_device_index_is_invalid_argument(void) {
  anydev_context_t sentinel = (anydev_context_t)(uintptr_t)0x1;
  anydev_context_t out = sentinel;
  const int indices[] = {-2, -5, INT_MIN};
  for (size_t i = 0; i < sizeof indices / sizeof indices[0]; ++i) {
    char text[16];
    snprintf(text, sizeof text, "%d", indices[i]);
    CHECK_STATUS(anydev_context_create(g_backend, indices[i], &out), ANYDEV_ERROR_INVALID_ARGUMENT);
    CHECK(contains(anydev_last_error_message(), "anydev_context_create"));
    CHECK(contains(anydev_last_error_message(), text));
    CHECK(out == sentinel);
    CHECK_STATUS(anydev_context_create(NULL, indices[i], &out), ANYDEV_ERROR_INVALID_ARGUMENT);
    CHECK(out == sentinel);
    int stream = 0;
    CHECK_STATUS(anydev_context_wrap_native_stream(g_backend, indices[i], &stream, &out),
                 ANYDEV_ERROR_INVALID_ARGUMENT);
    CHECK(contains(anydev_last_error_message(), text));
    CHECK(out == sentinel);
  }
  CHECK_STATUS(anydev_context_create(g_backend, -1, &out), ANYDEV_SUCCESS); /* the default: 0 */
  int id = -1;
  CHECK_STATUS(anydev_context_device_id(out, &id), ANYDEV_SUCCESS);
  CHECK(id == 0);
  CHECK_STATUS(anydev_context_release(out), ANYDEV_SUCCESS);
}

static void test_context(void) {
  anydev_context_t sentinel = (anydev_context_t)(uintptr_t)0x1;
  anydev_context_t out = sentinel;
  CHECK_STATUS(anydev_context_create("bogus", 0, &out), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(contains(anydev_last_error_message(), "bogus"));
  CHECK(out == sentinel);
  const int past_last = anydev_device_count(g_backend);
  CHECK_STATUS(anydev_context_create(g_backend, past_last, &out), ANYDEV_ERROR_OUT_OF_RANGE);
  CHECK(out == sentinel);
  CHECK_STATUS(anydev_context_create(g_backend, 0, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  test_negative_device_index_is_invalid_argument();

  anydev_context_t ctx = make_context();
  if (ctx == NULL) return;
  const char* api = NULL;
  const char* name = NULL;
  int id = -1;
  CHECK_STATUS(anydev_context_api(ctx, &api), ANYDEV_SUCCESS);
  CHECK(api != NULL && strcmp(api, g_backend) == 0);
  CHECK_STATUS(anydev_context_device_name(ctx, &name), ANYDEV_SUCCESS);
  CHECK(name != NULL && name[0] != '\0');
  if (g_is_cpu) CHECK(contains(name, "cpu"));
  const char* description = NULL;
  CHECK_STATUS(anydev_context_device_description(ctx, &description), ANYDEV_SUCCESS);
  CHECK(description != NULL && description[0] != '\0');
  if (g_is_cpu) CHECK(contains(description, "logical cores"));
  CHECK_STATUS(anydev_context_device_description(ctx, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_device_description(NULL, &description),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_device_id(ctx, &id), ANYDEV_SUCCESS);
  CHECK(id == 0);
  anydev_memory_info_t memory;
  memset(&memory, 0, sizeof memory);
  memory.struct_size = sizeof memory;
  CHECK_STATUS(anydev_context_memory_info(ctx, &memory), ANYDEV_SUCCESS);
  CHECK(memory.total_bytes > 0 && memory.free_bytes <= memory.total_bytes);
  int can = 1;
  CHECK_STATUS(anydev_context_can_access(ctx, ctx, &can), ANYDEV_SUCCESS);
  CHECK(can == 0);
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_retain(ctx), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_release(ctx), ANYDEV_SUCCESS);

  /* NULL handles and outputs. */
  CHECK_STATUS(anydev_context_api(NULL, &api), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_api(ctx, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_device_name(ctx, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_device_id(NULL, &id), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_memory_info(ctx, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_synchronize(NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_retain(NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_release(NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_can_access(ctx, NULL, &can), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_wait_for(ctx, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_free(ctx, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  int local = 0;
  CHECK_STATUS(anydev_context_free(ctx, &local), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_release(ctx), ANYDEV_SUCCESS);
}

static anydev_buffer_t make_buffer(anydev_context_t ctx, anydev_memory_kind_t kind,
                                   anydev_dtype_t dtype, size_t count) {
  anydev_buffer_t buf = NULL;
  CHECK_STATUS(anydev_buffer_create(ctx, kind, dtype, count, &buf), ANYDEV_SUCCESS);
  return buf;
}

static void test_buffers_copies_fills(anydev_context_t ctx) {
  enum { kCount = 1000 };
  anydev_buffer_t host = make_buffer(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT32, kCount);
  anydev_buffer_t device = make_buffer(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT32, kCount);
  anydev_buffer_t back = make_buffer(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT32, kCount);
  if (host == NULL || device == NULL || back == NULL) return;

  anydev_buffer_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(anydev_buffer_get_info(host, &info), ANYDEV_SUCCESS);
  CHECK(info.kind == ANYDEV_MEMORY_HOST);
  CHECK(info.dtype == ANYDEV_DTYPE_UINT32);
  CHECK(info.count == kCount);
  CHECK(info.size_bytes == kCount * 4);
  CHECK(info.address != NULL);
  CHECK(info.offset_bytes == 0);
  uint32_t* host_words = (uint32_t*)info.address;

  anydev_context_t owner = NULL;
  CHECK_STATUS(anydev_buffer_context(host, &owner), ANYDEV_SUCCESS);
  if (owner != NULL) {
    const char* owner_api = NULL;
    CHECK_STATUS(anydev_context_api(owner, &owner_api), ANYDEV_SUCCESS);
    CHECK(owner_api != NULL && strcmp(owner_api, g_backend) == 0);
    CHECK_STATUS(anydev_context_release(owner), ANYDEV_SUCCESS);
  }

  /* host -> device -> host */
  static uint32_t values[kCount];
  for (uint32_t i = 0; i < kCount; ++i) values[i] = i * 2654435761u;
  CHECK_STATUS(anydev_enqueue_copy_from_host(NULL, host, values, sizeof values), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_enqueue_copy(NULL, device, host), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_enqueue_copy(ctx, back, device), ANYDEV_SUCCESS);
  static uint32_t out[kCount];
  CHECK_STATUS(anydev_enqueue_copy_to_host(NULL, out, sizeof out, back), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  CHECK(memcmp(out, values, sizeof values) == 0);
  CHECK(memcmp(host_words, values, sizeof values) == 0);

  /* Fill with a 4-byte pattern, then a 2-byte one over the same bytes. */
  const uint32_t word = 0xDEADBEEFu;
  CHECK_STATUS(anydev_enqueue_fill(NULL, device, &word, sizeof word), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_enqueue_copy(NULL, host, device), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  int all = 1;
  for (size_t i = 0; i < kCount; ++i) all &= host_words[i] == word;
  CHECK(all);
  const uint16_t half = 0x1234;
  CHECK_STATUS(anydev_enqueue_fill(ctx, host, &half, sizeof half), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  all = 1;
  for (size_t i = 0; i < kCount; ++i) all &= host_words[i] == 0x12341234u;
  CHECK(all);

  /* Bad inputs change nothing. */
  const unsigned char three[3] = {1, 2, 3};
  CHECK_STATUS(anydev_enqueue_fill(NULL, host, three, 3), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_enqueue_fill(NULL, host, NULL, 4), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_enqueue_fill(NULL, NULL, &word, 4), ANYDEV_ERROR_INVALID_ARGUMENT);
  const uint64_t wide[2] = {1, 2};
  anydev_buffer_t odd = make_buffer(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 12);
  if (odd != NULL) {
    /* A 16-byte pattern does not divide 12 bytes. */
    CHECK(anydev_enqueue_fill(NULL, odd, wide, 16) != ANYDEV_SUCCESS);
    CHECK(strlen(anydev_last_error_message()) > 0);
    anydev_buffer_release(odd);
  }
  CHECK_STATUS(anydev_enqueue_copy_from_host(NULL, host, values, sizeof values - 1),
               ANYDEV_ERROR_OUT_OF_RANGE);
  CHECK_STATUS(anydev_enqueue_copy_from_host(NULL, host, NULL, sizeof values),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_enqueue_copy_to_host(NULL, out, sizeof out - 4, host),
               ANYDEV_ERROR_OUT_OF_RANGE);
  CHECK_STATUS(anydev_enqueue_copy_to_host(NULL, NULL, sizeof out, host),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_enqueue_copy(NULL, NULL, host), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_enqueue_copy(NULL, host, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  anydev_buffer_t small = make_buffer(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT32, kCount - 1);
  if (small != NULL) {
    CHECK_STATUS(anydev_enqueue_copy(NULL, host, small), ANYDEV_ERROR_OUT_OF_RANGE);
    anydev_buffer_release(small);
  }
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  all = 1;
  for (size_t i = 0; i < kCount; ++i) all &= host_words[i] == 0x12341234u;
  CHECK(all);

  /* Creation errors. */
  anydev_buffer_t sentinel = (anydev_buffer_t)(uintptr_t)0x1;
  anydev_buffer_t bad = sentinel;
  CHECK_STATUS(anydev_buffer_create(NULL, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_INT8, 1, &bad),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, (anydev_dtype_t)99, 1, &bad),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_buffer_create(ctx, (anydev_memory_kind_t)7, ANYDEV_DTYPE_INT8, 1, &bad),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_INT32, SIZE_MAX, &bad),
               ANYDEV_ERROR_OUT_OF_RANGE);
  CHECK(bad == sentinel);
  CHECK_STATUS(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_INT8, 1, NULL),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  anydev_buffer_t empty = make_buffer(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_FLOAT64, 0);
  if (empty != NULL) {
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK_STATUS(anydev_buffer_get_info(empty, &info), ANYDEV_SUCCESS);
    CHECK(info.count == 0 && info.size_bytes == 0 && info.address == NULL);
    anydev_buffer_release(empty);
  }

  CHECK_STATUS(anydev_buffer_retain(NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_buffer_release(NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_buffer_get_info(NULL, &info), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_buffer_get_info(host, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);

  anydev_buffer_release(back);
  anydev_buffer_release(device);
  anydev_buffer_release(host);
}

static void test_views(anydev_context_t ctx) {
  anydev_buffer_t parent = make_buffer(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 64);
  if (parent == NULL) return;
  anydev_buffer_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(anydev_buffer_get_info(parent, &info), ANYDEV_SUCCESS);
  unsigned char* bytes = (unsigned char*)info.address;

  anydev_buffer_t view = NULL;
  CHECK_STATUS(anydev_buffer_create_sub_buffer(parent, ANYDEV_DTYPE_UINT32, 2, 4, &view),
               ANYDEV_SUCCESS);
  if (view != NULL) {
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK_STATUS(anydev_buffer_get_info(view, &info), ANYDEV_SUCCESS);
    CHECK(info.dtype == ANYDEV_DTYPE_UINT32 && info.count == 4 && info.offset_bytes == 8);
    CHECK((unsigned char*)info.address == bytes + 8);
    const uint32_t ones = 0x01010101u;
    memset(bytes, 0, 64);
    CHECK_STATUS(anydev_enqueue_fill(NULL, view, &ones, 4), ANYDEV_SUCCESS);
    CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
    int ok = 1;
    for (int i = 0; i < 64; ++i) ok &= bytes[i] == ((i >= 8 && i < 24) ? 1 : 0);
    CHECK(ok);
  }
  anydev_buffer_t bad = NULL;
  CHECK_STATUS(anydev_buffer_create_sub_buffer(parent, ANYDEV_DTYPE_UINT32, 15, 2, &bad),
               ANYDEV_ERROR_OUT_OF_RANGE);
  anydev_buffer_t at1 = NULL;
  CHECK_STATUS(anydev_buffer_create_sub_buffer(parent, ANYDEV_DTYPE_UINT8, 1, 8, &at1),
               ANYDEV_SUCCESS);
  if (at1 != NULL) {
    CHECK_STATUS(anydev_buffer_create_sub_buffer(at1, ANYDEV_DTYPE_UINT16, 0, 2, &bad),
                 ANYDEV_ERROR_INVALID_ARGUMENT);
    anydev_buffer_release(at1);
  }
  CHECK_STATUS(anydev_buffer_create_sub_buffer(NULL, ANYDEV_DTYPE_UINT8, 0, 1, &bad),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_buffer_create_sub_buffer(parent, ANYDEV_DTYPE_UINT8, 0, 1, NULL),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(bad == NULL);
  /* The view keeps the memory alive after the parent is released. */
  anydev_buffer_release(parent);
  if (view != NULL) {
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK_STATUS(anydev_buffer_get_info(view, &info), ANYDEV_SUCCESS);
    const uint32_t* words = (const uint32_t*)info.address;
    CHECK(words[0] == 0x01010101u && words[3] == 0x01010101u);
    anydev_buffer_release(view);
  }
}

static void test_format(anydev_context_t ctx) {
  anydev_buffer_t buf = make_buffer(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_INT32, 3);
  anydev_buffer_t floats = make_buffer(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_FLOAT32, 2);
  if (buf == NULL || floats == NULL) return;
  const int32_t values[3] = {1, -2, 3};
  CHECK_STATUS(anydev_enqueue_copy_from_host(NULL, buf, values, sizeof values), ANYDEV_SUCCESS);
  char text[64];
  size_t needed = 0;
  CHECK_STATUS(anydev_buffer_format(buf, text, sizeof text, &needed), ANYDEV_SUCCESS);
  CHECK(strcmp(text, "DeviceBuffer([1, -2, 3])") == 0);
  CHECK(needed == strlen("DeviceBuffer([1, -2, 3])") + 1);
  CHECK_STATUS(anydev_buffer_format(buf, text, sizeof text, NULL), ANYDEV_SUCCESS);

  char small[8];
  memset(small, 'x', sizeof small);
  needed = 0;
  CHECK_STATUS(anydev_buffer_format(buf, small, sizeof small, &needed), ANYDEV_ERROR_OUT_OF_RANGE);
  CHECK(needed == strlen("DeviceBuffer([1, -2, 3])") + 1);
  CHECK(memcmp(small, "DeviceB", 7) == 0 && small[7] == '\0');
  CHECK_STATUS(anydev_buffer_format(NULL, text, sizeof text, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_buffer_format(buf, NULL, sizeof text, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);

  const float pair[2] = {1.0f, 0.5f};
  CHECK_STATUS(anydev_enqueue_copy_from_host(NULL, floats, pair, sizeof pair), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_buffer_format(floats, text, sizeof text, NULL), ANYDEV_SUCCESS);
  CHECK(strcmp(text, "HostBuffer([1.0, 0.5])") == 0);
  anydev_buffer_release(floats);
  anydev_buffer_release(buf);
}

static void test_take_ptr(anydev_context_t ctx) {
  anydev_buffer_t buf = make_buffer(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_INT64, 16);
  if (buf == NULL) return;
  void* taken = NULL;
  CHECK_STATUS(anydev_buffer_retain(buf), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_buffer_take_ptr(buf, &taken), ANYDEV_ERROR_INVALID_STATE);
  CHECK(taken == NULL);
  CHECK_STATUS(anydev_buffer_release(buf), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_buffer_take_ptr(buf, &taken), ANYDEV_SUCCESS);
  CHECK(taken != NULL);
  anydev_buffer_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(anydev_buffer_get_info(buf, &info), ANYDEV_ERROR_INVALID_STATE);
  const int64_t one = 1;
  CHECK_STATUS(anydev_enqueue_fill(NULL, buf, &one, 8), ANYDEV_ERROR_INVALID_STATE);
  CHECK_STATUS(anydev_buffer_take_ptr(buf, &taken), ANYDEV_ERROR_INVALID_STATE);
  CHECK_STATUS(anydev_buffer_take_ptr(NULL, &taken), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_buffer_release(buf), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_free(ctx, taken), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_free(ctx, taken), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
}

/* Ownership records are per allocation: take_ptr of a view (here an empty
 * view at the end of another buffer, whose address may be where `a` starts)
 * is INVALID_ARGUMENT and does not replace a's record; an address inside a
 * taken allocation is not freed. */
static void test_take_ptr_records_are_per_allocation(anydev_context_t ctx) {
  anydev_buffer_t a = make_buffer(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_INT32, 64);
  anydev_buffer_t b = make_buffer(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_INT32, 64);
  if (a == NULL || b == NULL) return;
  anydev_buffer_t end_of_b = NULL;
  CHECK_STATUS(anydev_buffer_create_sub_buffer(b, ANYDEV_DTYPE_INT32, 64, 0, &end_of_b),
               ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_buffer_release(b), ANYDEV_SUCCESS);
  void* pa = NULL;
  void* pv = NULL;
  CHECK_STATUS(anydev_buffer_take_ptr(a, &pa), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_buffer_take_ptr(end_of_b, &pv), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(contains(anydev_last_error_message(), "view"));
  CHECK(pv == NULL);
  CHECK_STATUS(anydev_context_free(ctx, (char*)pa + 4), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(contains(anydev_last_error_message(), "inside"));
  CHECK_STATUS(anydev_context_free(ctx, pa), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_free(ctx, pa), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_buffer_release(end_of_b), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_buffer_release(a), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
}

static void test_streams_and_events(anydev_context_t ctx) {
  anydev_stream_t stream = NULL;
  anydev_event_t event = NULL;
  anydev_context_t on_stream = NULL;
  CHECK_STATUS(anydev_context_create_stream(ctx, &stream), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_create_event(ctx, &event), ANYDEV_SUCCESS);
  if (stream == NULL || event == NULL) return;
  int complete = 0;
  CHECK_STATUS(anydev_event_query(event, &complete), ANYDEV_SUCCESS);
  CHECK(complete == 1);
  CHECK_STATUS(anydev_context_with_stream(ctx, stream, &on_stream), ANYDEV_SUCCESS);
  anydev_buffer_t buf = make_buffer(on_stream, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 1 << 20);
  if (buf != NULL) {
    const uint8_t byte = 0x7E;
    CHECK_STATUS(anydev_enqueue_fill(NULL, buf, &byte, 1), ANYDEV_SUCCESS);
    CHECK_STATUS(anydev_stream_record_event(stream, event), ANYDEV_SUCCESS);
    CHECK_STATUS(anydev_event_synchronize(event), ANYDEV_SUCCESS);
    CHECK_STATUS(anydev_event_query(event, &complete), ANYDEV_SUCCESS);
    CHECK(complete == 1);
    anydev_buffer_info_t info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK_STATUS(anydev_buffer_get_info(buf, &info), ANYDEV_SUCCESS);
    const uint8_t* bytes = (const uint8_t*)info.address;
    CHECK(bytes[0] == 0x7E && bytes[(1 << 20) - 1] == 0x7E);
    anydev_buffer_release(buf);
  }
  anydev_stream_t main_stream = NULL;
  CHECK_STATUS(anydev_context_stream(ctx, &main_stream), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_stream_wait_event(main_stream, event), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_stream_synchronize(main_stream), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_wait_for(ctx, on_stream), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_stream_wait_event(NULL, event), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_stream_record_event(main_stream, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_event_query(event, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_event_synchronize(NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_with_stream(ctx, NULL, &on_stream), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_stream_release(main_stream), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_release(on_stream), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_event_release(event), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_stream_release(stream), ANYDEV_SUCCESS);
}

/* Another thread's failures do not show up as this thread's last error. */
static void* fail_on_thread(void* arg) {
  (void)arg;
  anydev_dtype_t out;
  anydev_dtype_from_name("not-a-dtype", &out);
  return NULL;
}

static void test_last_error(void) {
  anydev_dtype_t out;
  anydev_clear_last_error();
  CHECK(anydev_last_error_status() == ANYDEV_SUCCESS);
  CHECK(strcmp(anydev_last_error_message(), "") == 0);
  CHECK(anydev_dtype_from_name("bogus-dtype", &out) == ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(anydev_last_error_status() == ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(contains(anydev_last_error_message(), "bogus-dtype"));
  /* Success leaves the last error as it was. */
  CHECK(anydev_dtype_from_name("int8", &out) == ANYDEV_SUCCESS);
  CHECK(anydev_last_error_status() == ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(contains(anydev_last_error_message(), "bogus-dtype"));
  anydev_clear_last_error();
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, fail_on_thread, NULL) == 0);
  pthread_join(thread, NULL);
  CHECK(anydev_last_error_status() == ANYDEV_SUCCESS);
  CHECK(strcmp(anydev_last_error_message(), "") == 0);
}

/* Honest pinning: whether a host buffer is page-locked, and the
 * device's locked total. */
static void test_host_memory_locks(anydev_context_t ctx) {
  anydev_buffer_t host = NULL;
  anydev_buffer_t device = NULL;
  CHECK_STATUS(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_FLOAT32, 16, &host),
               ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_FLOAT32, 16, &device),
               ANYDEV_SUCCESS);
  int locked = -1;
  CHECK_STATUS(anydev_buffer_is_locked(host, &locked), ANYDEV_SUCCESS);
  CHECK(locked == 0 || locked == 1);
  size_t locked_bytes = 0;
  size_t total_bytes = 0;
  CHECK_STATUS(anydev_context_host_memory_locks(ctx, &locked_bytes, &total_bytes), ANYDEV_SUCCESS);
  CHECK(total_bytes >= 16 * sizeof(float));
  CHECK(locked_bytes <= total_bytes);
  CHECK(locked == 0 || locked_bytes > 0);
  CHECK_STATUS(anydev_context_host_memory_locks(ctx, NULL, NULL), ANYDEV_SUCCESS);
  locked = -1;
  CHECK_STATUS(anydev_buffer_is_locked(device, &locked), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(contains(anydev_last_error_message(), "anydev_buffer_is_locked"));
  CHECK(contains(anydev_last_error_message(), "device buffer"));
  CHECK(locked == -1);
  CHECK_STATUS(anydev_buffer_is_locked(host, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_buffer_is_locked(NULL, &locked), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_host_memory_locks(NULL, &locked_bytes, &total_bytes),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  anydev_buffer_t empty = NULL;
  CHECK_STATUS(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_FLOAT32, 0, &empty),
               ANYDEV_SUCCESS);
  locked = -1;
  CHECK_STATUS(anydev_buffer_is_locked(empty, &locked), ANYDEV_SUCCESS);
  CHECK(locked == 0);
  CHECK_STATUS(anydev_buffer_release(empty), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_buffer_release(device), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_buffer_release(host), ANYDEV_SUCCESS);
}

/* The backend under test: ANYDEV_C_API_BACKEND, unset: cpu. Set but empty,
 * unknown or unavailable is a failure naming it (and its reason). */
static int choose_backend(void) {
  const char* chosen = getenv("ANYDEV_C_API_BACKEND");
  if (chosen != NULL) g_backend = chosen;
  g_is_cpu = strcmp(g_backend, "cpu") == 0;
  size_t count = 0;
  if (anydev_backend_count(&count) != ANYDEV_SUCCESS) count = 0;
  for (size_t i = 0; i < count; ++i) {
    anydev_backend_info_t info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (anydev_backend_info(i, &info) != ANYDEV_SUCCESS || info.name == NULL) continue;
    if (strcmp(info.name, g_backend) != 0) continue;
    if (info.available) return 1;
    ++g_failed;
    fprintf(stderr, "ANYDEV_C_API_BACKEND: backend '%s' is unavailable: %s\n", g_backend,
            info.reason != NULL ? info.reason : "(no reason)");
    return 0;
  }
  ++g_failed;
  fprintf(stderr, "ANYDEV_C_API_BACKEND: '%s' is not a backend anydev knows\n", g_backend);
  return 0;
}

/* anydev_context_execution_time's function: one fill per call, counted. */
struct timed_calls {
  anydev_buffer_t buf;
  int calls;
  int fail_at; /* the call that fails (1-based), 0: none */
};
static anydev_status_t timed_fill(anydev_context_t ctx, void* user_data) {
  struct timed_calls* t = (struct timed_calls*)user_data;
  const uint8_t byte = 0x3C;
  if (++t->calls == t->fail_at) return ANYDEV_ERROR_INVALID_STATE;
  return anydev_enqueue_fill(ctx, t->buf, &byte, 1);
}

static void test_timing_and_priorities(anydev_context_t ctx) {
  anydev_event_t start = NULL;
  anydev_event_t end = NULL;
  anydev_event_t plain = NULL;
  anydev_stream_t stream = NULL;
  unsigned flags = 99;
  float ms = -1.0f;
  CHECK_STATUS(anydev_context_create_event_with_flags(ctx, 4, &start),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(contains(anydev_last_error_message(), "unknown event flag bits 4"));
  CHECK_STATUS(anydev_context_create_event_with_flags(ctx, ANYDEV_EVENT_TIMING, &start),
               ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_create_event_with_flags(
                   ctx, ANYDEV_EVENT_TIMING | ANYDEV_EVENT_BLOCKING_SYNC, &end),
               ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_create_event_with_flags(ctx, 0, &plain), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_stream(ctx, &stream), ANYDEV_SUCCESS);
  if (start == NULL || end == NULL || plain == NULL || stream == NULL) return;
  CHECK_STATUS(anydev_event_flags(end, &flags), ANYDEV_SUCCESS);
  CHECK(flags == (ANYDEV_EVENT_TIMING | ANYDEV_EVENT_BLOCKING_SYNC));
  CHECK_STATUS(anydev_event_elapsed_time(start, end, &ms), ANYDEV_ERROR_INVALID_STATE);
  CHECK(contains(anydev_last_error_message(), "never recorded"));
  CHECK_STATUS(anydev_stream_record_event(stream, start), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_stream_record_event(stream, plain), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_stream_record_event(stream, end), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_event_synchronize(end), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_event_elapsed_time(start, plain, &ms), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(ms == -1.0f);
  CHECK_STATUS(anydev_event_elapsed_time(start, end, &ms), ANYDEV_SUCCESS);
  CHECK(ms >= 0.0f);
  CHECK_STATUS(anydev_event_elapsed_time(start, end, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);

  struct timed_calls t = {make_buffer(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 1 << 16), 0, 0};
  int64_t ns = -1;
  if (t.buf != NULL) {
    CHECK_STATUS(anydev_context_execution_time(ctx, timed_fill, &t, 3, &ns), ANYDEV_SUCCESS);
    CHECK(t.calls == 3 && ns >= 0);
    t.calls = 0;
    t.fail_at = 2;
    ns = -1;
    CHECK(anydev_context_execution_time(ctx, timed_fill, &t, 3, &ns) == ANYDEV_ERROR_INVALID_STATE);
    CHECK(t.calls == 2 && ns == -1);
    CHECK_STATUS(anydev_context_execution_time(ctx, timed_fill, &t, 0, &ns),
                 ANYDEV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
    CHECK_STATUS(anydev_buffer_release(t.buf), ANYDEV_SUCCESS);
  }

  int least = 7;
  int greatest = 7;
  int priority = 7;
  anydev_stream_t high = NULL;
  CHECK_STATUS(anydev_context_stream_priority_range(ctx, &least, &greatest), ANYDEV_SUCCESS);
  CHECK(least == 0 && greatest <= 0);
  CHECK_STATUS(anydev_context_stream_priority_range(ctx, NULL, NULL), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_create_stream_with_priority(ctx, greatest - 1000, &high),
               ANYDEV_SUCCESS);
  if (high != NULL) {
    CHECK_STATUS(anydev_stream_priority(high, &priority), ANYDEV_SUCCESS);
    CHECK(priority == greatest);
    CHECK_STATUS(anydev_stream_release(high), ANYDEV_SUCCESS);
  }
  CHECK_STATUS(anydev_stream_priority(stream, &priority), ANYDEV_SUCCESS);
  CHECK(priority == 0);
  CHECK_STATUS(anydev_stream_release(stream), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_event_release(start), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_event_release(end), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_event_release(plain), ANYDEV_SUCCESS);
}

/* Device attributes, UUID, PCI bus id and API version. */
static void test_device_queries(anydev_context_t ctx) {
  anydev_device_attribute_t attribute = ANYDEV_ATTRIBUTE_COUNT;
  CHECK_STATUS(anydev_device_attribute_from_name("compute_units", &attribute), ANYDEV_SUCCESS);
  CHECK(attribute == ANYDEV_ATTRIBUTE_COMPUTE_UNITS);
  CHECK_STATUS(anydev_device_attribute_from_name("warp", &attribute),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(contains(anydev_last_error_message(), "warp"));
  CHECK(attribute == ANYDEV_ATTRIBUTE_COMPUTE_UNITS);
  CHECK(strcmp(anydev_device_attribute_name(ANYDEV_ATTRIBUTE_CLOCK_RATE_KHZ), "clock_rate_khz") ==
        0);
  CHECK(anydev_device_attribute_name(ANYDEV_ATTRIBUTE_COUNT) == NULL);

  int64_t value = -1;
  CHECK_STATUS(anydev_context_get_attribute(ctx, ANYDEV_ATTRIBUTE_COMPUTE_UNITS, &value),
               ANYDEV_SUCCESS);
  CHECK(value >= 1);
  value = -1;
  CHECK_STATUS(anydev_context_get_attribute(ctx, ANYDEV_ATTRIBUTE_COUNT, &value),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(value == -1);
  CHECK_STATUS(anydev_context_get_attribute(ctx, ANYDEV_ATTRIBUTE_COMPUTE_UNITS, NULL),
               ANYDEV_ERROR_INVALID_ARGUMENT);

  char text[256];
  memset(text, 0, sizeof text);
  CHECK_STATUS(anydev_context_api_version(ctx, text, sizeof text), ANYDEV_SUCCESS);
  CHECK(strlen(text) > 0);
  char cut[4] = {'x', 'x', 'x', 'x'};
  CHECK_STATUS(anydev_context_api_version(ctx, cut, sizeof cut), ANYDEV_SUCCESS);
  CHECK(strlen(cut) <= 3 && strncmp(cut, text, strlen(cut)) == 0);

  if (g_is_cpu) { /* the cpu backend has neither a UUID nor a PCI address */
    uint8_t uuid[16];
    memset(uuid, 0xA5, sizeof uuid);
    CHECK_STATUS(anydev_context_device_uuid(ctx, uuid), ANYDEV_ERROR_UNSUPPORTED);
    CHECK(uuid[0] == 0xA5 && uuid[15] == 0xA5);
    CHECK_STATUS(anydev_context_pci_bus_id(ctx, text, sizeof text), ANYDEV_ERROR_UNSUPPORTED);
    CHECK_STATUS(anydev_context_get_attribute(ctx, ANYDEV_ATTRIBUTE_UNIFIED_ADDRESSING, &value),
                 ANYDEV_SUCCESS);
    CHECK(value == 1);
  }
}

static atomic_int g_unregistered;

static void count_unregistered(void* user_data) {
  CHECK(user_data == &g_unregistered);
  atomic_fetch_add(&g_unregistered, 1);
}

/* Host memory registered as a buffer: copies and fills reach the caller's
 * memory; bad ranges register nothing; the callback runs once, after the
 * last handle is gone. */
static void test_registered_memory(anydev_context_t ctx) {
  enum { kWords = 1024 };
  uint32_t* memory = NULL;
  if (posix_memalign((void**)&memory, 4096, kWords * sizeof(uint32_t)) != 0) {
    CHECK(!"posix_memalign");
    return;
  }
  memset(memory, 0, kWords * sizeof(uint32_t));
  anydev_buffer_t registered = NULL;
  anydev_status_t st = anydev_context_register_host_memory(ctx, memory, kWords * sizeof(uint32_t),
                                                           ANYDEV_DTYPE_UINT32, count_unregistered,
                                                           &g_unregistered, &registered);
  if (st == ANYDEV_ERROR_UNSUPPORTED && !g_is_cpu) {
    printf("registered memory: skipped, the %s backend has none: %s\n", g_backend,
           anydev_last_error_message());
    free(memory);
    return;
  }
  CHECK(st == ANYDEV_SUCCESS);
  if (registered == NULL) {
    free(memory);
    return;
  }
  int flag = -1;
  CHECK_STATUS(anydev_buffer_is_registered(registered, &flag), ANYDEV_SUCCESS);
  CHECK(flag == 1);
  anydev_buffer_t plain = make_buffer(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT32, 4);
  if (plain != NULL) {
    CHECK_STATUS(anydev_buffer_is_registered(plain, &flag), ANYDEV_SUCCESS);
    CHECK(flag == 0);
    CHECK_STATUS(anydev_buffer_release(plain), ANYDEV_SUCCESS);
  }

  const uint32_t word = 0x600DF00Du;
  CHECK_STATUS(anydev_enqueue_fill(ctx, registered, &word, sizeof word), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  CHECK(memory[0] == word && memory[kWords - 1] == word);

  anydev_buffer_t again = NULL;
  CHECK_STATUS(
      anydev_context_register_host_memory(ctx, memory, 64, ANYDEV_DTYPE_UINT32, NULL, NULL, &again),
      ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(again == NULL);
  CHECK_STATUS(
      anydev_context_register_host_memory(ctx, NULL, 64, ANYDEV_DTYPE_UINT32, NULL, NULL, &again),
      ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_register_host_memory(ctx, memory + 512, 6, ANYDEV_DTYPE_UINT32, NULL,
                                                   NULL, &again),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(again == NULL);

  CHECK(atomic_load(&g_unregistered) == 0);
  CHECK_STATUS(anydev_buffer_release(registered), ANYDEV_SUCCESS);
  /* The callback comes after the stream's work, possibly on a core thread. */
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  for (int i = 0; i < 5000 && atomic_load(&g_unregistered) == 0; ++i) {
    const struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  CHECK(atomic_load(&g_unregistered) == 1);
  free(memory);
}

/* The words of a host buffer. */
static uint32_t* host_words_of(anydev_buffer_t buf) {
  anydev_buffer_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(anydev_buffer_get_info(buf, &info), ANYDEV_SUCCESS);
  return (uint32_t*)info.address;
}

static int all_words(const uint32_t* words, size_t n, uint32_t value) {
  for (size_t i = 0; i < n; ++i) {
    if (words[i] != value) return 0;
  }
  return 1;
}

enum { kGraphWords = 256 };

/* Sets src to `seed`, replays `graph`, and checks that dst holds it. */
static void replay_and_check(anydev_context_t ctx, anydev_graph_t graph, uint32_t* src,
                             const uint32_t* dst, uint32_t seed) {
  for (size_t i = 0; i < kGraphWords; ++i) src[i] = seed + (uint32_t)i;
  CHECK_STATUS(anydev_graph_replay(graph, NULL), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  int same = 1;
  for (size_t i = 0; i < kGraphWords; ++i) same = same && dst[i] == seed + (uint32_t)i;
  CHECK(same);
}

/* A graph built node by node: fill, copies after it, a join; errors at add
 * time add nothing; building ends at instantiate. */
static void test_graph(anydev_context_t ctx, anydev_buffer_t src, anydev_buffer_t mid,
                       anydev_buffer_t dst) {
  anydev_graph_t graph = NULL;
  CHECK_STATUS(anydev_graph_create(ctx, &graph), ANYDEV_SUCCESS);
  if (graph == NULL) return;
  const uint32_t word = 0x11111111u;
  anydev_graph_node_t fill = 0, up = 0, down = 0;
  CHECK_STATUS(anydev_graph_add_fill(graph, dst, &word, sizeof word, NULL, 0, &fill),
               ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_graph_add_copy(graph, mid, src, NULL, 0, &up), ANYDEV_SUCCESS);
  const anydev_graph_node_t both[2] = {fill, up};
  CHECK_STATUS(anydev_graph_add_copy(graph, dst, mid, both, 2, &down), ANYDEV_SUCCESS);
  CHECK(fill != 0 && up != 0 && down != 0 && fill != up && up != down);
  CHECK_STATUS(anydev_graph_add_empty(graph, &down, 1, NULL), ANYDEV_SUCCESS);

  const anydev_graph_node_t unknown = down + 7;
  CHECK_STATUS(anydev_graph_add_empty(graph, &unknown, 1, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(contains(anydev_last_error_message(), "not a node of this graph"));
  CHECK_STATUS(anydev_graph_add_empty(graph, NULL, 2, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_graph_add_fill(graph, dst, &word, 3, NULL, 0, NULL),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_graph_add_copy(graph, dst, NULL, NULL, 0, NULL),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  size_t count = 0;
  CHECK_STATUS(anydev_graph_node_count(graph, &count), ANYDEV_SUCCESS);
  CHECK(count == 4);

  CHECK_STATUS(anydev_graph_instantiate(graph), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_graph_instantiate(graph), ANYDEV_SUCCESS); /* a second time: nothing */
  int native = -1;
  CHECK_STATUS(anydev_graph_is_native(graph, &native), ANYDEV_SUCCESS);
  CHECK(native == 0 || native == 1);
  if (g_is_cpu) CHECK(native == 1);
  CHECK_STATUS(anydev_graph_add_empty(graph, NULL, 0, NULL), ANYDEV_ERROR_INVALID_STATE);
  CHECK(contains(anydev_last_error_message(), "already instantiated"));

  uint32_t* src_words = host_words_of(src);
  const uint32_t* dst_words = host_words_of(dst);
  if (src_words != NULL && dst_words != NULL) {
    for (uint32_t r = 0; r < 3; ++r) replay_and_check(ctx, graph, src_words, dst_words, 1000 * r);
  }
  /* Capturing into an instantiated graph is refused. */
  CHECK_STATUS(anydev_context_begin_capture(ctx, graph), ANYDEV_ERROR_INVALID_STATE);
  CHECK(contains(anydev_last_error_message(), "already instantiated"));
  CHECK_STATUS(anydev_graph_release(graph), ANYDEV_SUCCESS);
}

struct capture_thread {
  anydev_context_t ctx;
  anydev_buffer_t buf;
  anydev_status_t fill;
  anydev_status_t end;
  int named_thread;
};

static void* enqueue_from_other_thread(void* arg) {
  struct capture_thread* t = (struct capture_thread*)arg;
  const uint32_t word = 5;
  t->fill = anydev_enqueue_fill(t->ctx, t->buf, &word, sizeof word);
  t->named_thread = contains(anydev_last_error_message(), "another thread");
  t->end = anydev_context_end_capture(t->ctx);
  return NULL;
}

/* Stream capture: the same pipeline enqueued on a capturing context is
 * recorded, not run, and replays exactly; what cannot be recorded is
 * INVALID_STATE and records nothing. */
static void test_capture(anydev_context_t ctx, anydev_buffer_t src, anydev_buffer_t mid,
                         anydev_buffer_t dst) {
  anydev_graph_t graph = NULL;
  CHECK_STATUS(anydev_graph_create(ctx, &graph), ANYDEV_SUCCESS);
  if (graph == NULL) return;
  int capturing = -1;
  CHECK_STATUS(anydev_context_end_capture(ctx), ANYDEV_ERROR_INVALID_STATE);
  CHECK(contains(anydev_last_error_message(), "not capturing"));
  CHECK_STATUS(anydev_context_begin_capture(NULL, graph), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_begin_capture(ctx, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_is_capturing(ctx, NULL), ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_context_is_capturing(ctx, &capturing), ANYDEV_SUCCESS);
  CHECK(capturing == 0);

  uint32_t* dst_words = host_words_of(dst);
  uint32_t* src_words = host_words_of(src);
  if (dst_words == NULL || src_words == NULL) return;
  for (size_t i = 0; i < kGraphWords; ++i) dst_words[i] = 77;

  CHECK_STATUS(anydev_context_begin_capture(ctx, graph), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_is_capturing(ctx, &capturing), ANYDEV_SUCCESS);
  CHECK(capturing == 1);
  CHECK_STATUS(anydev_context_begin_capture(ctx, graph), ANYDEV_ERROR_INVALID_STATE);
  CHECK(contains(anydev_last_error_message(), "already capturing"));
  const uint32_t word = 0x22222222u;
  CHECK_STATUS(anydev_enqueue_fill(ctx, dst, &word, sizeof word), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_enqueue_copy(ctx, mid, src), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_enqueue_copy(NULL, dst, mid), ANYDEV_SUCCESS); /* dst's context: ctx */

  uint32_t scratch[kGraphWords];
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_ERROR_INVALID_STATE);
  CHECK(contains(anydev_last_error_message(), "anydev_context_synchronize"));
  CHECK(contains(anydev_last_error_message(), "capturing"));
  CHECK_STATUS(anydev_enqueue_copy_from_host(ctx, dst, scratch, sizeof scratch),
               ANYDEV_ERROR_INVALID_STATE);
  CHECK_STATUS(anydev_enqueue_copy_to_host(ctx, scratch, sizeof scratch, dst),
               ANYDEV_ERROR_INVALID_STATE);
  CHECK_STATUS(anydev_graph_replay(graph, NULL), ANYDEV_ERROR_INVALID_STATE);
  struct capture_thread t = {ctx, dst, ANYDEV_SUCCESS, ANYDEV_SUCCESS, 0};
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, enqueue_from_other_thread, &t) == 0);
  CHECK(pthread_join(thread, NULL) == 0);
  CHECK(t.fill == ANYDEV_ERROR_INVALID_STATE && t.named_thread);
  CHECK(t.end == ANYDEV_ERROR_INVALID_STATE);

  size_t count = 0;
  CHECK_STATUS(anydev_graph_node_count(graph, &count), ANYDEV_SUCCESS);
  CHECK(count == 3);
  CHECK_STATUS(anydev_context_end_capture(ctx), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_is_capturing(ctx, &capturing), ANYDEV_SUCCESS);
  CHECK(capturing == 0);
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  CHECK(all_words(dst_words, kGraphWords, 77)); /* nothing captured ran */
  for (uint32_t r = 0; r < 3; ++r) replay_and_check(ctx, graph, src_words, dst_words, 5000 + r);
  CHECK_STATUS(anydev_graph_release(graph), ANYDEV_SUCCESS);
}

static void test_graphs_and_capture(anydev_context_t ctx) {
  anydev_buffer_t src = make_buffer(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT32, kGraphWords);
  anydev_buffer_t mid = make_buffer(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT32, kGraphWords);
  anydev_buffer_t dst = make_buffer(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT32, kGraphWords);
  if (src != NULL && mid != NULL && dst != NULL) {
    CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
    test_graph(ctx, src, mid, dst);
    test_capture(ctx, src, mid, dst);
  }
  if (src != NULL) CHECK_STATUS(anydev_buffer_release(src), ANYDEV_SUCCESS);
  if (mid != NULL) CHECK_STATUS(anydev_buffer_release(mid), ANYDEV_SUCCESS);
  if (dst != NULL) CHECK_STATUS(anydev_buffer_release(dst), ANYDEV_SUCCESS);
}

/* anydev_comm_expose_new from C: a host buffer over memory UCX allocated,
 * usable by ordinary fills and copies, and its region; bad input refused,
 * nothing made. Skipped (saying why) without the UCX transport. */
static void test_comm_expose_new(anydev_context_t ctx) {
  anydev_comm_t comm = NULL;
  const anydev_status_t st = anydev_comm_create(ctx, 0, &comm);
  if (st == ANYDEV_ERROR_BACKEND_UNAVAILABLE) {
    printf("anydev_comm_expose_new: skipped, no UCX transport: %s\n", anydev_last_error_message());
    CHECK_STATUS(anydev_comm_expose_new(NULL, ANYDEV_DTYPE_UINT32, 1, NULL, NULL),
                 ANYDEV_ERROR_BACKEND_UNAVAILABLE);
    return;
  }
  CHECK(st == ANYDEV_SUCCESS);
  if (comm == NULL) return;
  anydev_buffer_t buffer = NULL;
  anydev_comm_region_t region = NULL;
  CHECK_STATUS(anydev_comm_expose_new(comm, ANYDEV_DTYPE_UINT32, 0, &buffer, &region),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_comm_expose_new(NULL, ANYDEV_DTYPE_UINT32, 1, &buffer, &region),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(anydev_comm_expose_new(comm, ANYDEV_DTYPE_UINT32, 1, NULL, &region),
               ANYDEV_ERROR_INVALID_ARGUMENT);
  CHECK(buffer == NULL && region == NULL);
  CHECK_STATUS(anydev_comm_expose_new(comm, ANYDEV_DTYPE_UINT32, 100, &buffer, &region),
               ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_comm_release(comm), ANYDEV_SUCCESS); /* buffer and region hold it */
  if (buffer == NULL || region == NULL) return;
  size_t key_size = 0;
  CHECK_STATUS(anydev_comm_region_key(region, NULL, 0, &key_size), ANYDEV_SUCCESS);
  CHECK(key_size > 0);
  CHECK_STATUS(anydev_comm_region_release(region), ANYDEV_SUCCESS);
  int flag = 0;
  CHECK_STATUS(anydev_buffer_is_registered(buffer, &flag), ANYDEV_SUCCESS);
  CHECK(flag == 1);
  const uint32_t word = 0xC0FFEE11u;
  uint32_t got[100] = {0};
  CHECK_STATUS(anydev_enqueue_fill(ctx, buffer, &word, sizeof word), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_enqueue_copy_to_host(ctx, got, sizeof got, buffer), ANYDEV_SUCCESS);
  CHECK_STATUS(anydev_context_synchronize(ctx), ANYDEV_SUCCESS);
  CHECK(got[0] == word && got[99] == word);
  CHECK_STATUS(anydev_buffer_release(buffer), ANYDEV_SUCCESS);
}

int main(void) {
  if (!choose_backend()) {
    printf("backend %s: %d passed, %d failed\n", g_backend, g_passed, g_failed);
    return 1;
  }
  test_names_and_version();
  test_dtypes();
  test_last_error();
  test_backends();
  test_context();
  test_log_callback();
  anydev_context_t ctx = make_context();
  if (ctx != NULL) {
    test_buffers_copies_fills(ctx);
    test_views(ctx);
    test_format(ctx);
    test_take_ptr(ctx);
    test_take_ptr_records_are_per_allocation(ctx);
    test_streams_and_events(ctx);
    test_timing_and_priorities(ctx);
    test_host_memory_locks(ctx);
    test_device_queries(ctx);
    test_registered_memory(ctx);
    test_comm_expose_new(ctx);
    test_graphs_and_capture(ctx);
    CHECK_STATUS(anydev_context_release(ctx), ANYDEV_SUCCESS);
  }
  printf("backend %s: %d passed, %d failed\n", g_backend, g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
