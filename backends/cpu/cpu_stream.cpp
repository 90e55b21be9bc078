#include "cpu_stream.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <chrono>
#include <exception>
#include <string>
#include <utility>

#include "cpu_services.h"

namespace anydev::cpu {
namespace {

// Restores the calling thread's signal mask when it goes out of scope.
class ScopedSignalMask {
 public:
  // Blocks every asynchronous signal, so that signals meant for the
  // application are never delivered to a worker. Signals raised by a fault
  // stay unblocked: blocking them would make the kernel kill the process
  // without running the application's (or a sanitizer's) handler.
  ScopedSignalMask() {
    sigset_t block;
    sigfillset(&block);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) {
      sigdelset(&block, sig);
    }
    pthread_sigmask(SIG_BLOCK, &block, &saved_);
  }
  ~ScopedSignalMask() { pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }
  ScopedSignalMask(const ScopedSignalMask&) = delete;
  ScopedSignalMask& operator=(const ScopedSignalMask&) = delete;

 private:
  sigset_t saved_;
};

}  // namespace

void set_batch_policy(pthread_t thread) {
  // SCHED_BATCH: waking the thread never preempts the waker. Without it the
  // scheduler tends to run a freshly woken worker on the enqueuing thread's
  // own core at once, so the caller loses its core for the whole task
  // (measured: a 4 MiB fill's enqueue took the fill's full time). Needs no
  // privilege; failure is harmless.
  sched_param param{};
  param.sched_priority = 0;
  pthread_setschedparam(thread, SCHED_BATCH, &param);
}

namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or `limit` has passed; true when done() held. Yields the
// CPU after the first few microseconds, so that a thread this one waits for
// (a split copy's helper) is not kept off a core by the spinning.
template <class Done>
bool spin_until(Done&& done, std::chrono::microseconds limit) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    const Clock::duration spent = Clock::now() - start;
    if (spent >= limit) return done();
    if (spent >= kSpinBeforeYield) sched_yield();
  }
}

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
  std::unique_lock<std::mutex> lock(mutex_);
  if (!idle_locked() || !may_run_inline(task)) return queue_locked(lock, Task(task));
  // Every earlier task has completed and the worker is kept out by
  // inline_running_, so running here keeps the stream's order.
  const std::uint64_t seq = count_submitted_locked();
  inline_running_ = true;
  lock.unlock();
  run_inline(task);
  lock.lock();
  inline_running_ = false;
  complete_task_locked();
  // Work enqueued (or a stop requested) meanwhile by other threads.
  const bool wake = worker_waiting_ && (!queue_.empty() || stopping_);
  lock.unlock();
  if (wake) work_cv_.notify_one();
  return seq;
}

std::uint64_t StreamState::queue_locked(std::unique_lock<std::mutex>& lock, Task task) {
  const bool defer = idle_locked() && defer_wakes_ && may_run_on_caller(task);
  queue_.push_back(std::move(task));
  const std::uint64_t seq = count_submitted_locked();
  // Work behind a deferred task: the worker is needed now.
  const bool had_pending = clear_pending_wake_locked();
  bool wake = false;
  if (defer && worker_waiting_) {
    wake_pending_.store(true, std::memory_order_relaxed);
    pending_since_ = std::chrono::steady_clock::now();
  } else {
    wake = worker_waiting_;
    if (wake && !had_pending) woken_for_ = seq;
  }
  lock.unlock();
  if (wake) work_cv_.notify_one();
  return seq;
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
  bool wake = false;
  {
    std::lock_guard<std::mutex> hold(mutex_);
    if (!clear_pending_wake_locked()) return;
    if (polled) defer_wakes_ = false;
    wake = worker_waiting_;
  }
  if (wake) work_cv_.notify_one();
}

std::uint64_t StreamState::submitted() const { return submitted_.load(std::memory_order_acquire); }

bool StreamState::defers_wakes() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return defer_wakes_;
}

void StreamState::wait_until_complete(std::uint64_t seq) {
  if (wake_pending_.load(std::memory_order_relaxed)) wake_deferred(/*polled=*/false);
  if (spin_until([&] { return reached(seq); }, kWaitSpin)) return;
  std::unique_lock<std::mutex> lock(mutex_);
  ++done_waiters_;
  done_cv_.wait(lock, [&] { return reached(seq); });
  --done_waiters_;
}

void StreamState::run_on_caller_locked(std::unique_lock<std::mutex>& lock) {
  Task task = std::move(queue_.front());
  queue_.pop_front();
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
  bool ran_here = false;
  while (completed_.load(std::memory_order_relaxed) < target && !inline_running_ &&
         !queue_.empty() &&
         completed_.load(std::memory_order_relaxed) + queue_.size() ==
             submitted_.load(std::memory_order_relaxed) &&
         may_run_on_caller(queue_.front())) {
    // Learning for the deferred wake-up (see cpu_stream.h).
    const std::uint64_t front = completed_.load(std::memory_order_relaxed) + 1;
    if (clear_pending_wake_locked()) {
      if (std::chrono::steady_clock::now() - pending_since_ > kDeferLimit) defer_wakes_ = false;
    } else if (front == woken_for_) {
      defer_wakes_ = true;  // the worker was woken for this task and never got to it
    }
    run_on_caller_locked(lock);
    ran_here = true;
  }
  const bool had_pending = clear_pending_wake_locked();
  if ((had_pending || ran_here) && worker_waiting_ && (!queue_.empty() || stopping_)) {
    work_cv_.notify_one();
  }
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

[[gnu::hot]] void StreamState::complete_task_locked() {
  completed_.store(completed_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  if (done_waiters_ > 0) done_cv_.notify_all();
}

void StreamState::run_worker() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (queue_.empty() || inline_running_) {
      if (queue_.empty() && stopping_) return;
      worker_waiting_ = true;
      work_cv_.wait(lock, [&] { return (!queue_.empty() || stopping_) && !inline_running_; });
      worker_waiting_ = false;
      continue;
    }
    Task task = std::move(queue_.front());
    queue_.pop_front();
    clear_pending_wake_locked();  // woken some other way: nothing left to defer
    lock.unlock();
    std::optional<TaskFailure> failure = run_task_catching(task);
    task = Task{};  // drops a WaitTask's reference before the lock is retaken
    lock.lock();
    finish_task_locked(std::move(failure));
  }
}

void StreamState::stop() {
  bool wake = false;
  {
    std::lock_guard<std::mutex> hold(mutex_);
    stopping_ = true;
    clear_pending_wake_locked();
    wake = worker_waiting_;
  }
  if (wake) work_cv_.notify_one();
}

Stream::Stream() : state_(std::make_shared<StreamState>()) {
  state_->owner_ = this;
  ScopedSignalMask mask;
  // The worker shares the state, so it stays valid even for a detached worker.
  worker_ = std::thread([state = state_] { state->run_worker(); });
  pthread_setname_np(worker_.native_handle(), "anydev-cpu");
  set_batch_policy(worker_.native_handle());
}

Stream::~Stream() {
  state_->stop();
  if (worker_.get_id() == std::this_thread::get_id()) {
    // Only reachable if a task destroyed its own stream; joining would
    // deadlock. The worker returns once the queue is empty.
    worker_.detach();
  } else {
    worker_.join();
  }
  if (std::optional<TaskFailure> failure = state_->take_failure()) {
    log(ANYDEV_LOG_DEBUG,
        "stream_destroy: dropped an asynchronous error never returned by a "
        "synchronize: " +
            failure->message);
  }
}

}  // namespace anydev::cpu
