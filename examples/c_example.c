/* SPDX-License-Identifier: Apache-2.0 */
/* anydev-c-example: the demo's flow through the C ABI (anydev/anydev.h), for
 * embedders that do not use C++. Every call's status is checked; a failure
 * prints the call, the status name and anydev_last_error_message(), releases
 * what was created and exits 1. */
#include <stdio.h>
#include <stdlib.h>

#include "anydev/anydev.h"

#define N 8

/* Runs `call`; on failure reports it and jumps to `done`. */
#define CHECK(call)                                                                                \
  do {                                                                                             \
    anydev_status_t status_ = (call);                                                              \
    if (status_ != ANYDEV_SUCCESS) {                                                               \
      fprintf(stderr, "anydev-c-example: %s failed: %s: %s\n", #call, anydev_status_name(status_), \
              anydev_last_error_message());                                                        \
      goto done;                                                                                   \
    }                                                                                              \
  } while (0)

/* Prints `label` and the buffer as Mojo does ("HostBuffer([0.0, ...])"). */
static anydev_status_t print_buffer(const char* label, anydev_buffer_t buf) {
  char text[512];
  anydev_status_t status = anydev_buffer_format(buf, text, sizeof(text), NULL);
  if (status == ANYDEV_SUCCESS) printf("%s%s\n", label, text);
  return status;
}

int main(void) {
  int rc = 1;
  anydev_context_t ctx = NULL;
  anydev_buffer_t host = NULL, device = NULL, filled = NULL, round_trip = NULL, fill_result = NULL,
                  middle = NULL;
  const char* api = NULL;
  const char* name = NULL;
  int id = 0;
  anydev_buffer_info_t info = {0};
  float* host_data = NULL;
  float* round_data = NULL;
  float* fill_data = NULL;
  const float half = 0.5f;
  size_t i = 0;

  /* NULL, -1: ANYDEV_BACKEND, else cuda, hip, level_zero, opencl, cpu. */
  CHECK(anydev_context_create(NULL, -1, &ctx));
  CHECK(anydev_context_api(ctx, &api));
  CHECK(anydev_context_device_name(ctx, &name));
  CHECK(anydev_context_device_id(ctx, &id));
  printf("backend %s, device %d: %s\n", api, id, name);

  CHECK(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_FLOAT32, N, &host));
  info.struct_size = sizeof(info);
  CHECK(anydev_buffer_get_info(host, &info));
  host_data = (float*)info.address; /* pinned host memory, usable at once */
  for (i = 0; i < N; ++i) host_data[i] = (float)i;

  CHECK(anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_FLOAT32, N, &device));
  CHECK(anydev_enqueue_copy(NULL, device, host)); /* NULL: on dst's context */

  CHECK(anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_FLOAT32, N, &filled));
  CHECK(anydev_enqueue_fill(NULL, filled, &half, sizeof(half)));

  CHECK(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_FLOAT32, N, &round_trip));
  CHECK(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_FLOAT32, N, &fill_result));
  CHECK(anydev_enqueue_copy(NULL, round_trip, device));
  CHECK(anydev_enqueue_copy(NULL, fill_result, filled));
  CHECK(anydev_context_synchronize(ctx)); /* wait before the host reads */

  /* A view of elements 2..5 sharing host's memory (keeps it alive). */
  CHECK(anydev_buffer_create_sub_buffer(host, ANYDEV_DTYPE_FLOAT32, 2, 4, &middle));

  CHECK(print_buffer("host:       ", host));
  CHECK(print_buffer("device:     ", device));
  CHECK(print_buffer("round trip: ", round_trip));
  CHECK(print_buffer("filled:     ", fill_result));
  CHECK(print_buffer("view [2,6): ", middle));

  CHECK(anydev_buffer_get_info(round_trip, &info));
  round_data = (float*)info.address;
  CHECK(anydev_buffer_get_info(fill_result, &info));
  fill_data = (float*)info.address;
  for (i = 0; i < N; ++i) {
    if (round_data[i] != (float)i || fill_data[i] != half) {
      fprintf(stderr, "anydev-c-example: element %zu read back as %g and %g\n", i,
              (double)round_data[i], (double)fill_data[i]);
      goto done;
    }
  }
  rc = 0;

done:
  /* Releasing never blocks; memory goes after the work that uses it. */
  if (middle != NULL) anydev_buffer_release(middle);
  if (fill_result != NULL) anydev_buffer_release(fill_result);
  if (round_trip != NULL) anydev_buffer_release(round_trip);
  if (filled != NULL) anydev_buffer_release(filled);
  if (device != NULL) anydev_buffer_release(device);
  if (host != NULL) anydev_buffer_release(host);
  if (ctx != NULL) anydev_context_release(ctx);
  return rc;
}
