// The units of work a cpu stream runs, and how each runs.
//
// A Task is a value: the stream's queue owns it until its worker has run it.
// A WaitTask shares ownership of the state of the stream it waits for, so
// that stream may be destroyed while the wait is queued. Running a task is
// thread-safe as far as the task's own memory ranges do not race with other
// work, which the core's ordering guarantees.
#ifndef ANYDEV_BACKENDS_CPU_CPU_TASK_H_
#define ANYDEV_BACKENDS_CPU_CPU_TASK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "anydev/anydev.h"

namespace anydev::cpu {

class StreamState;

// Why a task failed; kept by its stream until the next synchronize.
struct TaskFailure {
  anydev_status_t status = ANYDEV_ERROR_INTERNAL;
  std::string message;
};

// Copies `bytes` from src to dst (ranges do not overlap).
struct CopyTask {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
};

// Writes the first `pattern_size` bytes of `pattern` repeatedly over `bytes`
// bytes at dst; the pattern is copied in, so the caller's may go away.
struct FillTask {
  void* dst = nullptr;
  std::size_t bytes = 0;
  unsigned char pattern[16] = {};
  std::size_t pattern_size = 0;
};

// Blocks the running stream until `stream` has completed task number `seq`.
struct WaitTask {
  std::shared_ptr<StreamState> stream;
  std::uint64_t seq = 0;
};

// Calls fn(user) on the stream's worker (used by tests, and by the core's
// future host callbacks). A returned failure becomes the stream's error.
struct HostFunctionTask {
  std::optional<TaskFailure> (*fn)(void* user) = nullptr;
  void* user = nullptr;
};

// One queued task; a value type, owned by the queue until it has run.
using Task = std::variant<CopyTask, FillTask, WaitTask, HostFunctionTask>;

// Runs `task` on the calling thread; nullopt on success.
std::optional<TaskFailure> run_task(Task& task);

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_TASK_H_
