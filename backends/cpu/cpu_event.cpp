// SPDX-License-Identifier: Apache-2.0
#include "cpu_event.h"

#include <utility>

namespace anydev::cpu {

void Event::record(const std::shared_ptr<StreamState>& stream) {
  const std::uint64_t seq = stream->submitted();
  Capture next{seq == 0 ? nullptr : stream, seq};
  {
    std::lock_guard<std::mutex> hold(mutex_);
    std::swap(capture_, next);
  }
  // `next` now holds the previous capture, released outside the lock.
}

bool Event::is_complete() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return capture_.stream == nullptr || capture_.stream->is_complete(capture_.seq);
}

void Event::synchronize() const {
  const Capture current = capture();
  if (current.stream != nullptr) current.stream->wait_until_complete(current.seq);
}

Event::Capture Event::capture() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return capture_;
}

}  // namespace anydev::cpu
