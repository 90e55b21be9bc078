// SPDX-License-Identifier: Apache-2.0
#include "layers/trace.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "layers/layer_config.h"
#include "layers/layer_table.h"
#include "support/core_mutex.h"
#include "support/file_output.h"
#include "support/fork_guard.h"
#include "support/format.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core::layers {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::microseconds(50);

// One traced call. Times in microseconds since the tracer started; start and
// end stay -1 for a call that runs no work on a stream.
struct Op {
  const char* name;
  const char* backend;
  int device;
  int stream;  // stream id, 0 for none
  int host_thread;
  std::size_t bytes;
  double call_begin;
  double call_end;
  double start = -1;
  double end = -1;
  anydev_status_t status;
};

// An operation whose completion the tracer waits for.
struct Pending {
  std::size_t op;
  anydev_bk_event_t event;
  const anydev_backend_table_t* table;  // the backend's own table
};

struct StreamState {
  int id;
  int device;
  double last_end = 0;
  std::deque<Pending> pending;
};

// Owns every record; never destroyed (late releases during exit still
// trace). Thread-safe: mutex_ guards everything but disabled_.
class Tracer {
 public:
  // Fork-safe, not a guarded static (fork_guard.h). First made under the
  // registry's lock (wrap_trace), which fork() waits for, so the fork
  // handlers exist before any fork can see the tracer.
  static Tracer& instance() {
    static ProcessObject<Tracer> tracer;
    return tracer.get([] { return new Tracer(); },
                      [](Tracer&) {
                        pthread_atfork([] { instance().mutex_.lock(); },
                                       [] { instance().mutex_.unlock(); },
                                       [] {
                                         Tracer& t = instance();
                                         t.disabled_.store(true);
                                         // The parent's thread does not exist here.
                                         t.thread_ = nullptr;
                                         t.mutex_.unlock();
                                       });
                        std::atexit([] { instance().at_exit(); });
                      });
  }

  bool disabled() const { return disabled_.load(std::memory_order_relaxed); }

  double now() const {
    return std::chrono::duration<double, std::micro>(Clock::now() - origin_).count();
  }

  void note_stream(anydev_bk_stream_t stream, int device, const char* backend) {
    std::lock_guard lock(mutex_);
    const int id = static_cast<int>(labels_.size()) + 1;
    labels_.push_back(cat(backend, ":", device, " stream ", id));
    streams_[stream] = StreamState{id, device, 0, {}};
  }

  // Before the stream is destroyed: its traced work is finished first.
  void finish_stream(anydev_bk_stream_t stream) {
    std::lock_guard lock(mutex_);
    const auto found = streams_.find(stream);
    if (found != streams_.end()) finish_locked(found->second);
  }

  // After the stream was destroyed; writes the file when it was the last.
  void forget_stream(anydev_bk_stream_t stream) {
    std::lock_guard lock(mutex_);
    streams_.erase(stream);
    if (streams_.empty()) write_locked();
  }

  void host_call(const char* name, const char* backend, int device, anydev_bk_stream_t stream,
                 std::size_t bytes, double begin, anydev_status_t status) {
    const double end = now();
    std::lock_guard lock(mutex_);
    ops_.push_back(Op{name, backend, device, stream_id_locked(stream), host_thread(), bytes, begin,
                      end, -1, -1, status});
  }

  // Records an operation enqueued on `stream` and follows it with an event
  // of `table` to learn when it completes.
  void stream_op(const char* name, const anydev_backend_table_t* table, anydev_bk_stream_t stream,
                 std::size_t bytes, double begin, anydev_status_t status) {
    const double end = now();
    std::unique_lock lock(mutex_);
    const auto found = streams_.find(stream);
    const int device = found == streams_.end() ? -1 : found->second.device;
    ops_.push_back(Op{name, table->name, device, stream_id_locked(stream), host_thread(), bytes,
                      begin, end, -1, -1, status});
    if (status != ANYDEV_SUCCESS || found == streams_.end()) return;
    // Errors of the tracer's own event must not become the caller's.
    const anydev_status_t saved_status = last_error_status();
    const std::string saved_message = last_error_message();
    anydev_bk_event_t event = nullptr;
    bool followed = bk(table).event_create(device, &event) == ANYDEV_SUCCESS;
    if (followed && bk(table).event_record(event, stream) != ANYDEV_SUCCESS) {
      bk(table).event_destroy(event);
      followed = false;
    }
    set_error(saved_status, saved_message);
    if (!followed) {
      log(ANYDEV_LOG_DEBUG, cat("trace: no completion time for ", name, " on ", table->name));
      return;
    }
    found->second.pending.push_back(Pending{ops_.size() - 1, event, table});
    ++pending_count_;
    if (thread_ == nullptr && !stopping_) {
      thread_ = new std::thread([this] { poll_loop(); });
    }
    wake_.notify_one();
  }

  void write() {
    std::lock_guard lock(mutex_);
    for (auto& [stream, state] : streams_) finish_locked(state);
    write_locked();
  }

 private:
  Tracer() : origin_(Clock::now()), generation_(fork_generation()) {}

  static int host_thread() {
    static std::atomic<int> next{1};
    thread_local const int id = next.fetch_add(1);
    return id;
  }

  int stream_id_locked(anydev_bk_stream_t stream) const {
    if (stream == nullptr) return 0;
    const auto found = streams_.find(stream);
    return found == streams_.end() ? 0 : found->second.id;
  }

  void complete_locked(StreamState& state, double when) {
    Pending pending = state.pending.front();
    state.pending.pop_front();
    --pending_count_;
    Op& op = ops_[pending.op];
    op.end = when;
    op.start = std::min(std::max(op.call_begin, state.last_end), when);
    state.last_end = when;
    bk(pending.table).event_destroy(pending.event);
  }

  void finish_locked(StreamState& state) {
    while (!state.pending.empty()) {
      bk(state.pending.front().table).event_synchronize(state.pending.front().event);
      complete_locked(state, now());
    }
  }

  void poll_loop() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      if (pending_count_ == 0) {
        wait(wake_, lock, [&] { return stopping_ || pending_count_ > 0; });
        continue;
      }
      for (auto& [stream, state] : streams_) {
        while (!state.pending.empty()) {
          int done = 0;
          const Pending& head = state.pending.front();
          if (bk(head.table).event_query(head.event, &done) == ANYDEV_SUCCESS && done == 0) break;
          complete_locked(state, now());
        }
      }
      wait_for(wake_, lock, kPollInterval);
    }
  }

  void at_exit() {
    if (disabled() || fork_generation() != generation_) return;
    std::thread* thread = nullptr;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      thread = std::exchange(thread_, nullptr);
    }
    wake_.notify_all();
    if (thread != nullptr) {
      thread->join();
      delete thread;
    }
    write();
  }

  void write_locked() {
    if (disabled() || fork_generation() != generation_) return;
    const std::string& path = layer_settings().trace_path;
    const std::string failure = write_file_replacing(path, [&](std::FILE* file) {
      std::fprintf(file, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
      std::fprintf(file,
                   "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"anydev "
                   "host threads\"}},\n"
                   "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"anydev "
                   "streams\"}}");
      for (std::size_t i = 0; i < labels_.size(); ++i) {
        std::fprintf(file,
                     ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":%zu,"
                     "\"args\":{\"name\":\"%s\"}}",
                     i + 1, labels_[i].c_str());
      }
      int max_thread = 0;
      for (std::size_t i = 0; i < ops_.size(); ++i) {
        const Op& op = ops_[i];
        max_thread = std::max(max_thread, op.host_thread);
        std::fprintf(file,
                     ",\n{\"name\":\"%s\",\"cat\":\"call\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,"
                     "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"backend\":\"%s\",\"device\":%d,"
                     "\"stream\":%d,\"bytes\":%zu,\"status\":\"%s\"}}",
                     op.name, op.host_thread, op.call_begin, op.call_end - op.call_begin,
                     op.backend, op.device, op.stream, op.bytes,
                     op.status == ANYDEV_BK_DECLINED ? "declined" : anydev_status_name(op.status));
        if (op.start < 0) continue;
        std::fprintf(file,
                     ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":2,\"tid\":%d,"
                     "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"backend\":\"%s\",\"device\":%d,"
                     "\"stream\":%d,\"bytes\":%zu,\"enqueue_us\":%.3f,\"start_us\":%.3f,"
                     "\"end_us\":%.3f}}",
                     op.name, op.backend, op.stream, op.start, op.end - op.start, op.backend,
                     op.device, op.stream, op.bytes, op.call_begin, op.start, op.end);
        std::fprintf(
            file,
            ",\n{\"name\":\"enqueue\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":%zu,\"pid\":1,"
            "\"tid\":%d,\"ts\":%.3f}"
            ",\n{\"name\":\"enqueue\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%zu,"
            "\"pid\":2,\"tid\":%d,\"ts\":%.3f}",
            i + 1, op.host_thread, op.call_begin, i + 1, op.stream, op.start);
      }
      for (int t = 1; t <= max_thread; ++t) {
        std::fprintf(file,
                     ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
                     "\"args\":{\"name\":\"host thread %d\"}}",
                     t, t);
      }
      std::fprintf(file, "\n]}\n");
      return std::ferror(file) == 0;
    });
    // The file is written several times (see trace.h): a failure is logged
    // once, until a write succeeds or fails for another reason.
    if (!failure.empty()) {
      if (failure != logged_failure_) log(ANYDEV_LOG_ERROR, cat("trace: ", failure));
      logged_failure_ = failure;
      return;
    }
    logged_failure_.clear();
    log(ANYDEV_LOG_INFO, cat("trace: wrote ", ops_.size(), " calls to ", escaped(path)));
  }

  CoreMutex mutex_;
  std::condition_variable wake_;
  std::vector<Op> ops_;
  std::vector<std::string> labels_;  // stream id - 1 -> "cpu:0 stream 3"
  std::unordered_map<anydev_bk_stream_t, StreamState> streams_;
  std::size_t pending_count_ = 0;
  std::thread* thread_ = nullptr;
  std::string logged_failure_;  // the last write failure logged; empty after a success
  bool stopping_ = false;
  std::atomic<bool> disabled_{false};  // in a forked child
  const Clock::time_point origin_;
  const std::uint64_t generation_;
};

const char* copy_name(const anydev_bk_memory_ref_t& dst, const anydev_bk_memory_ref_t& src) {
  const bool from_device = src.kind == ANYDEV_BK_MEMORY_DEVICE;
  const bool to_device = dst.kind == ANYDEV_BK_MEMORY_DEVICE;
  if (from_device) return to_device ? "copy device->device" : "copy device->host";
  return to_device ? "copy host->device" : "copy host->host";
}

// The layer's own functions: the traced entries (wrap_table<TraceLayer>, layer_table.h); each
// finds its inner table through its instance. Stateless: the records are the Tracer's; thread-
// safe.
struct TraceLayer {
  static Tracer* tracer() {
    Tracer& t = Tracer::instance();
    return t.disabled() ? nullptr : &t;
  }
  static anydev_status_t stream_create(void* instance, int device, anydev_bk_stream_t* out) {
    const anydev_backend_table_t* inner = inner_of(instance);
    Tracer* t = tracer();
    const double begin = t ? t->now() : 0;
    const anydev_status_t s = bk(inner).stream_create(device, out);
    if (t == nullptr) return s;
    if (s == ANYDEV_SUCCESS) t->note_stream(*out, device, inner->name);
    t->host_call("stream_create", inner->name, device, s == ANYDEV_SUCCESS ? *out : nullptr, 0,
                 begin, s);
    return s;
  }
  static anydev_status_t stream_wrap_native(void* instance, int device, void* native,
                                            anydev_bk_stream_t* out) {
    const anydev_backend_table_t* inner = inner_of(instance);
    Tracer* t = tracer();
    const anydev_status_t s = bk(inner).stream_wrap_native(device, native, out);
    if (t != nullptr && s == ANYDEV_SUCCESS) t->note_stream(*out, device, inner->name);
    return s;
  }
  static anydev_status_t stream_destroy(void* instance, anydev_bk_stream_t stream) {
    const anydev_backend_table_t* inner = inner_of(instance);
    Tracer* t = tracer();
    if (t == nullptr) return bk(inner).stream_destroy(stream);
    const double begin = t->now();
    t->finish_stream(stream);
    const anydev_status_t s = bk(inner).stream_destroy(stream);
    t->host_call("stream_destroy", inner->name, -1, stream, 0, begin, s);
    t->forget_stream(stream);
    return s;
  }
  static anydev_status_t stream_synchronize(void* instance, anydev_bk_stream_t stream) {
    const anydev_backend_table_t* inner = inner_of(instance);
    Tracer* t = tracer();
    const double begin = t ? t->now() : 0;
    const anydev_status_t s = bk(inner).stream_synchronize(stream);
    if (t != nullptr) t->host_call("stream_synchronize", inner->name, -1, stream, 0, begin, s);
    return s;
  }
  static anydev_status_t event_synchronize(void* instance, anydev_bk_event_t event) {
    const anydev_backend_table_t* inner = inner_of(instance);
    Tracer* t = tracer();
    const double begin = t ? t->now() : 0;
    const anydev_status_t s = bk(inner).event_synchronize(event);
    if (t != nullptr) t->host_call("event_synchronize", inner->name, -1, nullptr, 0, begin, s);
    return s;
  }
  static anydev_status_t host_alloc(void* instance, int device, size_t bytes, void** handle,
                                    void** address) {
    const anydev_backend_table_t* inner = inner_of(instance);
    Tracer* t = tracer();
    const double begin = t ? t->now() : 0;
    const anydev_status_t s = bk(inner).host_alloc(device, bytes, handle, address);
    if (t != nullptr) t->host_call("host_alloc", inner->name, device, nullptr, bytes, begin, s);
    return s;
  }
  static anydev_status_t memory_free(void* instance, int device, anydev_bk_memory_kind_t kind,
                                     void* handle) {
    const anydev_backend_table_t* inner = inner_of(instance);
    Tracer* t = tracer();
    const double begin = t ? t->now() : 0;
    const anydev_status_t s = bk(inner).memory_free(device, kind, handle);
    if (t != nullptr) t->host_call("memory_free", inner->name, device, nullptr, 0, begin, s);
    return s;
  }
  static anydev_status_t device_alloc(void* instance, int device, size_t bytes,
                                      anydev_bk_stream_t stream, void** handle, void** address) {
    const anydev_backend_table_t* inner = inner_of(instance);
    Tracer* t = tracer();
    const double begin = t ? t->now() : 0;
    const anydev_status_t s = bk(inner).device_alloc(device, bytes, stream, handle, address);
    if (t != nullptr) t->stream_op("device_alloc", inner, stream, bytes, begin, s);
    return s;
  }
  static anydev_status_t memory_free_async(void* instance, int device, void* handle,
                                           anydev_bk_stream_t stream) {
    const anydev_backend_table_t* inner = inner_of(instance);
    Tracer* t = tracer();
    const double begin = t ? t->now() : 0;
    const anydev_status_t s = bk(inner).memory_free_async(device, handle, stream);
    if (t != nullptr) t->stream_op("memory_free_async", inner, stream, 0, begin, s);
    return s;
  }
  static anydev_status_t copy(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              anydev_bk_memory_ref_t src, size_t bytes) {
    const anydev_backend_table_t* inner = inner_of(instance);
    Tracer* t = tracer();
    const double begin = t ? t->now() : 0;
    const anydev_status_t s = bk(inner).copy(stream, dst, src, bytes);
    if (t != nullptr) t->stream_op(copy_name(dst, src), inner, stream, bytes, begin, s);
    return s;
  }
  static anydev_status_t fill(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              const void* pattern, size_t pattern_size, size_t bytes) {
    const anydev_backend_table_t* inner = inner_of(instance);
    Tracer* t = tracer();
    const double begin = t ? t->now() : 0;
    const anydev_status_t s = bk(inner).fill(stream, dst, pattern, pattern_size, bytes);
    if (t != nullptr) t->stream_op("fill", inner, stream, bytes, begin, s);
    return s;
  }
  static anydev_status_t stream_wait_event(void* instance, anydev_bk_stream_t stream,
                                           anydev_bk_event_t event) {
    const anydev_backend_table_t* inner = inner_of(instance);
    Tracer* t = tracer();
    const double begin = t ? t->now() : 0;
    const anydev_status_t s = bk(inner).stream_wait_event(stream, event);
    if (t != nullptr) t->stream_op("wait_event", inner, stream, 0, begin, s);
    return s;
  }
};

}  // namespace

const anydev_backend_table_t* wrap_trace(const anydev_backend_table_t* inner) {
  Tracer::instance();  // registers the exit handler before any stream exists
  return wrap_table<TraceLayer>(inner);
}

void write_trace() { Tracer::instance().write(); }

}  // namespace anydev::core::layers
