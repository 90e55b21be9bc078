// SPDX-License-Identifier: Apache-2.0
// Log messages are never handed to the embedder's callback while the
// calling thread holds a core lock: the callback may call the API, which
// takes those locks. Every core lock (CoreMutex, SmallMutex) counts itself
// here while held; a message logged meanwhile waits in a per-thread queue
// (logging.cpp) and is delivered when the thread's last core lock is
// released. Per thread, so thread-safe; costs two thread-local updates per
// lock and unlock.
#ifndef ANYDEV_SRC_SUPPORT_LOG_HOLD_H_
#define ANYDEV_SRC_SUPPORT_LOG_HOLD_H_

#include <cstdint>

namespace anydev::core {

struct LogHold {
  std::uint32_t locks_held = 0;  // core locks this thread holds now
  std::uint32_t queued = 0;      // messages waiting for locks_held to reach 0
};

// initial-exec: the lock paths read it without a call into the dynamic
// linker; libanydev.so's one small variable fits glibc's static TLS surplus
// also when it is loaded with dlopen (by Python, say).
extern thread_local constinit LogHold t_log_hold [[gnu::tls_model("initial-exec")]];

// Delivers this thread's queued messages, in order (logging.cpp). Called
// with no core lock held.
[[gnu::cold]] void deliver_held_log_messages() noexcept;

inline void note_core_lock_taken() noexcept { ++t_log_hold.locks_held; }

inline void note_core_lock_released() noexcept {
  LogHold& hold = t_log_hold;
  if (--hold.locks_held == 0 && hold.queued != 0) [[unlikely]]
    deliver_held_log_messages();
}

inline bool core_lock_held() noexcept { return t_log_hold.locks_held != 0; }

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_LOG_HOLD_H_
