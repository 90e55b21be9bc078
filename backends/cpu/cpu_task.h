// SPDX-License-Identifier: Apache-2.0
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

// Holds the running stream until `stream` has completed task number `seq`.
// Only the stream runs it: a pool worker never blocks on it but parks the
// stream on `stream` (StreamState::run_on_worker, cpu_stream.h).
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

// Copies and fills up to this size run on the enqueuing thread when their
// stream is idle (StreamState::enqueue): waking the worker costs about as
// much as a copy of this size from cache. Larger work is handed to the
// worker, so that enqueue returns at once and the caller's own work
// overlaps it.
inline constexpr std::size_t kInlineBytes = std::size_t{1} << 20;

// True for a task that may run inline: a copy or fill of at most
// kInlineBytes. Waits and host functions always run on the worker.
inline bool may_run_inline(const CopyTask& task) { return task.bytes <= kInlineBytes; }
inline bool may_run_inline(const FillTask& task) { return task.bytes <= kInlineBytes; }
bool may_run_inline(const Task& task);

// True for copies and fills of any size: what synchronize() may run on the
// caller's thread instead of waiting for the worker.
bool may_run_on_caller(const Task& task);

// Runs a copy or fill that may run inline on the calling thread, unsplit.
// Cannot fail.
void run_inline(const CopyTask& task) noexcept;
void run_inline(const FillTask& task) noexcept;
// The same for a task for which may_run_inline holds.
void run_inline(const Task& task) noexcept;

// Runs `task` on the calling thread; nullopt on success. Copies and fills of
// at least kSplitCopyBytes / kSplitFillBytes are split across threads
// (cpu_parallel.h). A WaitTask is the stream's to run: given one, returns
// an internal failure.
std::optional<TaskFailure> run_task(Task& task);

// Whether run_task writes this fill with streaming stores (cpu_streaming.h
// fill_streams; may run the store probe once, cpu_store_probe.h). Tests pin
// the decision with it without timing anything.
bool fill_task_streams(const FillTask& task);

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_TASK_H_
