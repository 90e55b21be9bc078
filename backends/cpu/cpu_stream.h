// A cpu stream: an in-order queue of tasks run by one worker thread.
//
// StreamState is the queue and its progress counters: `submitted` counts the
// tasks ever enqueued, `completed` those that have finished (task n, counted
// from 1, is complete when completed >= n). It is shared: the Stream owns it,
// and events and other streams' WaitTasks keep it alive after the Stream is
// destroyed, when it simply reports everything complete. StreamState is
// thread-safe: any thread may enqueue, query, wait or synchronize.
//
// Stream owns the state and the worker thread. Destroying it (from any thread
// but its own worker) runs the queued tasks to the end, then joins the
// worker. The backend's stream handle is the StreamState itself (one load
// less per call); its owner() is the Stream.
//
// Inline execution: an enqueuing thread that finds every earlier task
// complete runs a small copy or fill (may_run_inline) itself, between
// enqueue's bookkeeping and finish_task_locked, while `inline_running_` keeps
// the worker from starting later tasks. A tiny copy plus synchronize() then
// costs about as much as the copy. Failures are kept for synchronize exactly
// as the worker keeps them.
//
// Caller-side execution: synchronize() runs queued copies and fills itself,
// front first, while the worker is not running a task (typically it has not
// woken up yet), since the caller would only wait; the same flag keeps the
// worker out. Waits and host functions are left to the worker.
//
// Deferred wake-up: waking a sleeping worker costs the enqueuing thread
// 10-20 us on a virtual machine, wasted when synchronize() then runs the task
// itself. A stream learns which case it is in: after a wake-up that turned
// out wasted, a copy or fill enqueued on an idle stream leaves the worker
// asleep (wake_pending_); whatever needs the task done wakes it: another
// enqueue, an event query or wait, a wait by another stream, stop(), or
// synchronize() (which runs it). When a synchronize() finds a deferred task
// that has waited longer than kDeferLimit (the caller did other work first,
// so the deferral cost overlap), or an event query polls one, the stream
// goes back to waking at once.
#ifndef ANYDEV_BACKENDS_CPU_CPU_STREAM_H_
#define ANYDEV_BACKENDS_CPU_CPU_STREAM_H_

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "cpu_task.h"

namespace anydev::cpu {

class Stream;

// Spinning before a futex sleep (measured on a 2-core AMD EPYC VM, where a
// sleep + wake-up costs 5-20 us): a waiter in synchronize() or an event wait
// spins up to kWaitSpin, yielding the CPU after kSpinBeforeYield.
inline constexpr std::chrono::microseconds kWaitSpin{200};
inline constexpr std::chrono::microseconds kSpinBeforeYield{5};
// How long a deferred wake-up may leave a task waiting before the stream
// stops deferring: about what the wake-up itself would have cost.
inline constexpr std::chrono::microseconds kDeferLimit{20};

// Gives `thread` the SCHED_BATCH policy (see cpu_stream.cpp); used for the
// stream workers.
void set_batch_policy(pthread_t thread);

class StreamState {
 public:
  StreamState() = default;
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;

  // Appends a task; returns its sequence number. A copy or fill that may
  // run inline (may_run_inline) runs at once on the calling thread when
  // every earlier task has completed. Throws std::bad_alloc.
  std::uint64_t enqueue(Task task);
  std::uint64_t enqueue(const CopyTask& task);
  std::uint64_t enqueue(const FillTask& task);

  // The number of tasks enqueued so far: what an event recorded now captures.
  std::uint64_t submitted() const;

  // Lock-free unless a deferred wake-up is pending, which it then issues.
  bool is_complete(std::uint64_t seq) {
    if (reached(seq)) return true;
    if (wake_pending_.load(std::memory_order_relaxed)) wake_deferred(/*polled=*/true);
    return reached(seq);
  }

  // Blocks until task `seq` has completed.
  void wait_until_complete(std::uint64_t seq);

  // Waits for every task enqueued before the call, then returns and clears
  // the first failure since the previous synchronize (or take_failure).
  std::optional<TaskFailure> synchronize();
  std::optional<TaskFailure> take_failure();

  // Whether the stream currently defers wake-ups, and whether one is
  // pending (for tests and diagnostics; the answer may be stale at once).
  bool defers_wakes() const;
  bool wake_pending() const { return wake_pending_.load(std::memory_order_relaxed); }

  // The Stream that owns this state's worker (set by its constructor). Valid
  // while that Stream lives, i.e. while the backend's stream handle does.
  Stream* owner() const { return owner_; }

  // Worker side: runs tasks in order until stop() has been called and the
  // queue is empty.
  void run_worker();
  void stop();

 private:
  // True when task `seq` has completed; never wakes the worker, so it may be
  // called with mutex_ held.
  bool reached(std::uint64_t seq) const {
    return completed_.load(std::memory_order_acquire) >= seq;
  }
  // No task runs or waits to run, and stop() has not been called. Lock held.
  bool idle_locked() const;
  // Counts one more task submitted; returns its sequence number. Lock held.
  std::uint64_t count_submitted_locked();
  template <class CopyOrFill>
  std::uint64_t enqueue_copy_or_fill(const CopyOrFill& task);
  // Appends `task` to the queue and wakes (or defers waking) the worker;
  // releases `lock`. Returns the task's sequence number.
  std::uint64_t queue_locked(std::unique_lock<std::mutex>& lock, Task task);
  // Records the running task's failure (if it is the first kept) and
  // completes it. Lock held.
  void finish_task_locked(std::optional<TaskFailure> failure);
  // Counts the running task complete and wakes the waiters. Lock held.
  void complete_task_locked();
  // Returns and clears the kept failure (lock held).
  std::optional<TaskFailure> take_failure_locked();
  // Issues a deferred wake-up, if one is pending; `polled`: asked for by an
  // event query (the caller wants the work to run without it).
  void wake_deferred(bool polled);
  // Clears a pending deferred wake-up; true when one was pending. Lock held.
  bool clear_pending_wake_locked();
  // Pops the queue's front and runs it on the calling thread (lock held on
  // entry and on return, released while the task runs).
  void run_on_caller_locked(std::unique_lock<std::mutex>& lock);

  mutable std::mutex mutex_;
  std::condition_variable work_cv_;  // the worker waits here for tasks or stop
  std::condition_variable done_cv_;  // waiters wait here for `completed` to advance
  std::deque<Task> queue_;
  // Written only under mutex_; read without it by submitted() and by
  // synchronize()'s lock-free check.
  std::atomic<std::uint64_t> submitted_{0};
  std::atomic<std::uint64_t> completed_{0};  // written only under mutex_
  int done_waiters_ = 0;
  bool worker_waiting_ = false;
  bool inline_running_ = false;  // an enqueuing thread is running a task
  bool stopping_ = false;
  // Deferred wake-up (see above), guarded by mutex_ except that the flag is
  // read without it by is_complete.
  std::atomic<bool> wake_pending_{false};
  std::chrono::steady_clock::time_point pending_since_{};
  bool defer_wakes_ = false;     // learned: wake-ups on this stream are being wasted
  std::uint64_t woken_for_ = 0;  // the task whose enqueue last woke the worker
  std::optional<TaskFailure> first_failure_;
  std::atomic<bool> failed_{false};  // first_failure_ is set; written under mutex_
  Stream* owner_ = nullptr;          // set once, by Stream's constructor

  friend class Stream;
};

class Stream {
 public:
  // Starts the worker. Throws std::system_error when no thread can be
  // started, std::bad_alloc when out of memory.
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  StreamState& state() { return *state_; }
  const std::shared_ptr<StreamState>& shared_state() const { return state_; }

 private:
  std::shared_ptr<StreamState> state_;
  std::thread worker_;
};

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_STREAM_H_
