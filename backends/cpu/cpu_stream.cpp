#include "cpu_stream.h"

#include <pthread.h>
#include <signal.h>

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

std::optional<TaskFailure> run_task_catching(Task& task) {
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
  std::uint64_t seq = 0;
  bool wake = false;
  {
    std::lock_guard<std::mutex> hold(mutex_);
    queue_.push_back(std::move(task));
    seq = ++submitted_;
    wake = worker_waiting_;
  }
  if (wake) work_cv_.notify_one();
  return seq;
}

std::uint64_t StreamState::submitted() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return submitted_;
}

void StreamState::wait_until_complete(std::uint64_t seq) {
  if (is_complete(seq)) return;
  std::unique_lock<std::mutex> lock(mutex_);
  ++done_waiters_;
  done_cv_.wait(lock, [&] { return is_complete(seq); });
  --done_waiters_;
}

std::optional<TaskFailure> StreamState::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  const std::uint64_t target = submitted_;
  if (!is_complete(target)) {
    ++done_waiters_;
    done_cv_.wait(lock, [&] { return is_complete(target); });
    --done_waiters_;
  }
  return std::exchange(first_failure_, std::nullopt);
}

std::optional<TaskFailure> StreamState::take_failure() {
  std::lock_guard<std::mutex> hold(mutex_);
  return std::exchange(first_failure_, std::nullopt);
}

void StreamState::finish_task_locked(std::optional<TaskFailure> failure) {
  if (failure && !first_failure_) first_failure_ = std::move(failure);
  completed_.store(completed_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  if (done_waiters_ > 0) done_cv_.notify_all();
}

void StreamState::run_worker() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (queue_.empty()) {
      if (stopping_) return;
      worker_waiting_ = true;
      work_cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      worker_waiting_ = false;
      continue;
    }
    Task task = std::move(queue_.front());
    queue_.pop_front();
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
    wake = worker_waiting_;
  }
  if (wake) work_cv_.notify_one();
}

Stream::Stream() : state_(std::make_shared<StreamState>()) {
  ScopedSignalMask mask;
  // The worker shares the state, so it stays valid even for a detached worker.
  worker_ = std::thread([state = state_] { state->run_worker(); });
  pthread_setname_np(worker_.native_handle(), "anydev-cpu");
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
