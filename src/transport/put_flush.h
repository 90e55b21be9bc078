// SPDX-License-Identifier: Apache-2.0
// PutFlush: remote completion of the puts to one endpoint. A put's bytes
// are in the peer's memory once an endpoint flush posted after the put has
// completed. Rather than one flush (a round trip) per put, at most one flush
// is in flight per endpoint and it covers every put that began waiting
// before it; puts that begin waiting meanwhile wait for the next flush,
// which starts as soon as the current one has ended. Back-to-back puts thus
// share their flushes.
//
// Ownership: each Peer owns one PutFlush. The flush request is UCX's until
// settle() or release() frees it (never while in progress). Waiters are
// opaque pointers owned by the caller, which forget()s one that ends early.
// Threads: inside the communicator's passes (under the communicator's ucx_mutex);
// UCX runs the flush's callback inside progress, within the pass. Not
// thread-safe.
#ifndef ANYDEV_SRC_TRANSPORT_PUT_FLUSH_H_
#define ANYDEV_SRC_TRANSPORT_PUT_FLUSH_H_

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "transport/ucx_library.h"

namespace anydev::core::transport {

class PutFlush {
 public:
  // `waiter`'s puts to the endpoint have all completed locally: it waits
  // for a flush posted from now on.
  void wait(void* waiter) { waiters_.emplace_back(++posted_, waiter); }
  // Drops `waiter` (it ended without its flush). No-op when not waiting.
  void forget(void* waiter);
  // Whether a waiter is not covered by a flush and none is in flight.
  bool needs_flush() const { return request_ == nullptr && !ended_ && covers_ < posted_; }
  // Posts a flush of `ep` covering every waiter so far; UCX calls
  // `callback(request, status, user)` when it ends, which must call ended().
  // A flush that cannot be posted (no endpoint, an error) has ended at once.
  void start(const UcxLibrary& ucx, ucp_ep_h ep, ucp_send_nbx_callback_t callback, void* user);
  // The flush in flight ended with `status` (from its callback, or start).
  void ended(ucs_status_t status) {
    ended_ = true;
    status_ = status;
  }
  bool has_ended() const { return ended_; }
  // After has_ended(): frees the request and calls done(waiter, status) for
  // every waiter the flush covered, in the order they began waiting.
  template <class Done>
  void settle(const UcxLibrary& ucx, Done&& done) {
    if (!ended_) return;
    if (request_ != nullptr) ucx.ucp_request_free(request_);
    request_ = nullptr;
    ended_ = false;
    std::size_t covered = 0;
    while (covered < waiters_.size() && waiters_[covered].first <= covers_) ++covered;
    std::vector<std::pair<std::uint64_t, void*>> done_now(waiters_.begin(),
                                                          waiters_.begin() + covered);
    waiters_.erase(waiters_.begin(), waiters_.begin() + covered);
    for (auto& w : done_now) done(w.second, status_);
  }
  // At teardown (the endpoint closed): waits for the flush in flight,
  // progressing `worker`, until `deadline` at the latest, and frees it (one
  // still in flight then is UCX's to end, or the worker's destruction).
  void release(const UcxLibrary& ucx, ucp_worker_h worker,
               std::chrono::steady_clock::time_point deadline);

 private:
  void* request_ = nullptr;
  bool ended_ = false;
  ucs_status_t status_ = UCS_OK;
  std::uint64_t posted_ = 0;                              // tickets handed out
  std::uint64_t covers_ = 0;                              // the last ticket the latest flush covers
  std::vector<std::pair<std::uint64_t, void*>> waiters_;  // by ticket
};

}  // namespace anydev::core::transport

#endif  // ANYDEV_SRC_TRANSPORT_PUT_FLUSH_H_
