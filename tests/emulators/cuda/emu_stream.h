// SPDX-License-Identifier: Apache-2.0
// Streams and events of the emulator.
//
// A Stream runs its operations in order on its own worker thread, each after
// ANYDEV_CUDA_EMULATOR_DELAY_US, so work really is asynchronous: a missing
// synchronization shows up as stale data. The first failure of an operation
// is kept and returned (then cleared) by the next cuStreamSynchronize.
// An Event numbers its records: it is complete when its latest record has
// run, and a wait captures the record that was latest when it was enqueued. Streams and events are
// shared (the registry, queued operations and the worker hold them); all members are thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_CUDA_EMU_STREAM_H_
#define ANYDEV_TESTS_EMULATORS_CUDA_EMU_STREAM_H_

#include <cuda.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "emu_state.h"

namespace anydev_emu {

class Stream {
 public:
  explicit Stream(Context* context) : context_(context) {}
  Context* context() const { return context_; }

  // Starts the worker thread, which shares ownership of the stream.
  static std::shared_ptr<Stream> create(Context* context);

  // `op` runs on the worker; a CUresult other than CUDA_SUCCESS is the
  // stream's asynchronous error (reported with `api`), and a sticky one
  // (is_sticky) breaks the stream's context.
  void enqueue(const char* api, std::function<CUresult()> op);
  // Waits until every queued operation ran; returns and clears the first error.
  CUresult synchronize();
  // The worker finishes the queue, then exits.
  void retire();

 private:
  struct Task {
    const char* api = "";
    std::function<CUresult()> op;
  };
  void run();

  Context* const context_;
  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable idle_;
  std::deque<Task> queue_;
  bool busy_ = false;
  bool retired_ = false;
  CUresult error_ = CUDA_SUCCESS;
};

struct Event {
  explicit Event(Context* c) : context(c) {}
  Context* const context;
  std::mutex mutex;
  std::condition_variable done;
  std::uint64_t recorded = 0;       // records accepted; the latest is the one that counts
  std::set<std::uint64_t> pending;  // records queued that have not run yet
  bool is_done(std::uint64_t record) const { return pending.count(record) == 0; }
};

using StreamRef = std::shared_ptr<Stream>;
using EventRef = std::shared_ptr<Event>;

// The stream behind `handle`: a live created stream, or for 0,
// CU_STREAM_LEGACY and CU_STREAM_PER_THREAD the default stream of the current
// context. CUDA_ERROR_INVALID_HANDLE (reported with `api`) otherwise; the
// sticky error when the stream's context is broken (emu_state.h).
CUresult lookup_stream(CUstream handle, const char* api, StreamRef* out);
CUstream register_object(const StreamRef& stream);
// Removes a created stream from the registry; INVALID_HANDLE when unknown.
CUresult unregister(CUstream handle, StreamRef* out);

// A live event; INVALID_HANDLE when unknown, the sticky error when its
// context is broken.
CUresult lookup_event(CUevent handle, const char* api, EventRef* out);
CUevent register_object(const EventRef& event);
CUresult unregister(CUevent handle, EventRef* out);

}  // namespace anydev_emu

#endif  // ANYDEV_TESTS_EMULATORS_CUDA_EMU_STREAM_H_
