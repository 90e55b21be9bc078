// SPDX-License-Identifier: Apache-2.0
// anydev-hot-path: one small fill + synchronize() and one small host->device
// copy + synchronize() on the cpu backend, each between two marker calls, for
// scripts/hot-path-footprint, which runs this program under valgrind's lackey
// and counts the instructions, cache lines and pages executed and touched
// between the markers. That footprint is what an enqueue costs when the
// caches are cold (an application doing other work between two calls); unlike
// a timing it is exact and the same on every run, so a change to the path
// shows in it at once.
//
// Prints the markers' addresses and that of anydev_enqueue_fill (so that the
// script can name the functions the path runs through).
#include <dlfcn.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>

#include "anydev/anydev.hpp"

extern "C" {
// The markers: never inlined, never folded into each other.
__attribute__((noinline)) void anydev_hot_path_begin(int which) { asm volatile("" ::"r"(which)); }
__attribute__((noinline)) void anydev_hot_path_end(int which) { asm volatile("" ::"r"(which)); }
}

int main() {
  try {
    const anydev::DeviceContext ctx(0, "cpu");
    auto device = ctx.enqueue_create_buffer<std::uint8_t>(64);
    auto host = ctx.enqueue_create_host_buffer<std::uint8_t>(64);
    ctx.enqueue_memset(host, std::uint8_t{1});
    // Warm: first-use initialization (function statics, lazy binding) is not
    // part of the path.
    for (int i = 0; i < 3; ++i) {
      ctx.enqueue_memset(device, std::uint8_t{0x5A});
      ctx.enqueue_copy(device, host);
      ctx.synchronize();
    }
    std::printf("begin %#" PRIxPTR "\nend %#" PRIxPTR "\nanydev_enqueue_fill %#" PRIxPTR "\n",
                reinterpret_cast<std::uintptr_t>(&anydev_hot_path_begin),
                reinterpret_cast<std::uintptr_t>(&anydev_hot_path_end),
                reinterpret_cast<std::uintptr_t>(dlsym(RTLD_DEFAULT, "anydev_enqueue_fill")));
    std::fflush(stdout);
    anydev_hot_path_begin(0);
    ctx.enqueue_memset(device, std::uint8_t{0x5A});
    ctx.synchronize();
    anydev_hot_path_end(0);
    anydev_hot_path_begin(1);
    ctx.enqueue_copy(device, host);
    ctx.synchronize();
    anydev_hot_path_end(1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "anydev-hot-path: %s\n", e.what());
    return 1;
  }
  return 0;
}
