// SPDX-License-Identifier: Apache-2.0
#include "core_stream.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "core_config.h"
#include "core_share.h"

namespace anydev_emu::core {
namespace {

std::string hex_text(const void* p) {
  std::ostringstream out;
  out << p;
  return out.str();
}

struct Registry {
  std::mutex mutex;
  std::map<const void*, StreamRef> streams;
  std::map<const void*, EventRef> events;
  std::map<int, StreamRef> default_streams;  // by device
  std::uintptr_t next_handle = 0;            // handles are never reused
};

// Opaque handles from a counter: a destroyed handle never names a new object.
void* new_handle(Registry& r) {
  r.next_handle += 16;
  return reinterpret_cast<void*>(std::uintptr_t{0xc0da00000000} + r.next_handle);
}

Registry& R() {
  static Registry* registry = new Registry;  // never destroyed
  return *registry;
}

Context* context_of(const StreamRef& stream) { return stream->context(); }
Context* context_of(const EventRef& event) { return event->context; }

// The live object behind `handle`; invalid_handle when unknown, the sticky
// error when its context is broken. Caller holds the registry's mutex.
template <class Object>
Status find(const std::map<const void*, Object>& objects, const void* handle, const char* api,
            const char* kind, Object* out) {
  auto it = objects.find(handle);
  if (it == objects.end()) {
    return misuse(Status::invalid_handle,
                  std::string(api) + ": unknown or destroyed " + kind + " " + hex_text(handle));
  }
  if (const Status e = sticky_error(context_of(it->second)); e != Status::success) return e;
  *out = it->second;
  return Status::success;
}

template <class Object>
Status take(std::map<const void*, Object>& objects, const void* handle, const char* api,
            const char* kind, Object* out) {
  auto it = objects.find(handle);
  if (it == objects.end()) {
    return misuse(Status::invalid_handle, std::string(api) + ": unknown or already destroyed " +
                                              kind + " " + hex_text(handle));
  }
  *out = std::move(it->second);
  objects.erase(it);
  return Status::success;
}

std::map<const void*, StreamRef>& objects(Registry& r, const StreamRef*) { return r.streams; }
std::map<const void*, EventRef>& objects(Registry& r, const EventRef*) { return r.events; }

template <class Object>
Status lookup(const void* handle, const char* api, const char* kind, Object* out) {
  Registry& r = R();
  std::lock_guard<std::mutex> lock(r.mutex);
  return find(objects(r, out), handle, api, kind, out);
}

template <class Object>
void* add(const Object& object) {
  Registry& r = R();
  std::lock_guard<std::mutex> lock(r.mutex);
  void* handle = new_handle(r);
  objects(r, &object)[handle] = object;
  return handle;
}

template <class Object>
Status remove(const void* handle, const char* api, const char* kind, Object* out) {
  Registry& r = R();
  std::lock_guard<std::mutex> lock(r.mutex);
  return take(objects(r, out), handle, api, kind, out);
}

}  // namespace

StreamRef Stream::create(Context* context) {
  auto stream = std::make_shared<Stream>(context);
  std::thread([stream] { stream->run(); }).detach();
  return stream;
}

void Stream::enqueue(const char* api, std::function<Status()> op) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(Task{api, std::move(op)});
  work_.notify_one();
}

Status Stream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
  const Status error = error_;
  error_ = Status::success;
  return error;
}

void Stream::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

Status Stream::query() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!queue_.empty() || busy_) return Status::not_ready;
  }
  return synchronize();
}

void Stream::retire() {
  std::lock_guard<std::mutex> lock(mutex_);
  retired_ = true;
  work_.notify_one();
}

void Stream::run() {
  const auto delay = std::chrono::microseconds(get_config().delay_us);
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_.wait(lock, [this] { return !queue_.empty() || retired_; });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    const Status result = task.op();
    const char* api = task.api;
    task = Task{};  // drop what the operation held before anyone sees it done
    std::lock_guard<std::mutex> lock(mutex_);
    busy_ = false;
    if (result != Status::success) {
      report_misuse(std::string(api) + " failed while running on stream " + hex_text(this) + ": " +
                    status_text(result));
      if (error_ == Status::success) error_ = result;
      if (is_sticky(result)) break_context(context_, result);
    }
    if (queue_.empty()) idle_.notify_all();
  }
}

StreamRef default_stream(Context* context) {
  Registry& r = R();
  std::lock_guard<std::mutex> lock(r.mutex);
  StreamRef& stream = r.default_streams[context->device];
  if (stream == nullptr) stream = Stream::create(context);
  return stream;
}

Status lookup_stream(const void* handle, const char* api, StreamRef* out) {
  return lookup(handle, api, "stream", out);
}

void* register_object(const StreamRef& stream) { return add(stream); }

Status destroy_stream(const void* handle, const char* api) {
  StreamRef s;
  if (const Status e = remove(handle, api, "stream", &s); e != Status::success) return e;
  s->retire();                        // queued work still runs, as on a real device
  return sticky_error(s->context());  // destroyed, but a broken context says so
}

void drain_streams() {
  std::vector<StreamRef> all;
  {
    Registry& r = R();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (const auto& entry : r.streams) all.push_back(entry.second);
    for (const auto& entry : r.default_streams) all.push_back(entry.second);
  }
  for (const StreamRef& stream : all) stream->drain();
}

Status lookup_event(const void* handle, const char* api, EventRef* out) {
  return lookup(handle, api, "event", out);
}

void* register_object(const EventRef& event) { return add(event); }

Status destroy_event(const void* handle, const char* api) {
  EventRef e;
  if (const Status s = remove(handle, api, "event", &e); s != Status::success) return s;
  if (e->ipc != nullptr && e->creator) ipc_forget(*e->ipc);
  return sticky_error(e->context);  // a queued record keeps it alive
}

Status record_event(const EventRef& event, const StreamRef& stream, const char* api) {
  if (event->context != stream->context()) {
    return misuse(Status::invalid_handle,
                  std::string(api) + ": event of device " + std::to_string(event->context->device) +
                      " on a stream of device " + std::to_string(stream->context()->device));
  }
  if (event->ipc != nullptr) {
    ipc_record(event->ipc, stream, api);
    return Status::success;
  }
  std::uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(event->mutex);
    generation = ++event->recorded;
    event->pending.insert(generation);
  }
  stream->enqueue(api, [event, generation] {
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    std::lock_guard<std::mutex> lock(event->mutex);
    if (event->timing && generation > event->stamp_record) {
      event->stamp_record = generation;
      event->stamp_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
    }
    event->pending.erase(generation);
    event->done.notify_all();
    return Status::success;
  });
  return Status::success;
}

namespace {

// The clock reading of `event`'s latest record: invalid_handle when it has
// none (no timing, never recorded), not_ready while that record is queued.
Status latest_stamp(const EventRef& event, std::int64_t* ns) {
  if (event->ipc != nullptr) return Status::invalid_handle;
  std::lock_guard<std::mutex> lock(event->mutex);
  if (!event->timing || event->recorded == 0) return Status::invalid_handle;
  if (!event->is_done(event->recorded)) return Status::not_ready;
  *ns = event->stamp_ns;
  return Status::success;
}

}  // namespace

Status elapsed_time(const EventRef& start, const EventRef& end, float* ms) {
  if (start->context != end->context) return Status::invalid_handle;
  std::int64_t t0 = 0;
  std::int64_t t1 = 0;
  const Status a = latest_stamp(start, &t0);
  const Status b = latest_stamp(end, &t1);
  if (a == Status::invalid_handle || b == Status::invalid_handle) return Status::invalid_handle;
  if (a != Status::success) return a;
  if (b != Status::success) return b;
  *ms = static_cast<float>(static_cast<double>(t1 - t0) / 1e6);
  return Status::success;
}

Status query_event(const EventRef& event) {
  if (event->ipc != nullptr) return ipc_complete(*event->ipc) ? Status::success : Status::not_ready;
  std::lock_guard<std::mutex> lock(event->mutex);
  return event->is_done(event->recorded) ? Status::success : Status::not_ready;
}

void synchronize_event(const EventRef& event) {
  if (event->ipc != nullptr) return ipc_synchronize(*event->ipc);
  std::unique_lock<std::mutex> lock(event->mutex);
  const std::uint64_t target = event->recorded;
  event->done.wait(lock, [&] { return event->is_done(target); });
}

void wait_event(const StreamRef& stream, const EventRef& event) {
  if (event->ipc != nullptr) return ipc_wait(event->ipc, stream);
  std::uint64_t target = 0;
  {
    std::lock_guard<std::mutex> lock(event->mutex);
    target = event->recorded;  // the work captured by the latest record, as now
  }
  if (target == 0) return;
  stream->enqueue("wait for an event", [event, target] {
    std::unique_lock<std::mutex> lock(event->mutex);
    event->done.wait(lock, [&] { return event->is_done(target); });
    return Status::success;
  });
}

}  // namespace anydev_emu::core
