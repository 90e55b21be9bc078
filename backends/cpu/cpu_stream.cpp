// SPDX-License-Identifier: Apache-2.0
#include "cpu_stream.h"

#include <chrono>
#include <exception>
#include <string>
#include <utility>

#include "cpu_services.h"

namespace anydev::cpu {
namespace {

// The stream whose task the calling thread runs (a pool worker), if any: a
// stream destroyed from its own task must not wait for itself.
thread_local const StreamState* t_running = nullptr;

[[gnu::hot]] std::optional<TaskFailure> run_task_catching(Task& task) {
  try {
    return run_task(task);
  } catch (const std::exception& e) {
    return TaskFailure{ANYDEV_ERROR_INTERNAL, std::string("cpu stream task threw: ") + e.what()};
  } catch (...) {
    return TaskFailure{ANYDEV_ERROR_INTERNAL, "cpu stream task threw a non-standard exception"};
  }
}

}  // namespace

[[gnu::hot, gnu::always_inline]] inline void StreamState::complete_task_locked() {
  complete_tasks_locked(1);
}

[[gnu::hot, gnu::always_inline]] inline void StreamState::complete_tasks_locked(unsigned n) {
  completed_.store(completed_.load(std::memory_order_relaxed) + n, std::memory_order_release);
  if (done_waiters_ > 0) done_cv_.notify_all();
  if (parked_ != nullptr) [[unlikely]]
    resume_parked_locked();
}

std::uint64_t StreamState::enqueue(Task task) {
  if (const auto* copy = std::get_if<CopyTask>(&task)) return enqueue(*copy);
  if (const auto* fill = std::get_if<FillTask>(&task)) return enqueue(*fill);
  std::unique_lock<std::mutex> lock(mutex_);
  return queue_locked(lock, std::move(task));
}

[[gnu::hot]] std::uint64_t StreamState::enqueue(const CopyTask& task) {
  return enqueue_copy_or_fill(task);
}

[[gnu::hot]] std::uint64_t StreamState::enqueue(const FillTask& task) {
  return enqueue_copy_or_fill(task);
}

template <class CopyOrFill>
std::uint64_t StreamState::enqueue_copy_or_fill(const CopyOrFill& task) {
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  lock_spinning<LockWait::kBackOff>(lock);
  if (!idle_locked() || !may_run_inline(task)) return queue_locked(lock, Task(task));
  const std::uint64_t seq = count_submitted_locked();
  if (task.bytes <= kLockedRunBytes) {
    // Every earlier task has completed and the lock keeps everyone else out:
    // one lock round trip for the whole operation (see "Shared streams").
    run_inline(task);
    complete_task_locked();
    return seq;
  }
  // Every earlier task has completed and the worker is kept out by
  // inline_running_, so running here keeps the stream's order.
  inline_running_ = true;
  lock.unlock();
  run_inline(task);
  finish_inline(lock);
  return seq;
}

[[gnu::always_inline]] inline void StreamState::finish_inline(std::unique_lock<std::mutex>& lock) {
  lock_spinning<LockWait::kSpin>(lock);
  inline_running_ = false;
  complete_task_locked();
  // Work enqueued meanwhile by other threads, which the pool left to us: the
  // small copies and fills at its front run here too, in order, rather than
  // wake a worker for them (see "Shared streams" in cpu_stream.h).
  drain_small_on_caller_locked(lock);
  const bool wake = !queue_.empty() && take_onto_pool_locked();
  lock.unlock();
  if (wake) pool_->schedule(this);
}

std::optional<std::uint64_t> StreamState::enqueue_inline_for_test(
    const CopyTask& task, const std::function<void()>& during) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!idle_locked() || !may_run_inline(task)) return std::nullopt;
  const std::uint64_t seq = count_submitted_locked();
  inline_running_ = true;
  lock.unlock();
  run_inline(task);
  during();
  finish_inline(lock);
  return seq;
}

std::uint64_t StreamState::queue_locked(std::unique_lock<std::mutex>& lock, Task task) {
  while (queue_.size() >= kQueueDepth) [[unlikely]] {
      // Full: make sure the stream runs, then wait for room.
      clear_pending_wake_locked();
      if (take_onto_pool_locked()) {
        pool_->schedule(this);
        continue;
      }
      ++full_waiters_;
      ++unwoken_waiters_;
      const std::uint64_t generation = room_generation_;
      room_cv_.wait(lock, [&] { return room_generation_ != generation; });
      --full_waiters_;
    }
  const bool defer = idle_locked() && defer_wakes_ && may_run_on_caller(task);
  queue_.push_back(std::move(task));
  const std::uint64_t seq = count_submitted_locked();
  // Work behind a deferred task: the worker is needed now.
  const bool had_pending = clear_pending_wake_locked();
  bool wake = false;
  if (defer && !on_pool_) {
    wake_pending_.store(true, std::memory_order_relaxed);
    pending_since_ = std::chrono::steady_clock::now();
  } else {
    wake = take_onto_pool_locked();
    if (wake && !had_pending) woken_for_ = seq;
  }
  lock.unlock();
  if (wake) pool_->schedule(this);
  return seq;
}

void StreamState::drain_small_on_caller_locked(std::unique_lock<std::mutex>& lock) {
  // Nothing else runs (no task between the queue and completed_, no caller,
  // not on the pool), as in synchronize(). The tasks are taken in batches:
  // one lock round trip per batch, not per task, since the threads that
  // queued them contend for the same lock meanwhile.
  for (unsigned n = 0; n < kTurnTasks && !queue_.empty() && !inline_running_ && !on_pool_ &&
                       completed_.load(std::memory_order_relaxed) + queue_.size() ==
                           submitted_.load(std::memory_order_relaxed) &&
                       may_run_inline(queue_.front());) {
    clear_pending_wake_locked();  // running anyway: nothing left to defer
    Task batch[kDrainBatch];
    unsigned taken = 0;
    do {
      batch[taken++] = pop_front_locked();
    } while (taken < kDrainBatch && n + taken < kTurnTasks && !queue_.empty() &&
             may_run_inline(queue_.front()));
    caller_drained_ += taken;
    n += taken;
    inline_running_ = true;
    lock.unlock();
    // Copies and fills of at most kInlineBytes: run_inline cannot fail.
    for (unsigned i = 0; i < taken; ++i) run_inline(batch[i]);
    lock_spinning<LockWait::kSpin>(lock);
    inline_running_ = false;
    complete_tasks_locked(taken);
  }
}

bool StreamState::take_onto_pool_locked() {
  if (on_pool_ || inline_running_ || queue_.empty()) return false;
  ++pool_handoffs_;
  on_pool_ = true;
  self_ = shared_from_this();
  return true;
}

Task StreamState::pop_front_locked() {
  Task task = std::move(queue_.front());
  queue_.pop_front();
  if (unwoken_waiters_ > 0 && queue_.size() <= kRoomWakeDepth) [[unlikely]] {
    unwoken_waiters_ = 0;
    ++room_generation_;
    room_cv_.notify_all();
  }
  return task;
}

std::uint64_t StreamState::count_submitted_locked() {
  const std::uint64_t seq = submitted_.load(std::memory_order_relaxed) + 1;
  submitted_.store(seq, std::memory_order_release);
  return seq;
}

bool StreamState::idle_locked() const {
  return !inline_running_ && !stopping_ &&
         completed_.load(std::memory_order_relaxed) == submitted_.load(std::memory_order_relaxed);
}

bool StreamState::clear_pending_wake_locked() {
  if (!wake_pending_.load(std::memory_order_relaxed)) return false;
  wake_pending_.store(false, std::memory_order_relaxed);
  return true;
}

void StreamState::wake_deferred(bool polled) {
  std::lock_guard<std::mutex> hold(mutex_);
  if (!clear_pending_wake_locked()) return;
  if (polled) defer_wakes_ = false;
  if (take_onto_pool_locked()) pool_->schedule(this);
}

std::uint64_t StreamState::submitted() const { return submitted_.load(std::memory_order_acquire); }

bool StreamState::defers_wakes() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return defer_wakes_;
}

std::size_t StreamState::queued() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return queue_.size();
}

int StreamState::blocked_enqueuers() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return full_waiters_;
}

std::uint64_t StreamState::failed_lock_tries_on_this_thread() {
  return cpu::failed_lock_tries_on_this_thread();
}

void StreamState::set_defer_limit_for_test(std::chrono::nanoseconds limit) {
  std::lock_guard lock(mutex_);
  defer_limit_ = limit;
}

void StreamState::hold_lock_for_test(const std::function<void()>& during) {
  std::lock_guard<std::mutex> lock(mutex_);
  during();
}

std::uint64_t StreamState::pool_handoffs() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return pool_handoffs_;
}

std::uint64_t StreamState::caller_drained() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return caller_drained_;
}

std::uint64_t StreamState::room_wakeups() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return room_generation_;
}

void StreamState::wait_until_complete(std::uint64_t seq, bool spin) {
  if (wake_pending_.load(std::memory_order_relaxed)) wake_deferred(/*polled=*/false);
  if (spin && spin_until([&] { return reached(seq); }, kWaitSpin)) return;
  if (reached(seq)) return;
  std::unique_lock<std::mutex> lock(mutex_);
  ++done_waiters_;
  done_cv_.wait(lock, [&] { return reached(seq); });
  --done_waiters_;
}

void StreamState::run_on_caller_locked(std::unique_lock<std::mutex>& lock) {
  Task task = pop_front_locked();
  inline_running_ = true;
  lock.unlock();
  std::optional<TaskFailure> failure = run_task_catching(task);
  lock.lock();
  inline_running_ = false;
  finish_task_locked(std::move(failure));
}

[[gnu::hot]] std::optional<TaskFailure> StreamState::synchronize() {
  // Lock-free when there is nothing to do: every task enqueued before the
  // call has completed (their writes are visible: acquire) and no failure
  // is kept. finish_task_locked sets failed_ before it publishes completed_,
  // so a failure of any of those tasks is seen here. No wake-up can be
  // pending either: that needs a queued task.
  {
    const std::uint64_t target = submitted_.load(std::memory_order_acquire);
    if (reached(target) && !failed_.load(std::memory_order_relaxed)) return std::nullopt;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  const std::uint64_t target = submitted_.load(std::memory_order_relaxed);
  // The caller would only wait: it runs the queued copies and fills itself
  // when the worker is not running a task (and has not woken up yet), which
  // saves the hand-off and keeps the data in this core's caches. In order:
  // only the queue's front, only while nothing else runs.
  while (completed_.load(std::memory_order_relaxed) < target && !inline_running_ &&
         !queue_.empty() &&
         completed_.load(std::memory_order_relaxed) + queue_.size() ==
             submitted_.load(std::memory_order_relaxed) &&
         may_run_on_caller(queue_.front())) {
    // Learning for the deferred wake-up (see cpu_stream.h).
    const std::uint64_t front = completed_.load(std::memory_order_relaxed) + 1;
    if (clear_pending_wake_locked()) {
      if (std::chrono::steady_clock::now() - pending_since_ > defer_limit_) defer_wakes_ = false;
    } else if (front == woken_for_) {
      defer_wakes_ = true;  // the worker was woken for this task and never got to it
    }
    run_on_caller_locked(lock);
  }
  // What is left (a wait, a host function, work behind them) goes to the
  // pool, deferred or not.
  clear_pending_wake_locked();
  if (take_onto_pool_locked()) pool_->schedule(this);
  if (!reached(target)) {
    // Spin first: the futex sleep and wake-up would cost more than a short
    // task itself.
    lock.unlock();
    spin_until([&] { return reached(target); }, kWaitSpin);
    lock.lock();
  }
  if (!reached(target)) {
    ++done_waiters_;
    done_cv_.wait(lock, [&] { return reached(target); });
    --done_waiters_;
  }
  return take_failure_locked();
}

std::optional<TaskFailure> StreamState::take_failure() {
  std::lock_guard<std::mutex> hold(mutex_);
  return take_failure_locked();
}

std::optional<TaskFailure> StreamState::take_failure_locked() {
  failed_.store(false, std::memory_order_relaxed);
  return std::exchange(first_failure_, std::nullopt);
}

void StreamState::finish_task_locked(std::optional<TaskFailure> failure) {
  if (failure && !first_failure_) {
    first_failure_ = std::move(failure);
    failed_.store(true, std::memory_order_relaxed);  // published by completed_'s release
  }
  complete_task_locked();
}

[[gnu::cold]] void StreamState::resume_parked_locked() noexcept {
  const std::uint64_t done = completed_.load(std::memory_order_relaxed);
  StreamState** link = &parked_;
  while (StreamState* waiter = *link) {
    if (waiter->park_seq_ > done) {
      link = &waiter->park_next_;
      continue;
    }
    *link = waiter->park_next_;
    waiter->park_next_ = nullptr;
    // Still on the pool, held by its self_: back onto the run queue.
    waiter->pool_->schedule(waiter);
  }
}

bool StreamState::park(StreamState* waiter, std::shared_ptr<PooledStream>& held,
                       std::uint64_t seq) {
  if (wake_pending_.load(std::memory_order_relaxed)) wake_deferred(/*polled=*/false);
  std::lock_guard<std::mutex> hold(mutex_);
  if (reached(seq)) return false;
  waiter->self_ = std::move(held);
  waiter->park_seq_ = seq;
  waiter->park_next_ = parked_;
  parked_ = waiter;
  return true;
}

void StreamState::run_on_worker(std::shared_ptr<PooledStream>& held) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (unsigned turn = 0;; ++turn) {
    if (queue_.empty() || inline_running_) {
      // Nothing runnable, or a caller runs the stream's work: it takes the
      // stream back onto the pool when it is done, if work is left.
      on_pool_ = false;
      if (stopping_ && queue_.empty()) {
        if (std::optional<TaskFailure> failure = take_failure_locked()) {
          lock.unlock();
          log(ANYDEV_LOG_DEBUG,
              "stream_destroy: dropped an asynchronous error never returned by a "
              "synchronize: " +
                  failure->message);
        }
      }
      return;
    }
    if (turn >= kTurnTasks && pool_->has_waiting()) {
      // Other streams wait for a worker: go to the back of the run queue.
      self_ = std::move(held);
      pool_->schedule(this);
      return;
    }
    if (auto* wait = std::get_if<WaitTask>(&queue_.front())) {
      if (!wait->stream->reached(wait->seq)) {
        std::shared_ptr<StreamState> target = wait->stream;
        const std::uint64_t seq = wait->seq;
        lock.unlock();
        // Parked: the target's completion of `seq` puts this stream back on
        // the run queue; this worker moves on.
        if (target->park(this, held, seq)) return;
        lock.lock();
        continue;
      }
      Task done = pop_front_locked();
      complete_task_locked();
      lock.unlock();
      done = Task{};  // drops the WaitTask's reference outside the lock
      lock.lock();
      continue;
    }
    Task task = pop_front_locked();
    clear_pending_wake_locked();  // running anyway: nothing left to defer
    lock.unlock();
    t_running = this;
    std::optional<TaskFailure> failure = run_task_catching(task);
    t_running = nullptr;
    task = Task{};  // drops a reference held by the task before the lock is retaken
    lock.lock();
    finish_task_locked(std::move(failure));
  }
}

void StreamState::stop() {
  std::lock_guard<std::mutex> hold(mutex_);
  stopping_ = true;
  clear_pending_wake_locked();
  if (take_onto_pool_locked()) pool_->schedule(this);
}

Stream::Stream() : Stream(WorkerPool::process_pool()) {}

Stream::Stream(WorkerPool& pool) : Stream(pool, 0) {}

Stream::Stream(WorkerPool& pool, int priority) {
  pool.ensure_started();
  state_ = std::make_shared<StreamState>(pool);
  state_->owner_ = this;
  state_->priority_ = priority;
}

Stream::~Stream() {
  StreamState& state = *state_;
  state.stop();
  // Destroyed by one of its own tasks: the pool finishes the rest.
  if (t_running == &state) return;
  state.wait_until_complete(state.submitted());
  if (std::optional<TaskFailure> failure = state.take_failure()) {
    log(ANYDEV_LOG_DEBUG,
        "stream_destroy: dropped an asynchronous error never returned by a "
        "synchronize: " +
            failure->message);
  }
}

}  // namespace anydev::cpu
