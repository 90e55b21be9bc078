// SPDX-License-Identifier: Apache-2.0
// A small program that says what anydev made of its environment, for
// plugin_trust_test.cpp, which runs it under chosen conditions (a plugin
// folder anyone may write to; set-user-ID, where the process is in secure
// mode). It prints, one per line:
//
//   at_secure=<getauxval(AT_SECURE)>
//   backend=<name>|<available 0/1>|<reason>   for every known backend
//   used=<backend>                            the one it filled a buffer on
//
// With --use it fills a host buffer on the first available backend named in
// its arguments (so that ANYDEV_TRACE, when honoured, writes its file at
// exit). Exit status 0 unless a call failed unexpectedly.
#include <sys/auxv.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "anydev/anydev.h"

// A set-user-ID process cannot be traced, so LeakSanitizer (which traces
// its own process to scan it) cannot run in it; the parent's runs check
// leaks.
extern "C" __attribute__((visibility("default"))) int __lsan_is_turned_off() {
  return getauxval(AT_SECURE) != 0 ? 1 : 0;
}

namespace {

std::string one_line(const char* text) {
  std::string out = text != nullptr ? text : "";
  for (char& c : out) {
    if (c == '\n') c = ' ';
  }
  return out;
}

bool use(const char* backend) {
  anydev_context_t ctx = nullptr;
  if (anydev_context_create(backend, 0, &ctx) != ANYDEV_SUCCESS) return false;
  anydev_buffer_t buffer = nullptr;
  bool ok = anydev_buffer_create(ctx, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 64, &buffer) ==
            ANYDEV_SUCCESS;
  const unsigned char pattern = 0x5A;
  ok = ok && anydev_enqueue_fill(ctx, buffer, &pattern, 1) == ANYDEV_SUCCESS;
  ok = ok && anydev_context_synchronize(ctx) == ANYDEV_SUCCESS;
  if (buffer != nullptr) anydev_buffer_release(buffer);
  anydev_context_release(ctx);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("at_secure=%lu\n", getauxval(AT_SECURE));
  std::size_t count = 0;
  if (anydev_backend_count(&count) != ANYDEV_SUCCESS) return 2;
  for (std::size_t i = 0; i < count; ++i) {
    anydev_backend_info_t info{};
    info.struct_size = sizeof info;
    if (anydev_backend_info(i, &info) != ANYDEV_SUCCESS) return 2;
    std::printf("backend=%s|%d|%s\n", info.name, info.available, one_line(info.reason).c_str());
  }
  if (argc > 1 && std::strcmp(argv[1], "--use") == 0) {
    for (int i = 2; i < argc; ++i) {
      if (anydev_device_count(argv[i]) > 0 && use(argv[i])) {
        std::printf("used=%s\n", argv[i]);
        break;
      }
    }
  }
  return 0;
}
