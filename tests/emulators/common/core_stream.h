// SPDX-License-Identifier: Apache-2.0
// Streams and events of the emulator.
//
// A Stream runs its operations in order on its own worker thread, each after
// <prefix>DELAY_US, so work really is asynchronous: a missing synchronization
// shows up as stale data. The first failure of an operation is kept and
// returned (then cleared) by the next synchronize(). An Event numbers its
// records: it is complete when its latest record has run, and a wait captures
// the record that was latest when it was enqueued. Streams and events are
// shared (the registry, queued operations and the worker hold them); all
// members are thread-safe. Handles are opaque pointers from a counter, never
// reused, so a destroyed handle is always recognized.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_STREAM_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_STREAM_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "core_device.h"
#include "core_status.h"

namespace anydev_emu::core {

class Stream {
 public:
  explicit Stream(Context* context) : context_(context) {}
  Context* context() const { return context_; }

  // Starts the worker thread, which shares ownership of the stream.
  static std::shared_ptr<Stream> create(Context* context);

  // `op` runs on the worker; a Status other than success is the stream's
  // asynchronous error (reported with `api`), and a sticky one (is_sticky)
  // breaks the stream's context.
  void enqueue(const char* api, std::function<Status()> op);
  // Waits until every queued operation ran; returns and clears the first error.
  Status synchronize();
  // not_ready while operations are queued or running; else as synchronize().
  Status query();
  // Waits until every queued operation ran; keeps the error for synchronize().
  void drain();
  // The worker finishes the queue, then exits.
  void retire();

 private:
  struct Task {
    const char* api = "";
    std::function<Status()> op;
  };
  void run();

  Context* const context_;
  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable idle_;
  std::deque<Task> queue_;
  bool busy_ = false;
  bool retired_ = false;
  Status error_ = Status::success;
};

struct IpcPage;  // core_share.h

struct Event {
  explicit Event(Context* c) : context(c) {}
  Context* const context;
  // An interprocess event keeps its records in this page instead; `creator`:
  // this event made the page (its destruction unlinks the page's name).
  std::shared_ptr<IpcPage> ipc;
  bool creator = false;
  std::mutex mutex;
  std::condition_variable done;
  std::uint64_t recorded = 0;       // records accepted; the latest is the one that counts
  std::set<std::uint64_t> pending;  // records queued that have not run yet
  bool is_done(std::uint64_t record) const { return pending.count(record) == 0; }
  // Created with timing (CUDA without CU_EVENT_DISABLE_TIMING): each record
  // reads the steady clock when it runs, into stamp_ns for stamp_record.
  bool timing = false;
  std::uint64_t stamp_record = 0;
  std::int64_t stamp_ns = 0;
};

using StreamRef = std::shared_ptr<Stream>;
using EventRef = std::shared_ptr<Event>;

// The default (null) stream of `context`'s device, created at first use.
StreamRef default_stream(Context* context);

// A live created stream; invalid_handle (reported with `api`) otherwise; the
// sticky error when the stream's context is broken.
Status lookup_stream(const void* handle, const char* api, StreamRef* out);
void* register_object(const StreamRef& stream);
// Unregisters (invalid_handle when unknown) and retires a stream: queued work still runs, as on a
// real device. Then the sticky error of its context (destroyed all the same).
Status destroy_stream(const void* handle, const char* api);

// Waits until every stream (created or default) has run what was queued on
// it so far: a device-wide synchronization that keeps each stream's error.
void drain_streams();

// A live event; invalid_handle when unknown, the sticky error when its
// context is broken.
Status lookup_event(const void* handle, const char* api, EventRef* out);
void* register_object(const EventRef& event);
// Unregisters an event (invalid_handle when unknown); a queued record keeps
// it alive. Then the sticky error of its context.
Status destroy_event(const void* handle, const char* api);

// Records `event` on `stream` (invalid_handle when they belong to different
// devices); waits, queries and synchronizes as the Event comment says.
Status record_event(const EventRef& event, const StreamRef& stream, const char* api);
Status query_event(const EventRef& event);
void synchronize_event(const EventRef& event);
// The milliseconds between the latest records of two timing events, as
// cuEventElapsedTime: invalid_handle for an event without timing, never
// recorded, or of another device than `start`; not_ready while either
// latest record has not run.
Status elapsed_time(const EventRef& start, const EventRef& end, float* ms);
// `stream` waits for the latest record of `event` as of now.
void wait_event(const StreamRef& stream, const EventRef& event);

}  // namespace anydev_emu::core

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_STREAM_H_
