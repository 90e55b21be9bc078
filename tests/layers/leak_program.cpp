// SPDX-License-Identifier: Apache-2.0
// Run by the layers.validate.leak* ctest entries with ANYDEV_VALIDATE set:
// `leak` deliberately leaks a context and a host buffer, so that the leak
// table printed at exit can be checked; `clean` releases everything.
#include <cstdio>
#include <cstring>

#include "anydev/anydev.h"

// LeakSanitizer (the ASan build) would report the planted leak itself.
extern "C" __attribute__((visibility("default"))) int __lsan_is_turned_off() { return 1; }

int main(int argc, char** argv) {
  const bool leak = argc > 1 && std::strcmp(argv[1], "leak") == 0;
  anydev_context_t ctx = nullptr;
  anydev_buffer_t buf = nullptr;
  if (anydev_context_create("cpu", 0, &ctx) != ANYDEV_SUCCESS ||
      anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT32, 16, &buf) !=
          ANYDEV_SUCCESS) {
    std::fprintf(stderr, "%s\n", anydev_last_error_message());
    return 1;
  }
  if (!leak) {
    anydev_buffer_release(buf);
    anydev_context_release(ctx);
  }
  return 0;
}
