/* SPDX-License-Identifier: Apache-2.0 */
/* The C ABI from an installed anydev, compiled as C11: a host buffer filled
 * on the default backend, its bytes checked. Exits non-zero naming the
 * failing call. */
#include <anydev/anydev.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int check(anydev_status_t status, const char* call) {
  if (status == ANYDEV_SUCCESS) return 1;
  fprintf(stderr, "c_consumer: %s failed (%s): %s\n", call, anydev_status_name(status),
          anydev_last_error_message());
  return 0;
}

int main(void) {
  anydev_context_t ctx = NULL;
  anydev_buffer_t buf = NULL;
  anydev_buffer_info_t info;
  const uint32_t pattern = 0xA5A5F00Du;
  int ok;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  ok = check(anydev_context_create(NULL, -1, &ctx), "anydev_context_create") &&
       check(anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT32, 16, &buf),
             "anydev_buffer_create") &&
       check(anydev_enqueue_fill(NULL, buf, &pattern, sizeof(pattern)), "anydev_enqueue_fill") &&
       check(anydev_context_synchronize(ctx), "anydev_context_synchronize") &&
       check(anydev_buffer_get_info(buf, &info), "anydev_buffer_get_info");
  if (ok) {
    const uint32_t* values = (const uint32_t*)info.address;
    for (size_t i = 0; i < info.count; ++i) {
      if (values[i] != pattern) {
        fprintf(stderr, "c_consumer: element %zu is 0x%08x, expected 0x%08x\n", i,
                (unsigned)values[i], (unsigned)pattern);
        ok = 0;
        break;
      }
    }
  }
  if (buf != NULL) anydev_buffer_release(buf);
  if (ctx != NULL) anydev_context_release(ctx);
  if (ok) printf("c_consumer: anydev %s OK\n", anydev_version_string());
  return ok ? 0 : 1;
}
