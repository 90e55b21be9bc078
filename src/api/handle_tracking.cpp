// SPDX-License-Identifier: Apache-2.0
// The live-handle set behind note_created / note_destroyed / check_live, the
// leak table and check_host_access (handle_tracking.h). Thread-safe.
#include "api/handle_tracking.h"

#include <execinfo.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "api/api_common.h"
#include "api/buffer_access.h"
#include "layers/layer_config.h"
#include "layers/validation.h"
#include "support/core_mutex.h"
#include "support/dtype.h"
#include "support/fork_guard.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core::handles {

using layers::layer_settings;
using layers::running_host_write;
using layers::ValidateMode;

namespace {

constexpr const char* kKindNames[] = {"context", "stream", "event", "buffer"};
constexpr std::size_t kMaxReleased = 1u << 20;  // remembered released addresses
constexpr int kMaxFrames = 24;

// One live handle.
struct Record {
  HandleKind kind;
  std::uint64_t serial;  // creation order
  std::vector<void*> frames;
};

// The live-handle set. Never destroyed (handles die during exit too).
class HandleSet {
 public:
  // Fork-safe, not a guarded static (fork_guard.h).
  static HandleSet& instance() {
    static ProcessObject<HandleSet> set;
    return set.get([] { return new HandleSet(); },
                   [](HandleSet&) { std::atexit([] { report_live_handles("at exit"); }); });
  }

  void created(HandleKind kind, const void* handle) {
    Record record{kind, 0, {}};
    if (layer_settings().validate == ValidateMode::backtrace) {
      record.frames.resize(kMaxFrames);
      record.frames.resize(static_cast<std::size_t>(backtrace(record.frames.data(), kMaxFrames)));
    }
    std::lock_guard lock(mutex_);
    record.serial = ++serial_;
    live_[handle] = std::move(record);
    released_.erase(handle);
  }

  void destroyed(const void* handle) {
    std::lock_guard lock(mutex_);
    live_.erase(handle);
    if (released_.size() < kMaxReleased) released_.insert(handle);
  }

  // "" when live and of `kind`; else why not.
  std::string check(HandleKind kind, const void* handle) {
    std::lock_guard lock(mutex_);
    const auto found = live_.find(handle);
    if (found != live_.end()) {
      if (found->second.kind == kind) return {};
      return cat("is a live ", kKindNames[static_cast<int>(found->second.kind)], " handle, not a ",
                 kKindNames[static_cast<int>(kind)], " handle");
    }
    if (released_.count(handle) != 0) {
      return "was already released (its last reference went): using it is a use-after-free";
    }
    return "is not a handle anydev created (a foreign or corrupted pointer)";
  }

  std::vector<std::pair<const void*, Record>> snapshot() {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<const void*, Record>> all(live_.begin(), live_.end());
    std::sort(all.begin(), all.end(),
              [](const auto& a, const auto& b) { return a.second.serial < b.second.serial; });
    return all;
  }

 private:
  HandleSet() : generation_(fork_generation()) {}

  CoreMutex mutex_;
  std::uint64_t serial_ = 0;
  std::unordered_map<const void*, Record> live_;
  std::unordered_set<const void*> released_;

 public:
  const std::uint64_t generation_;
};

std::string describe(const void* address, HandleKind kind) {
  switch (kind) {
    case HandleKind::context: {
      const auto* ctx = static_cast<const anydev_context_s*>(
          static_cast<const TrackedHandle<HandleKind::context>*>(address));
      return cat("context ", static_cast<const void*>(ctx), " on ",
                 describe_device(ctx->state->backend, ctx->state->device), ", ", ctx->refs.load(),
                 " reference(s)");
    }
    case HandleKind::stream: {
      const auto* s = static_cast<const anydev_stream_s*>(
          static_cast<const TrackedHandle<HandleKind::stream>*>(address));
      return cat("stream ", static_cast<const void*>(s), " on ",
                 describe_device(s->stream->backend, s->stream->device), ", ", s->refs.load(),
                 " reference(s)");
    }
    case HandleKind::event: {
      const auto* e = static_cast<const anydev_event_s*>(
          static_cast<const TrackedHandle<HandleKind::event>*>(address));
      return cat("event ", static_cast<const void*>(e), " on ",
                 describe_device(e->backend, e->device), ", ", e->refs.load(), " reference(s)");
    }
    case HandleKind::buffer: {
      const auto* b = static_cast<const anydev_buffer_s*>(
          static_cast<const TrackedHandle<HandleKind::buffer>*>(address));
      const auto traits = dtype_traits(b->dtype);
      std::lock_guard lock(b->mutex);
      return cat(
          "buffer ", static_cast<const void*>(b), ": ",
          b->kind == ANYDEV_MEMORY_HOST ? "host" : "device", " memory, ", b->count, " ",
          traits ? traits->name : "?", " elements (", b->size_bytes, " bytes at offset ",
          b->offset_bytes, ") on ",
          b->context ? describe_device(b->context->backend, b->context->device) : std::string("?"),
          b->taken ? ", memory taken" : "", ", ", b->refs.load(), " reference(s)");
    }
  }
  return "?";
}

anydev_status_t report(anydev_status_t status, std::string message) {
  log(ANYDEV_LOG_ERROR, "validation: " + message);
  return set_error(status, message + " [ANYDEV_VALIDATE]");
}

}  // namespace

void note_created(HandleKind kind, const void* handle) {
  HandleSet::instance().created(kind, handle);
}

void note_destroyed(HandleKind, const void* handle) { HandleSet::instance().destroyed(handle); }

anydev_status_t check_live(const char* op, HandleKind kind, const void* handle, const char* what) {
  if (handle == nullptr) return ANYDEV_SUCCESS;  // the NULL check reports it
  std::string why = HandleSet::instance().check(kind, handle);
  if (why.empty()) return ANYDEV_SUCCESS;
  return report(ANYDEV_ERROR_INVALID_STATE,
                cat(op, ": the ", what, " argument ", handle, " ", why));
}

anydev_status_t check_host_access(const char* op, const anydev_buffer_s* buf, std::size_t offset,
                                  std::size_t count) {
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  if (buf->kind != ANYDEV_MEMORY_HOST || view.allocation->handle == nullptr) return ANYDEV_SUCCESS;
  const auto traits = dtype_traits(buf->dtype);
  const std::size_t size = traits ? traits->size : 1;
  if (offset > buf->count || count > buf->count - offset) {
    // offset + count may pass SIZE_MAX: then the end is not printed wrapped.
    if (count > SIZE_MAX - offset) {
      return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "the ", count, " elements from index ", offset,
                  " (their end, offset + count, overflows size_t) lie outside the buffer of ",
                  buf->count, " elements");
    }
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "elements ", offset, "..", offset + count,
                " lie outside the buffer of ", buf->count, " elements");
  }
  if (count == 0) return ANYDEV_SUCCESS;
  const std::size_t begin = buf->offset_bytes + offset * size;
  const std::size_t end = begin + count * size;
  const auto write = running_host_write(view.allocation->handle, begin, end);
  if (!write) return ANYDEV_SUCCESS;
  return report(
      ANYDEV_ERROR_INVALID_STATE,
      cat(op, ": host access to element", count > 1 ? "s " : " ", offset,
          count > 1 ? cat("..", offset + count) : std::string(), " (bytes ", begin, "..", end,
          " of the allocation) of host buffer ", static_cast<const void*>(buf), " (", buf->count,
          " ", traits ? traits->name : "?", " elements) while a ", write->what, " of ",
          write->bytes, " bytes into bytes ", write->offset, "..", write->offset + write->bytes,
          ", enqueued on ", describe_device(view.allocation->backend, write->device), " stream ",
          static_cast<const void*>(write->stream),
          ", has not completed: synchronize the stream (or an event recorded after it) first"));
}

std::size_t report_live_handles(const char* when) {
  HandleSet& set = HandleSet::instance();
  if (set.generation_ != fork_generation()) return 0;  // the parent's handles
  const auto live = set.snapshot();
  if (live.empty()) {
    log(ANYDEV_LOG_INFO, cat("validation: no live handles ", when));
    return 0;
  }
  std::string table = cat("validation: ", live.size(), " live handle(s) ", when, " (leaks):");
  for (const auto& [address, record] : live) {
    table += cat("\n  #", record.serial, " ", describe(address, record.kind));
    if (!record.frames.empty()) {
      char** symbols =
          backtrace_symbols(record.frames.data(), static_cast<int>(record.frames.size()));
      table += "\n    created at:";
      for (std::size_t i = 0; symbols != nullptr && i < record.frames.size(); ++i) {
        table += cat("\n      ", symbols[i]);
      }
      std::free(symbols);
    }
  }
  log(ANYDEV_LOG_ERROR, table);
  return live.size();
}

}  // namespace anydev::core::handles
