// SPDX-License-Identifier: Apache-2.0
#include "cpu_parallel.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace anydev::cpu {
namespace {

std::atomic<unsigned> g_threads{0};  // 0: not set, use the online CPUs

// Read once: sysconf reads /sys on every call (~10 us). No C++ static guard:
// a fork() while another thread read it must not leave the child blocked
// (docs/reliability.md, fork()); racing threads store the same value.
std::atomic<unsigned> g_online_cpus{0};  // 0: not read yet

unsigned online_cpus() {
  unsigned cpus = g_online_cpus.load(std::memory_order_relaxed);
  if (cpus != 0) return cpus;
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  cpus = n > 0 ? static_cast<unsigned>(n) : 1u;
  g_online_cpus.store(cpus, std::memory_order_relaxed);
  return cpus;
}

// One split operation: chunk i covers [i * chunk, min((i + 1) * chunk, bytes)).
struct Job {
  ChunkFn work = nullptr;
  void* context = nullptr;
  std::size_t bytes = 0;
  std::size_t chunk = 0;
  unsigned chunks = 0;
  std::atomic<unsigned> next{0};
  std::atomic<unsigned> done{0};

  // Takes and runs chunks until none is left.
  void run_chunks() {
    for (;;) {
      const unsigned i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= chunks) return;
      const std::size_t offset = i * chunk;
      const std::size_t length = bytes - offset < chunk ? bytes - offset : chunk;
      work(offset, length, context);
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) done.notify_all();
    }
  }
  bool exhausted() const { return next.load(std::memory_order_relaxed) >= chunks; }
};

// The helper threads of one process (see cpu_parallel.h). Leaked on purpose:
// helpers may still sleep on its condition variable at exit.
class Helpers {
 public:
  explicit Helpers(unsigned count) : pid_(getpid()) {
    sigset_t block, saved;
    sigfillset(&block);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) {
      sigdelset(&block, sig);
    }
    pthread_sigmask(SIG_BLOCK, &block, &saved);  // helpers never take the application's signals
    try {
      for (unsigned i = 0; i < count; ++i) {
        std::thread helper([this] { loop(); });
        pthread_setname_np(helper.native_handle(), "anydev-cpu-split");
        // Not SCHED_BATCH (unlike the stream workers): a helper is woken while
        // its caller works through a chunk of its own, and should start on
        // the idle core at once; SCHED_BATCH delays that start and made split
        // copies vary far more from run to run (docs/performance.md).
        helper.detach();
        ++started_;
      }
    } catch (...) {
      // Fewer helpers (perhaps none): split_work still finishes every chunk itself.
    }
    pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  }

  pid_t pid() const { return pid_; }
  unsigned started() const { return started_; }

  void offer(const std::shared_ptr<Job>& job) {
    {
      std::lock_guard<std::mutex> hold(mutex_);
      jobs_.push_back(job);
    }
    cv_.notify_all();
  }

  void withdraw(const std::shared_ptr<Job>& job) {
    std::lock_guard<std::mutex> hold(mutex_);
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
      if (*it == job) {
        jobs_.erase(it);
        return;
      }
    }
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return !jobs_.empty(); });
      std::shared_ptr<Job> job = jobs_.front();
      if (job->exhausted()) {
        jobs_.pop_front();
        continue;
      }
      lock.unlock();
      job->run_chunks();
      job.reset();
      lock.lock();
    }
  }

  const pid_t pid_;
  unsigned started_ = 0;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> jobs_;
};

std::atomic<Helpers*> g_helpers{nullptr};
std::mutex g_helpers_start;

// A fork() while a parent thread starts helpers must not leave
// g_helpers_start locked in the child, which starts its own helpers.
[[maybe_unused]] const bool g_helpers_fork_handlers =
    pthread_atfork([] { g_helpers_start.lock(); }, [] { g_helpers_start.unlock(); },
                   [] { g_helpers_start.unlock(); }) == 0;

// This process's helpers, started on first use (again in a forked child).
Helpers* helpers(unsigned wanted) {
  Helpers* current = g_helpers.load(std::memory_order_acquire);
  if (current != nullptr && current->pid() == getpid()) return current;
  std::lock_guard<std::mutex> hold(g_helpers_start);
  current = g_helpers.load(std::memory_order_acquire);
  if (current != nullptr && current->pid() == getpid()) return current;
  current = new Helpers(wanted);  // a parent's set, if any, is left behind in a child
  g_helpers.store(current, std::memory_order_release);
  return current;
}

}  // namespace

void set_split_threads(unsigned threads) { g_threads.store(threads, std::memory_order_relaxed); }

unsigned split_threads() {
  const unsigned set = g_threads.load(std::memory_order_relaxed);
  if (set > 0) return set;
  const unsigned cpus = online_cpus();
  return cpus >= kMinCpusToSplit ? cpus : 1;
}

void split_work(std::size_t bytes, ChunkFn work, void* context) {
  const unsigned threads = split_threads();
  Helpers* pool = threads > 1 ? helpers(threads - 1) : nullptr;
  if (pool == nullptr || pool->started() == 0 || bytes < 2 * 4096) {
    work(0, bytes, context);
    return;
  }
  // Chunks of at most kSplitChunkBytes (fewer when there are few bytes per
  // thread), taken in address order by whichever thread is free, so a helper
  // that wakes late or runs slowly leaves its share to the others; chunks
  // start on 4096-byte boundaries so every pattern's phase is kept.
  const unsigned parts = pool->started() + 1 < threads ? pool->started() + 1 : threads;
  std::size_t chunk = (bytes + parts - 1) / parts;
  if (chunk > kSplitChunkBytes) chunk = kSplitChunkBytes;
  chunk = (chunk + 4095) & ~std::size_t{4095};
  auto job = std::make_shared<Job>();
  job->work = work;
  job->context = context;
  job->bytes = bytes;
  job->chunk = chunk;
  job->chunks = static_cast<unsigned>((bytes + chunk - 1) / chunk);
  pool->offer(job);
  job->run_chunks();
  pool->withdraw(job);
  for (unsigned seen = job->done.load(std::memory_order_acquire); seen < job->chunks;
       seen = job->done.load(std::memory_order_acquire)) {
    job->done.wait(seen, std::memory_order_acquire);
  }
}

}  // namespace anydev::cpu
