// SPDX-License-Identifier: Apache-2.0
#include "cpu_event.h"

#include <chrono>
#include <memory>
#include <optional>
#include <utility>

namespace anydev::cpu {

namespace {

// Runs on the stream's worker once the work recorded before it completed.
std::optional<TaskFailure> stamp_now(void* user) {
  auto* held = static_cast<std::shared_ptr<TimeStamp>*>(user);
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  (*held)->ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(),
                    std::memory_order_release);
  delete held;
  return std::nullopt;
}

}  // namespace

void Event::record(const std::shared_ptr<StreamState>& stream) {
  std::shared_ptr<TimeStamp> stamp;
  std::uint64_t seq = stream->submitted();
  if (timing_) {
    stamp = std::make_shared<TimeStamp>();
    if (stream->is_complete(seq)) {
      // Everything before the record has completed: it completes now, with
      // no task (and no worker to wake) in between.
      static_cast<void>(stamp_now(new std::shared_ptr<TimeStamp>(stamp)));
    } else {
      auto held = std::make_unique<std::shared_ptr<TimeStamp>>(stamp);
      seq = stream->enqueue(Task{HostFunctionTask{&stamp_now, held.get()}});
      static_cast<void>(held.release());  // the task owns it now
    }
  }
  Capture next{seq == 0 ? nullptr : stream, seq};
  {
    std::lock_guard<std::mutex> hold(mutex_);
    std::swap(capture_, next);
    std::swap(stamp_, stamp);
  }
  // `next` and `stamp` now hold the previous record's, released outside the lock.
}

std::shared_ptr<TimeStamp> Event::stamp() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return stamp_;
}

bool Event::is_complete() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return capture_.stream == nullptr || capture_.stream->is_complete(capture_.seq);
}

void Event::synchronize() const {
  const Capture current = capture();
  if (current.stream != nullptr) current.stream->wait_until_complete(current.seq, !blocking_);
}

Event::Capture Event::capture() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return capture_;
}

}  // namespace anydev::cpu
