// SPDX-License-Identifier: Apache-2.0
// The cpu backend's stream workers: a fixed pool of OS threads that runs
// streams, whatever their number (no thread per stream).
//
// A stream with queued work is put on the pool's run queue (an intrusive
// FIFO of PooledStreams, so scheduling never allocates); a worker takes the
// front stream and runs its tasks in order until the queue is empty, a wait
// for another stream's event is not yet satisfied (the stream is then
// parked on that stream and put back on the run queue when it advances: no
// worker ever blocks on an event), an inline or caller-side run holds the
// stream, or the stream used its turn (kTurnTasks) while others wait. One
// worker at a time runs a given stream, so per-stream order holds.
//
// The process's pool (process_pool) has default_worker_count() workers,
// started on the first stream's creation (again in a forked child) and
// never joined: they sleep on a condition variable when idle. Tests may
// make their own, smaller pools, which their destructor stops and joins.
//
// Thread-safe: any thread may schedule. Lock order: a stream's mutex may be
// held while scheduling; the pool's mutex is innermost.
#ifndef ANYDEV_BACKENDS_CPU_CPU_WORKERS_H_
#define ANYDEV_BACKENDS_CPU_CPU_WORKERS_H_

#include <sys/types.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace anydev::cpu {

// What the pool runs: a stream (StreamState, cpu_stream.h, is the one kind),
// seen only through its run-queue link, the pool's hold on it and the call
// that runs it, so that the pool does not depend on the stream's code.
class PooledStream {
 public:
  PooledStream(const PooledStream&) = delete;
  PooledStream& operator=(const PooledStream&) = delete;

  // Runs the stream's tasks in order until none is runnable, the stream is
  // parked or its turn is over. `held` is the reference the run queue gave
  // the worker; parking or requeueing moves it back into self_.
  virtual void run_on_worker(std::shared_ptr<PooledStream>& held) = 0;

 protected:
  PooledStream() = default;
  ~PooledStream() = default;  // owned through std::shared_ptr of the derived type

  // The pool's hold on the stream while it is queued or parked (the worker
  // that runs it holds it meanwhile); handed over under the pool's or a
  // target stream's lock.
  std::shared_ptr<PooledStream> self_;
  PooledStream* run_next_ = nullptr;  // the run queue's link (pool's lock)
  // CUDA's meaning: below 0 is a high priority (set once, before the stream
  // is first scheduled): the pool runs high-priority streams before normal
  // ones that wait longer.
  int priority_ = 0;

  friend class WorkerPool;
};

// The most workers a pool has; the default is the online CPUs clamped to
// [kMinStreamWorkers, kMaxStreamWorkers].
inline constexpr unsigned kMinStreamWorkers = 2;
inline constexpr unsigned kMaxStreamWorkers = 8;
unsigned default_worker_count();

// Tasks a worker runs from one stream before it lets another stream that is
// waiting on the run queue go first.
inline constexpr unsigned kTurnTasks = 64;

// Thrown when a thread cannot be started; what() says why and which limit
// (RLIMIT_NPROC, kernel.threads-max, the process's live threads).
class ThreadStartError : public std::runtime_error {
 public:
  ThreadStartError(const std::string& message, int error)
      : std::runtime_error(message), error_(error) {}
  int error() const { return error_; }

 private:
  int error_;
};

// "pthread_create failed: <strerror> (EAGAIN); RLIMIT_NPROC ..." for errno
// `error`: the text ThreadStartError carries.
std::string describe_thread_start_failure(int error);

class WorkerPool {
 public:
  explicit WorkerPool(unsigned workers);
  // Stops and joins the workers; no stream may be scheduled on the pool any
  // more. The process pool is never destroyed.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // This process's pool, made on first use (afresh in a forked child).
  // Throws std::bad_alloc.
  static WorkerPool& process_pool();

  // Starts the workers not yet running. Throws ThreadStartError when none
  // runs (with fewer than wanted it logs once and goes on).
  void ensure_started();

  // Appends `state` to the run queue; its self_ must hold a reference,
  // which the worker that takes it inherits. Never throws or allocates.
  void schedule(PooledStream* state) noexcept;

  // True when some stream waits on the run queue (for a stream's turn).
  bool has_waiting() noexcept;

  unsigned wanted() const { return wanted_; }
  unsigned running();

 private:
  void loop();

  const unsigned wanted_;
  const pid_t pid_;
  std::mutex mutex_;
  std::condition_variable cv_;
  PooledStream* head_ = nullptr;  // run queue, linked through run_next_
  PooledStream* tail_ = nullptr;
  // The run queue of high-priority streams (priority_ < 0), taken first.
  PooledStream* high_head_ = nullptr;
  PooledStream* high_tail_ = nullptr;
  unsigned idle_ = 0;  // workers asleep on cv_
  bool stopping_ = false;
  bool warned_ = false;
  std::vector<std::thread> threads_;  // reserved up front
};

}  // namespace anydev::cpu

#endif  // ANYDEV_BACKENDS_CPU_CPU_WORKERS_H_
