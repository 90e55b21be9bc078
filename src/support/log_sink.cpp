// SPDX-License-Identifier: Apache-2.0
#include "support/log_sink.h"

#include <pthread.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>

#include "support/fork_guard.h"

namespace anydev::core {
namespace {

// The installed callback and who is running which one. A callback is never
// called with `mutex` held; `mutex` guards every field. `generation` counts
// installations; a call remembers the generation it entered, so that on
// return it is counted off the right total. Calls of the current callback
// are `running_current`; calls of any earlier one are `running_earlier`,
// which a setter waits to see reach zero. No allocation anywhere, so no
// path can fail.
struct SinkState {
  std::mutex mutex;
  std::condition_variable earlier_returned;
  anydev_log_callback_t callback = nullptr;
  void* user_data = nullptr;
  std::uint64_t generation = 0;
  std::size_t running_current = 0;
  std::size_t running_earlier = 0;
};

// How deep the calling thread is inside log callbacks (0 or 1: a message
// logged inside one goes to stderr, so no deeper).
thread_local int t_inside_callback = 0;

SinkState& state();

// fork(): no thread holds the mutex across fork (prepare takes it); the
// child has only the forking thread, so calls running in other threads of
// the parent will never return there: forget them.
void before_fork() { state().mutex.lock(); }
void after_fork_parent() { state().mutex.unlock(); }
void after_fork_child() {
  SinkState& s = state();
  s.running_current = 0;
  s.running_earlier = 0;
  // A waiter of the parent may have left the condition variable mid-wait:
  // start a fresh one (the old one is abandoned, never destroyed).
  new (&s.earlier_returned) std::condition_variable();
  s.mutex.unlock();
}

SinkState& state() {
  static ProcessObject<SinkState> instance;
  return instance.get(
      [] { return new SinkState(); },
      [](SinkState&) { pthread_atfork(before_fork, after_fork_parent, after_fork_child); });
}

// Made when libanydev.so is loaded: delivering a message never allocates
// (a release path out of memory logs through here, noexcept).
[[maybe_unused]] const bool g_sink_made_at_load = (state(), true);

}  // namespace

void set_log_callback(anydev_log_callback_t callback, void* user_data) noexcept {
  SinkState& s = state();
  std::unique_lock lock(s.mutex);
  s.callback = callback;
  s.user_data = callback != nullptr ? user_data : nullptr;
  ++s.generation;
  s.running_earlier += s.running_current;
  s.running_current = 0;
  // Inside a callback this thread's own call is among running_earlier (and
  // another thread's callback may be waiting for it): never wait there.
  if (t_inside_callback > 0) return;
  s.earlier_returned.wait(lock, [&s] { return s.running_earlier == 0; });
}

bool deliver_to_log_callback(anydev_log_severity_t severity, const char* message) noexcept {
  if (t_inside_callback > 0) return false;
  SinkState& s = state();
  anydev_log_callback_t callback;
  void* user_data;
  std::uint64_t entered;
  const std::uint64_t fork_entered = fork_generation();
  {
    std::lock_guard lock(s.mutex);
    if (s.callback == nullptr) return false;
    callback = s.callback;
    user_data = s.user_data;
    entered = s.generation;
    ++s.running_current;
  }
  ++t_inside_callback;
  callback(severity, message, user_data);
  --t_inside_callback;
  std::lock_guard lock(s.mutex);
  // A call that entered before a fork was forgotten in the child.
  if (fork_generation() != fork_entered) return true;
  if (entered == s.generation) {
    --s.running_current;
  } else if (--s.running_earlier == 0) {
    s.earlier_returned.notify_all();
  }
  return true;
}

}  // namespace anydev::core
