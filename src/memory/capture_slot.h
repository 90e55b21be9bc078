// SPDX-License-Identifier: Apache-2.0
// CaptureSlot: the part of a Stream that says whether a capture is
// recording the copies and fills enqueued on it instead of running them
// (api/capture.h holds the capture itself). The enqueue path reads one
// relaxed atomic flag; everything else happens under the slot's mutex on
// the cold path.
//
// Ownership: the slot owns the running capture's session, so a stream that
// goes away while capturing ends its capture. Thread safety: `active` may
// be read without the mutex (a stale read is settled under the mutex);
// `session` and changes of `active` are guarded by `mutex`.
#ifndef ANYDEV_SRC_MEMORY_CAPTURE_SLOT_H_
#define ANYDEV_SRC_MEMORY_CAPTURE_SLOT_H_

#include <atomic>
#include <memory>
#include <mutex>

namespace anydev::core {

// What a running capture keeps (defined by api/capture.cpp). Destroying it
// ends the capture.
class CaptureSession {
 public:
  virtual ~CaptureSession() = default;
};

class CaptureSlot {
  // First, so that it shares a cache line with the Stream fields an
  // enqueue reads anyway.
  std::atomic<bool> active_{false};

 public:
  CaptureSlot() = default;
  // Streams are moved only while they are made, before anything can
  // capture on them: the new slot starts empty.
  CaptureSlot(CaptureSlot&&) noexcept {}
  CaptureSlot& operator=(CaptureSlot&&) = delete;
  CaptureSlot(const CaptureSlot&) = delete;
  CaptureSlot& operator=(const CaptureSlot&) = delete;

  // The only cost of capture on the normal enqueue path.
  bool active() const noexcept { return active_.load(std::memory_order_relaxed); }

  // Both with `mutex` held.
  void start(std::unique_ptr<CaptureSession> session) noexcept {
    session_ = std::move(session);
    active_.store(true, std::memory_order_relaxed);
  }
  std::unique_ptr<CaptureSession> stop() noexcept {
    active_.store(false, std::memory_order_relaxed);
    return std::move(session_);
  }
  CaptureSession* session() const noexcept { return session_.get(); }  // mutex held

  std::mutex mutex;

 private:
  std::unique_ptr<CaptureSession> session_;  // guarded by mutex
};

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_CAPTURE_SLOT_H_
