// SPDX-License-Identifier: Apache-2.0
// A buffer create that runs out of memory after its block came from the
// caching pool gives the block back: no pool bytes stay in use once every
// buffer is released. A child process fills the pool's cache, then lowers
// RLIMIT_AS to what it has mapped, so that creates take cached blocks
// (nothing to map) until the core's records need a new chunk and the kernel
// refuses it. Skipped under the sanitizers, whose runtimes reserve address
// space far past any such limit (and keep records on the heap).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "anydev/anydev.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ANYDEV_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ANYDEV_UNDER_SANITIZER 1
#endif
#endif

namespace {

constexpr int kNoExhaustion = 77;
constexpr std::size_t kBuffers = 40000;

std::size_t mapped_bytes() {
  long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::size_t bytes_in_use(anydev_context_t ctx) {
  anydev_pool_stats_t stats{};
  stats.struct_size = sizeof stats;
  if (anydev_context_pool_stats(ctx, ANYDEV_MEMORY_DEVICE, &stats) != ANYDEV_SUCCESS) return ~0ull;
  return stats.bytes_in_use;
}

int child_checks() {
  anydev_context_t ctx = nullptr;
  if (anydev_context_create("cpu", 0, &ctx) != ANYDEV_SUCCESS) return 10;
  // Keep every block cached.
  if (anydev_context_set_pool_release_threshold(ctx, ANYDEV_MEMORY_DEVICE, SIZE_MAX) !=
      ANYDEV_SUCCESS) {
    return 11;
  }
  std::vector<anydev_buffer_t> buffers(kBuffers, nullptr);
  for (anydev_buffer_t& b : buffers) {
    if (anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 64, &b) !=
        ANYDEV_SUCCESS) {
      return 12;
    }
  }
  for (anydev_buffer_t& b : buffers) {
    anydev_buffer_release(b);
    b = nullptr;
  }
  if (anydev_context_synchronize(ctx) != ANYDEV_SUCCESS) return 13;
  // Nothing more may be mapped; the cache holds a block for every create.
  rlimit saved{};
  if (getrlimit(RLIMIT_AS, &saved) != 0) return 14;
  const rlimit lowered{mapped_bytes() + (std::size_t{1} << 20), saved.rlim_max};
  if (setrlimit(RLIMIT_AS, &lowered) != 0) return 15;
  std::size_t made = 0;
  anydev_status_t failed = ANYDEV_SUCCESS;
  for (; made < kBuffers; ++made) {
    failed =
        anydev_buffer_create(ctx, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 64, &buffers[made]);
    if (failed != ANYDEV_SUCCESS) break;
  }
  if (setrlimit(RLIMIT_AS, &saved) != 0) return 16;
  if (failed == ANYDEV_SUCCESS) return kNoExhaustion;
  if (failed != ANYDEV_ERROR_OUT_OF_MEMORY) {
    std::fprintf(stderr, "create %zu: %s\n", made, anydev_last_error_message());
    return 17;
  }
  std::fprintf(stderr, "create %zu failed as expected: %s\n", made, anydev_last_error_message());
  for (std::size_t i = 0; i < made; ++i) anydev_buffer_release(buffers[i]);
  if (anydev_context_synchronize(ctx) != ANYDEV_SUCCESS) return 18;
  const std::size_t left = bytes_in_use(ctx);
  if (left != 0) {
    std::fprintf(stderr, "%zu pool bytes still in use after every buffer was released\n", left);
    return 19;
  }
  anydev_context_release(ctx);
  return 0;
}

TEST(BufferCreateOutOfMemory, TheBlockOfACreateThatFailsGoesBackToThePool) {
#ifdef ANYDEV_UNDER_SANITIZER
  GTEST_SKIP() << "the sanitizer runtimes reserve address space past any RLIMIT_AS this test "
                  "could set, and keep the core's records on the heap";
#endif
  std::fflush(stdout);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::fflush(stderr);
    _exit(child_checks());
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child status " << status;
  if (WEXITSTATUS(status) == kNoExhaustion) {
    GTEST_SKIP() << "every create succeeded under the lowered RLIMIT_AS: the records never "
                    "needed a new chunk here";
  }
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "child check " << WEXITSTATUS(status)
      << " failed (19: pool bytes left in use; its stderr above says how many)";
}

}  // namespace
