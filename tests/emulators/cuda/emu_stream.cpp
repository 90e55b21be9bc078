// SPDX-License-Identifier: Apache-2.0
#include "emu_stream.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "emu_config.h"

namespace anydev_emu {
namespace {

std::string hex_text(const void* p) {
  std::ostringstream out;
  out << p;
  return out.str();
}

struct Registry {
  std::mutex mutex;
  std::map<CUstream, StreamRef> streams;
  std::map<CUevent, EventRef> events;
  std::map<int, StreamRef> default_streams;  // by device
  std::uintptr_t next_handle = 0;            // handles are never reused
};

// Opaque handles from a counter: a destroyed handle never names a new object.
template <class Handle>
Handle new_handle(Registry& r) {
  r.next_handle += 16;
  return reinterpret_cast<Handle>(std::uintptr_t{0xc0da00000000} + r.next_handle);
}

Registry& R() {
  static Registry* registry = new Registry;  // never destroyed
  return *registry;
}

bool is_default_stream(CUstream handle) {
  return handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD;
}

// CUDA_ERROR_INVALID_CONTEXT when ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT wants
// more current on the calling thread than there is for a call on a handle of
// `owner` (emu_config.h); a rule of the driver, so not reported as misuse.
CUresult check_stream_context(const Context* owner) {
  const int rule = get_config().stream_context;
  if (rule == 0) return CUDA_SUCCESS;
  const Context* current = current_context();
  if (current == nullptr || (rule == 2 && current != owner)) return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

}  // namespace

StreamRef Stream::create(Context* context) {
  auto stream = std::make_shared<Stream>(context);
  std::thread([stream] { stream->run(); }).detach();
  return stream;
}

void Stream::enqueue(const char* api, std::function<CUresult()> op) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(Task{api, std::move(op)});
  work_.notify_one();
}

CUresult Stream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
  const CUresult error = error_;
  error_ = CUDA_SUCCESS;
  return error;
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
    const CUresult result = task.op();
    const char* api = task.api;
    task = Task{};  // drop what the operation held before anyone sees it done
    std::lock_guard<std::mutex> lock(mutex_);
    busy_ = false;
    if (result != CUDA_SUCCESS) {
      report_misuse(std::string(api) + " failed while running on stream " + hex_text(this) +
                    " with CUresult " + std::to_string(result));
      if (error_ == CUDA_SUCCESS) error_ = result;
      if (is_sticky(result)) break_context(context_, result);
    }
    if (queue_.empty()) idle_.notify_all();
  }
}

CUresult lookup_stream(CUstream handle, const char* api, StreamRef* out) {
  Registry& r = R();
  if (is_default_stream(handle)) {
    Context* current = nullptr;
    if (const CUresult e = require_current(api, &current); e != CUDA_SUCCESS) return e;
    std::lock_guard<std::mutex> lock(r.mutex);
    StreamRef& stream = r.default_streams[current->device];
    if (stream == nullptr) stream = Stream::create(current);
    *out = stream;
    return CUDA_SUCCESS;
  }
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.streams.find(handle);
  if (it == r.streams.end()) {
    report_misuse(std::string(api) + ": unknown or destroyed stream " + hex_text(handle));
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (const CUresult e = sticky_error(it->second->context()); e != CUDA_SUCCESS) return e;
  // cuStreamGetCtx is how a caller learns the stream's context.
  if (std::string(api) != "cuStreamGetCtx") {
    if (const CUresult e = check_stream_context(it->second->context()); e != CUDA_SUCCESS) {
      return e;
    }
  }
  *out = it->second;
  return CUDA_SUCCESS;
}

CUstream register_object(const StreamRef& stream) {
  Registry& r = R();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto handle = new_handle<CUstream>(r);
  r.streams[handle] = stream;
  return handle;
}

CUresult unregister(CUstream handle, StreamRef* out) {
  Registry& r = R();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.streams.find(handle);
  if (it == r.streams.end()) {
    report_misuse("cuStreamDestroy: unknown or already destroyed stream " + hex_text(handle));
    return CUDA_ERROR_INVALID_HANDLE;
  }
  *out = std::move(it->second);
  r.streams.erase(it);
  return CUDA_SUCCESS;
}

CUresult lookup_event(CUevent handle, const char* api, EventRef* out) {
  Registry& r = R();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.events.find(handle);
  if (it == r.events.end()) {
    report_misuse(std::string(api) + ": unknown or destroyed event " + hex_text(handle));
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (const CUresult e = sticky_error(it->second->context); e != CUDA_SUCCESS) return e;
  // A stream may wait for an event of another context: its stream decides.
  if (std::string(api) != "cuStreamWaitEvent") {
    if (const CUresult e = check_stream_context(it->second->context); e != CUDA_SUCCESS) return e;
  }
  *out = it->second;
  return CUDA_SUCCESS;
}

CUevent register_object(const EventRef& event) {
  Registry& r = R();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto handle = new_handle<CUevent>(r);
  r.events[handle] = event;
  return handle;
}

CUresult unregister(CUevent handle, EventRef* out) {
  Registry& r = R();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.events.find(handle);
  if (it == r.events.end()) {
    report_misuse("cuEventDestroy: unknown or already destroyed event " + hex_text(handle));
    return CUDA_ERROR_INVALID_HANDLE;
  }
  *out = std::move(it->second);
  r.events.erase(it);
  return CUDA_SUCCESS;
}

}  // namespace anydev_emu
