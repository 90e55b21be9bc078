#include "fork_guard.h"

#include <pthread.h>

#include <atomic>

namespace anydev::core {
namespace {

std::atomic<std::uint64_t> g_generation{0};

void on_fork_child() { g_generation.fetch_add(1, std::memory_order_relaxed); }

// Registered when libanydev.so is loaded.
const bool g_registered = [] {
  pthread_atfork(nullptr, nullptr, on_fork_child);
  return true;
}();

}  // namespace

std::uint64_t fork_generation() noexcept {
  (void)g_registered;
  return g_generation.load(std::memory_order_relaxed);
}

}  // namespace anydev::core
