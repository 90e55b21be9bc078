// SPDX-License-Identifier: Apache-2.0
#include "cpu_task.h"

#include <cstdint>
#include <cstring>

#include "cpu_copy.h"
#include "cpu_fill.h"
#include "cpu_parallel.h"
#include "cpu_store_probe.h"
#include "cpu_streaming.h"

namespace anydev::cpu {
namespace {

bool overlap(const void* a, const void* b, std::size_t bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + bytes && y < x + bytes;
}

// A copy or fill split across threads, with the store kind chosen once for
// the whole operation (cpu_streaming.h); every chunk starts at a multiple of
// 4096 bytes, hence at a fill pattern's first byte.
struct SplitCopy {
  const CopyTask* task;
  bool streaming;
};

struct SplitFill {
  const FillTask* task;
  bool streaming;
};

void copy_range(void* dst, const void* src, std::size_t bytes, bool streaming) {
  if (streaming) {
    copy_streaming(dst, src, bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

void copy_chunk(std::size_t offset, std::size_t length, void* context) {
  const auto& split = *static_cast<const SplitCopy*>(context);
  copy_range(static_cast<unsigned char*>(split.task->dst) + offset,
             static_cast<const unsigned char*>(split.task->src) + offset, length, split.streaming);
}

void fill_chunk(std::size_t offset, std::size_t length, void* context) {
  const auto& split = *static_cast<const SplitFill*>(context);
  fill_pattern(static_cast<unsigned char*>(split.task->dst) + offset, split.task->pattern,
               split.task->pattern_size, length, split.streaming);
}

void copy_unsplit(const CopyTask& task, bool streaming) {
  if (overlap(task.dst, task.src, task.bytes)) {
    // Never from the core (it rejects overlapping copies); memmove keeps it
    // defined should a caller of the backend table break the rule.
    std::memmove(task.dst, task.src, task.bytes);
  } else {
    copy_range(task.dst, task.src, task.bytes, streaming);
  }
}

void fill_unsplit(const FillTask& task, bool streaming) {
  fill_pattern(task.dst, task.pattern, task.pattern_size, task.bytes, streaming);
}

struct TaskRunner {
  std::optional<TaskFailure> operator()(CopyTask& task) const {
    const bool streaming = copy_streams(task.bytes, streaming_footprint());
    if (task.bytes >= kSplitCopyBytes && !overlap(task.dst, task.src, task.bytes)) {
      SplitCopy split{&task, streaming};
      split_work(task.bytes, copy_chunk, &split);
    } else {
      copy_unsplit(task, streaming);
    }
    return std::nullopt;
  }
  std::optional<TaskFailure> operator()(FillTask& task) const {
    const bool streaming = fill_task_streams(task);
    if (task.bytes >= kSplitFillBytes) {
      SplitFill split{&task, streaming};
      split_work(task.bytes, fill_chunk, &split);
    } else {
      fill_unsplit(task, streaming);
    }
    return std::nullopt;
  }
  std::optional<TaskFailure> operator()(WaitTask&) const {
    return TaskFailure{ANYDEV_ERROR_INTERNAL,
                       "a stream wait reached run_task; only its stream's worker runs it"};
  }
  std::optional<TaskFailure> operator()(HostFunctionTask& task) const { return task.fn(task.user); }
};

}  // namespace

bool may_run_inline(const Task& task) {
  if (const auto* copy = std::get_if<CopyTask>(&task)) return may_run_inline(*copy);
  if (const auto* fill = std::get_if<FillTask>(&task)) return may_run_inline(*fill);
  return false;  // waits and host functions may block: always on the worker
}

// Inline work (at most kInlineBytes) uses cached stores: its footprint is
// below the threshold of any last-level cache of 2 MiB or more, and the
// enqueue path stays as short as it was (scripts/hot-path-footprint).
[[gnu::hot]] void run_inline(const CopyTask& task) noexcept { copy_unsplit(task, false); }

[[gnu::hot]] void run_inline(const FillTask& task) noexcept { fill_unsplit(task, false); }

void run_inline(const Task& task) noexcept {
  if (const auto* copy = std::get_if<CopyTask>(&task)) {
    run_inline(*copy);
  } else {
    run_inline(std::get<FillTask>(task));
  }
}

bool may_run_on_caller(const Task& task) {
  return std::holds_alternative<CopyTask>(task) || std::holds_alternative<FillTask>(task);
}

bool fill_task_streams(const FillTask& task) {
  const std::size_t threshold = streaming_footprint();
  const bool string_form = has_string_form(task.pattern, task.pattern_size);
  // The probe (once per process) only for a fill whose store kind it decides.
  return fill_streams(
      task.bytes, threshold, string_form,
      string_form && task.bytes > threshold && cold_stores() == ColdStores::streaming_faster);
}

[[gnu::hot]] std::optional<TaskFailure> run_task(Task& task) {
  return std::visit(TaskRunner{}, task);
}

}  // namespace anydev::cpu
