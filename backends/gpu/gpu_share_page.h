// SPDX-License-Identifier: Apache-2.0
// The page that travels beside an interprocess event of a GPU backend: one
// memfd page holding the pid of the process that recorded the event last.
// The drivers' interprocess events say nothing when their recorder dies
// with the recorded work unfinished (the event then never completes), so a
// wait checks this pid and fails, naming it, instead of hanging.
//
// Ownership: an EventPidPage is owned by the Event that holds it (created by
// event_create_shareable or event_import, freed by event_destroy); it owns
// its mapping and fd. Thread-safety: the pid is an atomic in shared memory;
// the object's fields never change after creation.
#ifndef ANYDEV_BACKENDS_GPU_GPU_SHARE_PAGE_H_
#define ANYDEV_BACKENDS_GPU_GPU_SHARE_PAGE_H_

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

namespace anydev::gpu {

struct EventPidPage {
  struct Layout {
    char magic[8];
    std::atomic<std::int32_t> recorder_pid;
  };
  static_assert(std::atomic<std::int32_t>::is_always_lock_free, "atomics in shared memory");
  static constexpr char kMagic[8] = {'g', 'p', 'u', 'e', 'v', 'p', 'i', 'd'};

  int fd = -1;
  Layout* page = nullptr;

  ~EventPidPage() {
    if (page != nullptr) ::munmap(page, static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)));
    if (fd >= 0) ::close(fd);
  }

  void note_recorder() const {
    page->recorder_pid.store(static_cast<std::int32_t>(::getpid()), std::memory_order_release);
  }
  std::int32_t recorder() const { return page->recorder_pid.load(std::memory_order_acquire); }
  // Whether the last recorder is another process that no longer exists.
  bool recorder_gone() const {
    const std::int32_t pid = recorder();
    return pid > 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
  }
};

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_SHARE_PAGE_H_
