// SPDX-License-Identifier: Apache-2.0
// anydev-register-bench: registered host memory beside pinned host buffers
// of the same size, on one backend, in the same run (docs/performance.md,
// "Registered host memory"). Prints a Markdown table.
//
//   register   register_host_memory + release of the caller's (already
//              faulted-in) memory, until the registration is undone (its
//              callback ran); baseline: allocating a pinned host buffer of
//              the same size and releasing it, with the caching pool off
//              (ANYDEV_POOL=0), so each allocation reaches the backend
//   copy       bandwidth of a copy from registered memory to a device
//              buffer; baseline: the same copy from a pinned host buffer
//
// Sizes 1 MiB .. 1 GiB (x4); the median of the passes (more for the small
// sizes). Usage: anydev-register-bench [api] (default cpu).
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Undone {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  static void callback(void* self) {
    auto* u = static_cast<Undone*>(self);
    std::lock_guard lock(u->mutex);
    u->done = true;
    u->cv.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return done; });
    done = false;
  }
};

std::string size_text(std::size_t bytes) {
  return bytes >= (std::size_t{1} << 30) ? std::to_string(bytes >> 30) + " GiB"
                                         : std::to_string(bytes >> 20) + " MiB";
}

}  // namespace

int main(int argc, char** argv) {
  ::setenv("ANYDEV_POOL", "0", 1);  // before anydev reads it
  const std::string api = argc > 1 ? argv[1] : "cpu";
  try {
    anydev::DeviceContext ctx(0, api.c_str());
    std::printf("Registered host memory on %s (%s)\n\n", api.c_str(), ctx.name().c_str());
    std::printf(
        "| size | register + unregister | pinned alloc + free | ratio | copy from "
        "registered | copy from pinned | ratio |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (std::size_t bytes = std::size_t{1} << 20; bytes <= (std::size_t{1} << 30); bytes *= 4) {
      const int passes = bytes <= (std::size_t{16} << 20) ? 21 : 5;
      void* memory =
          ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (memory == MAP_FAILED) {
        std::fprintf(stderr, "mmap of %zu bytes failed\n", bytes);
        return 1;
      }
      std::memset(memory, 1, bytes);  // the caller's memory is in use already
      Undone undone;
      std::vector<double> reg, pinned;
      for (int i = 0; i < passes; ++i) {
        auto start = Clock::now();
        {
          auto h = ctx.register_host_memory(static_cast<std::uint8_t*>(memory), bytes,
                                            &Undone::callback, &undone);
        }
        undone.wait();
        reg.push_back(seconds_since(start));
        start = Clock::now();
        { auto h = ctx.enqueue_create_host_buffer<std::uint8_t>(bytes); }
        ctx.synchronize();
        pinned.push_back(seconds_since(start));
      }
      auto device = ctx.enqueue_create_buffer<std::uint8_t>(bytes);
      auto pinned_buffer = ctx.enqueue_create_host_buffer<std::uint8_t>(bytes);
      std::vector<double> from_reg, from_pinned;
      {
        auto h = ctx.register_host_memory(static_cast<std::uint8_t*>(memory), bytes,
                                          &Undone::callback, &undone);
        for (int i = 0; i < passes; ++i) {
          auto start = Clock::now();
          device.enqueue_copy_from(h);
          ctx.synchronize();
          from_reg.push_back(seconds_since(start));
          start = Clock::now();
          device.enqueue_copy_from(pinned_buffer);
          ctx.synchronize();
          from_pinned.push_back(seconds_since(start));
        }
      }
      undone.wait();
      const double r = median(reg), p = median(pinned);
      const double gib = static_cast<double>(bytes) / double(1 << 30);
      const double br = gib / median(from_reg), bp = gib / median(from_pinned);
      std::printf("| %s | %.1f us | %.1f us | %.2f | %.2f GiB/s | %.2f GiB/s | %.2f |\n",
                  size_text(bytes).c_str(), r * 1e6, p * 1e6, r / p, br, bp, br / bp);
      std::fflush(stdout);
      ::munmap(memory, bytes);
    }
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "anydev-register-bench: %s\n", e.what());
    return e.status() == anydev::Status::backend_unavailable ? 77 : 1;
  }
  return 0;
}
