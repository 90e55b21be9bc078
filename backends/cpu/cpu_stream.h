// SPDX-License-Identifier: Apache-2.0
// A cpu stream: an in-order queue of tasks, run on the backend's fixed pool
// of worker threads (cpu_workers.h); a stream owns no thread.
//
// StreamState is the queue and its progress counters: `submitted` counts the
// tasks ever enqueued, `completed` those that have finished (task n, counted
// from 1, is complete when completed >= n). It is shared: the Stream owns it,
// and events and other streams' WaitTasks keep it alive after the Stream is
// destroyed, when it simply reports everything complete. StreamState is
// thread-safe: any thread may enqueue, query, wait or synchronize.
//
// Stream owns the state. Destroying it runs the queued tasks to the end (on
// the pool) and waits for them, unless it is destroyed by one of its own
// tasks. The backend's stream handle is the StreamState itself (one load less
// per call); its owner() is the Stream.
//
// Scheduling: a stream is "on the pool" (on_pool_) from the moment it is put
// on the run queue until a worker gives it up with nothing runnable. While
// on the pool it is either on the run queue, run by exactly one worker, or
// parked: its front task waits for another stream's task that has not
// completed, and it sits on that stream's parked list (an intrusive list;
// parking never allocates) until that task completes, which puts it back on
// the run queue. No worker blocks on an event, so a bounded pool cannot
// deadlock on chains of waits. "Waking the worker" below means putting the
// stream on the run queue.
//
// Backpressure: at most kQueueDepth tasks wait in a stream's queue; an
// enqueue that finds it full blocks until the stream's tasks make room (as
// the CUDA driver blocks a launch when its queue is full): the blocked
// enqueuers are woken together when the queue has drained to
// kRoomWakeDepth. Every queued task
// depends only on work already enqueued, so the wait always ends, unless a
// host function blocks forever.
//
// Inline execution: an enqueuing thread that finds every earlier task
// complete runs a small copy or fill (may_run_inline) itself, between
// enqueue's bookkeeping and finish_task_locked, while `inline_running_` keeps
// the worker from starting later tasks. A tiny copy plus synchronize() then
// costs about as much as the copy. Failures are kept for synchronize exactly
// as the worker keeps them.
//
// Shared streams: a copy or fill of at most kLockedRunBytes that finds the
// stream idle runs with the stream's lock held, from the check to its
// completion: one lock round trip, and a thread that enqueues meanwhile
// waits for the lock (the contention policy of cpu_contention.h:
// lock_spinning) and then finds the stream idle again, so tiny work from
// many threads never queues. A larger inline run releases the lock; a
// thread that enqueues a copy or fill meanwhile queues it (the stream is not
// idle), and the inline thread, once done, runs the small copies and fills
// that queued up itself, in order, in batches (kTurnTasks at most, then the
// pool takes the rest), instead of handing them to a worker. Taking the lock
// once per copy, keeping it on a cache line of its own and never sleeping on
// it are what keep several threads on one shared stream near one thread's
// rate (docs/performance.md, "cpu stream contention policy").
//
// Caller-side execution: synchronize() runs queued copies and fills itself,
// front first, while the worker is not running a task (typically it has not
// woken up yet), since the caller would only wait; the same flag keeps the
// worker out. Waits and host functions are left to the worker.
//
// Deferred wake-up: waking a sleeping worker costs the enqueuing thread
// more than a small copy, wasted when synchronize() then runs the task
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

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "cpu_contention.h"
#include "cpu_task.h"
#include "cpu_workers.h"

namespace anydev::cpu {

class Stream;

// How long a deferred wake-up may leave a task waiting before the stream
// stops deferring: about what the wake-up itself would have cost.
inline constexpr std::chrono::microseconds kDeferLimit{20};

// The most tasks a stream's queue holds; a further enqueue blocks until the
// stream makes room. 1024 tasks of 64 bytes: 64 KiB per stream at most.
inline constexpr std::size_t kQueueDepth = 1024;

// Enqueuers blocked on a full queue are woken together once it has drained
// to this depth, not as each task leaves it: woken per task, every blocked
// thread would wake for one free slot and all but one block again, two
// context switches per task.
inline constexpr std::size_t kRoomWakeDepth = kQueueDepth / 2;

// Copies and fills of at most this many bytes that run inline run with the
// stream's lock held (a short hold): one lock round trip per
// operation instead of two, and a thread that enqueues meanwhile on a
// shared stream waits for the lock instead of queueing its task for the
// inline thread to drain. Larger inline work runs with the lock released.
inline constexpr std::size_t kLockedRunBytes = 4096;

// A thread that finishes an inline run drains the small copies and fills
// other threads queued meanwhile (kTurnTasks at most, then the pool takes
// the rest), kDrainBatch of them per lock round trip.
inline constexpr unsigned kDrainBatch = 16;

class StreamState final : public PooledStream, public std::enable_shared_from_this<StreamState> {
 public:
  // A state whose tasks run on `pool` (which must outlive it). Made with
  // std::make_shared only (scheduling takes shared_from_this).
  explicit StreamState(WorkerPool& pool) : pool_(&pool) {}
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;

  // Appends a task; returns its sequence number. A copy or fill that may
  // run inline (may_run_inline) runs at once on the calling thread when
  // every earlier task has completed. Blocks while kQueueDepth tasks are
  // queued. Throws std::bad_alloc.
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

  // Blocks until task `seq` has completed; spins a little first unless
  // `spin` is false (a blocking-sync event sleeps in the OS at once).
  void wait_until_complete(std::uint64_t seq, bool spin = true);

  // Waits for every task enqueued before the call, then returns and clears
  // the first failure since the previous synchronize (or take_failure).
  std::optional<TaskFailure> synchronize();
  std::optional<TaskFailure> take_failure();

  // Whether the stream currently defers wake-ups, and whether one is
  // pending (for tests and diagnostics; the answer may be stale at once).
  bool defers_wakes() const;
  bool wake_pending() const { return wake_pending_.load(std::memory_order_relaxed); }
  // Tasks queued and not yet started, and enqueuers blocked on a full queue
  // (for tests; stale at once).
  std::size_t queued() const;
  int blocked_enqueuers() const;
  // How many times blocked enqueuers were woken (for tests).
  std::uint64_t room_wakeups() const;
  // How many times the stream was handed to the pool (a worker woken or
  // queued for it), and how many tasks an inline enqueuer ran for other
  // threads (see "Shared streams"; for tests).
  std::uint64_t pool_handoffs() const;
  std::uint64_t caller_drained() const;
  // Tries for a stream's lock that found it held, by the calling thread, on
  // any stream, so far (tests: how often a contended enqueue tries).
  static std::uint64_t failed_lock_tries_on_this_thread();
  // For tests: calls `during` with the stream's lock held.
  void hold_lock_for_test(const std::function<void()>& during);
  // For tests: enqueue(task) when it runs inline, calling `during` on the
  // calling thread after the copy, while the stream is still held (as if
  // the thread were preempted there); nullopt (nothing enqueued) when the
  // stream is not idle or the copy is too large to run inline.
  std::optional<std::uint64_t> enqueue_inline_for_test(const CopyTask& task,
                                                       const std::function<void()>& during);
  // For tests: replaces kDeferLimit on this stream, so that a test can make
  // "synchronize came at once" independent of how loaded the machine is.
  void set_defer_limit_for_test(std::chrono::nanoseconds limit);

  // The Stream that owns this state (set by its constructor). Valid
  // while that Stream lives, i.e. while the backend's stream handle does.
  Stream* owner() const { return owner_; }

  // Worker side (WorkerPool): runs this stream's tasks in order until none
  // is runnable, the stream is parked or its turn is over. `held` is the
  // reference the run queue gave the worker; parking or requeueing moves it
  // back into self_.
  void run_on_worker(std::shared_ptr<PooledStream>& held) override;
  // Marks the stream stopping (its owner is being destroyed) and makes sure
  // its queued tasks run.
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
  // The same for the `n` tasks run since the last completion. Lock held.
  void complete_tasks_locked(unsigned n);
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
  // After an inline run (lock not held on entry, released on return):
  // counts the task complete, runs what others queued meanwhile
  // (drain_small_on_caller_locked) and hands the rest to the pool.
  void finish_inline(std::unique_lock<std::mutex>& lock);
  // After an inline run: runs the small copies and fills other threads
  // queued meanwhile, front first, while nothing else runs (lock held on
  // entry and on return).
  void drain_small_on_caller_locked(std::unique_lock<std::mutex>& lock);
  // Pops the queue's front, telling blocked enqueuers there is room. Lock held.
  Task pop_front_locked();
  // Takes the stream onto the pool if it is not on it and has work no one
  // else runs; true when the caller must then call pool_->schedule(this)
  // (after unlocking, or not: the pool's lock is innermost). Lock held.
  bool take_onto_pool_locked();
  // Parks `waiter` on this stream until task `seq` completes; false (nothing
  // done) when it already has. On success `held` moves into waiter->self_.
  bool park(StreamState* waiter, std::shared_ptr<PooledStream>& held, std::uint64_t seq);
  // Puts the parked streams whose task has completed back on the run queue.
  // Lock held.
  void resume_parked_locked() noexcept;

  // The lock has a cache line of its own: threads trying for it (a shared
  // stream) then do not take the lines of the state its holder works on.
  alignas(64) mutable std::mutex mutex_;
  alignas(64) std::condition_variable done_cv_;  // waiters wait here for `completed` to advance
  std::deque<Task> queue_;
  // Written only under mutex_; read without it by submitted() and by
  // synchronize()'s lock-free check.
  std::atomic<std::uint64_t> submitted_{0};
  std::atomic<std::uint64_t> completed_{0};  // written only under mutex_
  int done_waiters_ = 0;
  int full_waiters_ = 0;               // enqueuers blocked on a full queue
  std::condition_variable room_cv_;    // they wait here
  int unwoken_waiters_ = 0;            // of those, the ones no wake-up has reached yet
  std::uint64_t room_generation_ = 0;  // counts the wake-ups (room_wakeups)
  std::uint64_t pool_handoffs_ = 0;    // see pool_handoffs()
  std::uint64_t caller_drained_ = 0;   // see caller_drained()
  WorkerPool* const pool_;
  bool on_pool_ = false;         // see "Scheduling" above
  bool inline_running_ = false;  // an enqueuing thread is running a task
  bool stopping_ = false;
  // Deferred wake-up (see above), guarded by mutex_ except that the flag is
  // read without it by is_complete.
  std::atomic<bool> wake_pending_{false};
  std::chrono::steady_clock::time_point pending_since_{};
  std::chrono::nanoseconds defer_limit_{kDeferLimit};
  bool defer_wakes_ = false;     // learned: wake-ups on this stream are being wasted
  std::uint64_t woken_for_ = 0;  // the task whose enqueue last woke the worker
  std::optional<TaskFailure> first_failure_;
  std::atomic<bool> failed_{false};  // first_failure_ is set; written under mutex_
  Stream* owner_ = nullptr;          // set once, by Stream's constructor
  // self_ and run_next_ (PooledStream): the pool's hold on the stream while
  // it is queued or parked, handed over under the pool's or a target
  // stream's lock, and the run queue's link.
  // Streams parked on this one (linked through park_next_), and, for this
  // stream while parked elsewhere, the task it waits for. Guarded by the
  // mutex_ of the stream parked on.
  StreamState* parked_ = nullptr;
  StreamState* park_next_ = nullptr;
  std::uint64_t park_seq_ = 0;

  friend class Stream;
};

class Stream {
 public:
  // A stream on the process's pool, or on `pool` (tests). Starts the pool's
  // workers if needed: throws ThreadStartError when none can start,
  // std::bad_alloc when out of memory.
  Stream();
  explicit Stream(WorkerPool& pool);
  // At `priority` (below 0: taken by the pool's workers before normal
  // streams; cpu_workers.h).
  Stream(WorkerPool& pool, int priority);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  StreamState& state() { return *state_; }
  const std::shared_ptr<StreamState>& shared_state() const { return state_; }

 private:
  std::shared_ptr<StreamState> state_;
};

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_STREAM_H_
