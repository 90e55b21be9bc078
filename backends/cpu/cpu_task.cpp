#include "cpu_task.h"

#include <cstring>

#include "cpu_fill.h"
#include "cpu_stream.h"

namespace anydev::cpu {
namespace {

struct TaskRunner {
  std::optional<TaskFailure> operator()(CopyTask& task) const {
    // memmove costs the same as memcpy for disjoint ranges and stays defined
    // should a caller ever break the no-overlap rule.
    std::memmove(task.dst, task.src, task.bytes);
    return std::nullopt;
  }
  std::optional<TaskFailure> operator()(FillTask& task) const {
    fill_pattern(task.dst, task.pattern, task.pattern_size, task.bytes);
    return std::nullopt;
  }
  std::optional<TaskFailure> operator()(WaitTask& task) const {
    task.stream->wait_until_complete(task.seq);
    task.stream.reset();
    return std::nullopt;
  }
  std::optional<TaskFailure> operator()(HostFunctionTask& task) const { return task.fn(task.user); }
};

}  // namespace

std::optional<TaskFailure> run_task(Task& task) { return std::visit(TaskRunner{}, task); }

}  // namespace anydev::cpu
