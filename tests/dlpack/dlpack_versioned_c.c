/* SPDX-License-Identifier: Apache-2.0 */
/* The versioned DLPack declarations of anydev_dlpack.h used from C (the
 * struct, its self-referential deleter, the flags): a round trip through
 * anydev_buffer_to_dlpack_versioned and anydev_buffer_from_dlpack_versioned
 * on the cpu backend. Called by DlpackVersioned.CDeclarationsWorkFromC. */
#include <stdio.h>
#include <string.h>

#include "anydev/anydev_dlpack.h"

static int failed(char* message, size_t capacity, const char* what) {
  snprintf(message, capacity, "%s: %s", what, anydev_last_error_message());
  return 1;
}

int anydev_test_versioned_round_trip_in_c(char* message, size_t capacity) {
  anydev_context_t ctx = NULL;
  anydev_buffer_t buf = NULL;
  anydev_buffer_t back = NULL;
  anydev_dlpack_managed_tensor_versioned_t* tensor = NULL;
  anydev_buffer_info_t info;
  int result = 0;
  if (anydev_context_create("cpu", 0, &ctx) != ANYDEV_SUCCESS) {
    return failed(message, capacity, "anydev_context_create");
  }
  if (anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_BOOL, 3, &buf) != ANYDEV_SUCCESS) {
    result = failed(message, capacity, "anydev_buffer_create");
    goto done;
  }
  if (anydev_buffer_to_dlpack_versioned(buf, 0, NULL, ANYDEV_DLPACK_FLAG_READ_ONLY, &tensor) !=
      ANYDEV_SUCCESS) {
    result = failed(message, capacity, "anydev_buffer_to_dlpack_versioned");
    goto done;
  }
  if (tensor->version.major != ANYDEV_DLPACK_MAJOR_VERSION ||
      tensor->flags != ANYDEV_DLPACK_FLAG_READ_ONLY ||
      tensor->dl_tensor.dtype.code != ANYDEV_DLPACK_CODE_BOOL) {
    snprintf(message, capacity, "version %u, flags %llu, code %d", tensor->version.major,
             (unsigned long long)tensor->flags, (int)tensor->dl_tensor.dtype.code);
    result = 1;
    goto done;
  }
  /* A read-only tensor is refused and stays the caller's. */
  if (anydev_buffer_from_dlpack_versioned(ctx, tensor, &back) != ANYDEV_ERROR_UNSUPPORTED ||
      back != NULL) {
    snprintf(message, capacity, "a read-only tensor was imported");
    result = 1;
    goto done;
  }
  tensor->flags = 0;
  if (anydev_buffer_from_dlpack_versioned(ctx, tensor, &back) != ANYDEV_SUCCESS) {
    result = failed(message, capacity, "anydev_buffer_from_dlpack_versioned");
    goto done;
  }
  tensor = NULL; /* anydev owns it now */
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  if (anydev_buffer_get_info(back, &info) != ANYDEV_SUCCESS || info.dtype != ANYDEV_DTYPE_BOOL ||
      info.count != 3) {
    snprintf(message, capacity, "the imported buffer is not 3 bools");
    result = 1;
  }
done:
  if (tensor != NULL) tensor->deleter(tensor);
  anydev_buffer_release(back);
  anydev_buffer_release(buf);
  anydev_context_release(ctx);
  return result;
}
