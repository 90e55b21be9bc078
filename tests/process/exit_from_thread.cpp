// SPDX-License-Identifier: Apache-2.0
// exit() called on another thread while the main thread keeps releasing
// buffers and streams: the process must end (exit code 0), not wait for a
// release queue that the main thread keeps filling. Usage:
//   anydev-exit-from-thread BACKEND
// Prints "SKIPPED: ..." and exits 0 when BACKEND has no device here.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "anydev/anydev.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
    return 2;
  }
  anydev_context_t ctx = nullptr;
  if (anydev_context_create(argv[1], 0, &ctx) != ANYDEV_SUCCESS) {
    std::printf("SKIPPED: %s: %s\n", argv[1], anydev_last_error_message());
    return 0;
  }
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::printf("exit(0) from a second thread\n");
    std::fflush(stdout);
    std::exit(0);
  }).detach();
  // Releases keep coming until the process ends: streams with work still
  // running (destroyed after it) and buffers last used there (freed after
  // it), so that the reclaimer always has something waiting.
  const std::uint32_t pattern = 0x5a5a5a5a;
  for (;;) {
    anydev_stream_t stream = nullptr;
    if (anydev_context_create_stream(ctx, &stream) != ANYDEV_SUCCESS) continue;
    anydev_context_t on_stream = nullptr;
    if (anydev_context_with_stream(ctx, stream, &on_stream) == ANYDEV_SUCCESS) {
      anydev_buffer_t buf = nullptr;
      if (anydev_buffer_create(on_stream, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT32, 1u << 14,
                               &buf) == ANYDEV_SUCCESS) {
        anydev_enqueue_fill(on_stream, buf, &pattern, sizeof(pattern));
        anydev_buffer_release(buf);
      }
      anydev_context_release(on_stream);
    }
    anydev_stream_release(stream);
  }
}
