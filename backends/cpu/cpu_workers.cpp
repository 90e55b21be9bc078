// SPDX-License-Identifier: Apache-2.0
#include "cpu_workers.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <system_error>

#include "cpu_services.h"

namespace anydev::cpu {
namespace {

// Blocks every asynchronous signal on the calling thread while it lives (the
// threads started meanwhile inherit the mask), so that signals meant for the
// application are never delivered to a worker. Signals raised by a fault
// stay unblocked: blocking them would make the kernel kill the process
// without running the application's (or a sanitizer's) handler.
class ScopedSignalMask {
 public:
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

// SCHED_BATCH: waking the thread never preempts the waker. Without it the
// scheduler tends to run a freshly woken worker on the enqueuing thread's
// own core at once, so the caller loses its core for the whole task
// (measured: a 4 MiB fill's enqueue took the fill's full time). Needs no
// privilege; failure is harmless.
void set_batch_policy(pthread_t thread) {
  sched_param param{};
  param.sched_priority = 0;
  pthread_setschedparam(thread, SCHED_BATCH, &param);
}

std::string read_first_line(const char* path) {
  std::FILE* file = std::fopen(path, "re");
  if (file == nullptr) return "?";
  char line[64] = {};
  const bool ok = std::fgets(line, sizeof line, file) != nullptr;
  std::fclose(file);
  if (!ok) return "?";
  std::string text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string limit_text(rlim_t value) {
  return value == RLIM_INFINITY ? std::string("unlimited") : std::to_string(value);
}

long live_threads() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  long count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

const char* errno_name(int error) {
  switch (error) {
    case EAGAIN:
      return "EAGAIN";
    case ENOMEM:
      return "ENOMEM";
    case EPERM:
      return "EPERM";
    case EINVAL:
      return "EINVAL";
    default:
      return "errno";
  }
}

std::atomic<WorkerPool*> g_process_pool{nullptr};
std::mutex g_process_pool_start;

}  // namespace

unsigned default_worker_count() {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const unsigned n = cpus > 0 ? static_cast<unsigned>(cpus) : 1u;
  return n < kMinStreamWorkers ? kMinStreamWorkers : n > kMaxStreamWorkers ? kMaxStreamWorkers : n;
}

std::string describe_thread_start_failure(int error) {
  rlimit nproc{};
  const bool have_nproc = getrlimit(RLIMIT_NPROC, &nproc) == 0;
  std::string text = std::string("pthread_create failed: ") + std::strerror(error) + " (" +
                     errno_name(error) + " " + std::to_string(error) + ")";
  text += "; limits: RLIMIT_NPROC (threads of this user) soft " +
          (have_nproc ? limit_text(nproc.rlim_cur) : std::string("?")) + ", hard " +
          (have_nproc ? limit_text(nproc.rlim_max) : std::string("?"));
  text += ", kernel.threads-max " + read_first_line("/proc/sys/kernel/threads-max");
  text += ", kernel.pid_max " + read_first_line("/proc/sys/kernel/pid_max");
  text += "; this process has " + std::to_string(live_threads()) + " threads";
  if (error == ENOMEM) text += " (ENOMEM: no memory or mappings left for a thread's stack)";
  return text;
}

WorkerPool::WorkerPool(unsigned workers) : wanted_(workers > 0 ? workers : 1), pid_(getpid()) {
  threads_.reserve(wanted_);
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> hold(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

WorkerPool& WorkerPool::process_pool() {
  WorkerPool* current = g_process_pool.load(std::memory_order_acquire);
  if (current != nullptr && current->pid_ == getpid()) return *current;
  std::lock_guard<std::mutex> hold(g_process_pool_start);
  current = g_process_pool.load(std::memory_order_acquire);
  if (current != nullptr && current->pid_ == getpid()) return *current;
  // Leaked: workers may sleep on it at exit; a parent's pool, if any, is
  // left behind in a forked child (its threads do not exist there).
  current = new WorkerPool(default_worker_count());
  g_process_pool.store(current, std::memory_order_release);
  return *current;
}

unsigned WorkerPool::running() {
  std::lock_guard<std::mutex> hold(mutex_);
  return static_cast<unsigned>(threads_.size());
}

void WorkerPool::ensure_started() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (threads_.size() >= wanted_) return;
  int error = 0;
  {
    ScopedSignalMask mask;
    while (threads_.size() < wanted_) {
      try {
        threads_.emplace_back([this] { loop(); });  // capacity reserved: no reallocation
      } catch (const std::system_error& e) {
        error = e.code().value();
        break;
      }
      pthread_setname_np(threads_.back().native_handle(), "anydev-cpu");
      set_batch_policy(threads_.back().native_handle());
    }
  }
  if (error == 0) return;
  const std::size_t started = threads_.size();
  const bool warn = !warned_ && started > 0;
  warned_ = warned_ || warn;
  lock.unlock();
  const std::string why = describe_thread_start_failure(error);
  if (started == 0) {
    throw ThreadStartError(
        "cannot start any of the " + std::to_string(wanted_) + " stream worker threads: " + why,
        error);
  }
  if (warn) {
    log(ANYDEV_LOG_WARN, "running streams on " + std::to_string(started) + " of " +
                             std::to_string(wanted_) + " worker threads: " + why);
  }
}

void WorkerPool::schedule(PooledStream* state) noexcept {
  bool wake = false;
  {
    std::lock_guard<std::mutex> hold(mutex_);
    state->run_next_ = nullptr;
    const bool high = state->priority_ < 0;
    PooledStream*& head = high ? high_head_ : head_;
    PooledStream*& tail = high ? high_tail_ : tail_;
    if (tail == nullptr) {
      head = state;
    } else {
      tail->run_next_ = state;
    }
    tail = state;
    wake = idle_ > 0;
  }
  if (wake) cv_.notify_one();
}

bool WorkerPool::has_waiting() noexcept {
  std::lock_guard<std::mutex> hold(mutex_);
  return head_ != nullptr || high_head_ != nullptr;
}

void WorkerPool::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    while (head_ == nullptr && high_head_ == nullptr) {
      if (stopping_) return;
      ++idle_;
      cv_.wait(lock);
      --idle_;
    }
    const bool high = high_head_ != nullptr;
    PooledStream*& head = high ? high_head_ : head_;
    PooledStream*& tail = high ? high_tail_ : tail_;
    PooledStream* state = head;
    head = state->run_next_;
    if (head == nullptr) tail = nullptr;
    state->run_next_ = nullptr;
    std::shared_ptr<PooledStream> held = std::move(state->self_);
    lock.unlock();
    state->run_on_worker(held);
    held.reset();  // may destroy a state whose Stream is gone
    lock.lock();
  }
}

}  // namespace anydev::cpu
