// SPDX-License-Identifier: Apache-2.0
#include "support/fork_guard.h"

#include <pthread.h>

namespace anydev::core {

namespace detail {
std::atomic<std::uint64_t> g_fork_generation{0};
}  // namespace detail

namespace {

void on_fork_child() { detail::g_fork_generation.fetch_add(1, std::memory_order_relaxed); }

// Registered when libanydev.so is loaded (this file is part of the core, so
// its initializers always run).
[[maybe_unused]] const bool g_registered = [] {
  pthread_atfork(nullptr, nullptr, on_fork_child);
  return true;
}();

}  // namespace

}  // namespace anydev::core
