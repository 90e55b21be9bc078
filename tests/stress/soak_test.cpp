// SPDX-License-Identifier: Apache-2.0
// Soak: create/release cycles of contexts, streams (used and unused), events
// and buffers on the cpu backend, asserting that the process's threads
// (/proc/self/task), memory mappings (/proc/self/maps), file descriptors
// (/proc/self/fd) and resident memory (VmRSS) stay bounded: none of them may
// grow with the number of cycles. Before the cpu backend ran streams on a
// fixed worker pool, every stream owned a thread and churn ran the process
// out of threads after ~34,000 stream cycles.
//
// 10^5 cycles take a few seconds in a release build; ANYDEV_SOAK_ROUNDS sets
// the number (CMake sets a smaller one for sanitizer builds).
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "anydev/anydev.h"

namespace {

int Rounds() {
  const char* value = std::getenv("ANYDEV_SOAK_ROUNDS");
  const int rounds = value != nullptr ? std::atoi(value) : 0;
  return rounds > 0 ? rounds : 100000;
}

long CountEntries(const char* dir_path) {
  DIR* dir = opendir(dir_path);
  if (dir == nullptr) return -1;
  long count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

long CountLines(const char* path) {
  std::FILE* file = std::fopen(path, "re");
  if (file == nullptr) return -1;
  long lines = 0;
  for (int c = std::fgetc(file); c != EOF; c = std::fgetc(file)) lines += c == '\n';
  std::fclose(file);
  return lines;
}

long RssKiB() {
  std::FILE* file = std::fopen("/proc/self/status", "re");
  if (file == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, file) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) kib = std::strtol(line + 6, nullptr, 10);
  }
  std::fclose(file);
  return kib;
}

struct Usage {
  long threads, maps, fds, rss_kib;
};

Usage Measure() {
  return {CountEntries("/proc/self/task"), CountLines("/proc/self/maps"),
          CountEntries("/proc/self/fd"), RssKiB()};
}

std::string Describe(const Usage& u) {
  return std::to_string(u.threads) + " threads, " + std::to_string(u.maps) + " mappings, " +
         std::to_string(u.fds) + " fds, " + std::to_string(u.rss_kib) + " KiB resident";
}

#define OK(call) ASSERT_EQ((call), ANYDEV_SUCCESS) << #call << ": " << anydev_last_error_message()

// One cycle: a context; an unused stream; a used stream (a fill through a
// context on it, an event recorded there, another stream waiting for it);
// host and device buffers. Everything is released by the end.
void Cycle(anydev_context_t base, int round) {
  anydev_context_t ctx = nullptr;
  OK(anydev_context_create("cpu", 0, &ctx));

  anydev_stream_t unused = nullptr;
  OK(anydev_context_create_stream(ctx, &unused));
  OK(anydev_stream_release(unused));

  anydev_stream_t used = nullptr;
  OK(anydev_context_create_stream(base, &used));
  anydev_context_t on_used = nullptr;
  OK(anydev_context_with_stream(base, used, &on_used));
  anydev_buffer_t host = nullptr, device = nullptr;
  OK(anydev_buffer_create(on_used, ANYDEV_MEMORY_HOST, ANYDEV_DTYPE_UINT8, 256 + round % 1024,
                          &host));
  OK(anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 4096, &device));
  const std::uint32_t pattern = 0xA5A5A5A5u;
  OK(anydev_enqueue_fill(on_used, host, &pattern, 1));
  OK(anydev_enqueue_fill(ctx, device, &pattern, 4));

  anydev_event_t event = nullptr;
  OK(anydev_context_create_event(on_used, &event));
  OK(anydev_stream_record_event(used, event));
  anydev_stream_t ctx_stream = nullptr;
  OK(anydev_context_stream(ctx, &ctx_stream));
  OK(anydev_stream_wait_event(ctx_stream, event));
  OK(anydev_stream_release(ctx_stream));
  OK(anydev_event_release(event));
  if (round % 2 == 0) {  // and half the time not
    OK(anydev_context_synchronize(ctx));
  }

  OK(anydev_buffer_release(host));
  OK(anydev_buffer_release(device));
  OK(anydev_context_release(on_used));
  OK(anydev_stream_release(used));
  OK(anydev_context_release(ctx));
}

TEST(Soak, CreateReleaseCyclesKeepThreadsMappingsFdsAndMemoryBounded) {
  const Usage start = Measure();
  ASSERT_GT(start.threads, 0) << "/proc/self is not readable";
  const int rounds = Rounds();
  const int warmup = rounds / 10 > 0 ? rounds / 10 : 1;

  anydev_context_t base = nullptr;
  OK(anydev_context_create("cpu", 0, &base));
  for (int i = 0; i < warmup; ++i) {
    Cycle(base, i);
    if (HasFatalFailure()) return;
  }
  OK(anydev_context_synchronize(base));
  const Usage warm = Measure();
  for (int i = warmup; i < rounds; ++i) {
    Cycle(base, i);
    if (HasFatalFailure()) return;
  }
  OK(anydev_context_synchronize(base));
  const Usage end = Measure();
  OK(anydev_context_release(base));

  std::printf("soak: %d cycles\n  start: %s\n  warm:  %s\n  end:   %s\n", rounds,
              Describe(start).c_str(), Describe(warm).c_str(), Describe(end).c_str());
  // The cpu backend's threads: its stream workers (at most 8), its split
  // helpers (one fewer than the CPUs) and the core's reclaimer.
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  EXPECT_LE(end.threads - start.threads, 8 + cpus + 1) << Describe(end);
  // Nothing may grow with the cycles after the warm-up (slack for the
  // reclaimer's backlog, the pool's cache and allocator noise).
  EXPECT_LE(end.threads, warm.threads + 2);
  EXPECT_LE(end.maps, warm.maps + 64);
  EXPECT_LE(end.fds, warm.fds + 4);
  EXPECT_LE(end.rss_kib, warm.rss_kib + 64 * 1024);
}

}  // namespace
