// SPDX-License-Identifier: Apache-2.0
// A cpu event: a capture of (stream state, sequence number) taken by record
// (or, for an event shared between processes, its event page: cpu_share.h).
//
// An event never recorded is complete. Recording captures the tasks enqueued
// on the stream so far; recording again replaces the capture. The event
// shares ownership of the captured stream's state, so the stream may be
// destroyed first. Thread-safe: record, query, synchronize and capture may
// run concurrently from any threads.
#ifndef ANYDEV_BACKENDS_CPU_CPU_EVENT_H_
#define ANYDEV_BACKENDS_CPU_CPU_EVENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "cpu_share.h"
#include "cpu_stream.h"

namespace anydev::cpu {

// A timing event's clock reading for one record: set (steady clock, in
// nanoseconds) by a task queued behind the recorded work when that task
// runs, i.e. when the work before it has completed. -1 until then.
// Shared by the event and the queued task; thread-safe.
struct TimeStamp {
  std::atomic<std::int64_t> ns{-1};
};

class Event {
 public:
  Event() = default;
  // `timing`: records queue a TimeStamp task (elapsed_ms); `blocking`:
  // synchronize sleeps in the OS at once instead of spinning first.
  Event(bool timing, bool blocking) : timing_(timing), blocking_(blocking) {}

  // What the event waits for; `stream` is null when there is nothing to wait
  // for (never recorded, or recorded on an empty stream).
  struct Capture {
    std::shared_ptr<StreamState> stream;
    std::uint64_t seq = 0;
  };

  void record(const std::shared_ptr<StreamState>& stream);
  bool is_complete() const;
  void synchronize() const;
  Capture capture() const;
  bool timing() const { return timing_; }
  // The stamp of the latest record (null: never recorded, or not timing).
  std::shared_ptr<TimeStamp> stamp() const;

  // Set for an event shared between processes (cpu_share.h), which records,
  // answers and waits through its event page instead; set once, at creation.
  std::unique_ptr<SharedEvent> shared;

 private:
  mutable std::mutex mutex_;
  Capture capture_;
  std::shared_ptr<TimeStamp> stamp_;
  const bool timing_ = false;
  const bool blocking_ = false;
};

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_EVENT_H_
