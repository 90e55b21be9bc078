#include "layers/validation.h"

#include <execinfo.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api_common.h"
#include "buffer_access.h"
#include "dtype.h"
#include "fork_guard.h"
#include "layers/layer_config.h"
#include "layers/table_slots.h"
#include "logging.h"
#include "status.h"

namespace anydev::core::layers {
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

  std::mutex mutex_;
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

// ---- pending host writes (the table layer) ---------------------------------

struct PendingWrite {
  std::size_t offset;
  std::size_t bytes;
  anydev_bk_event_t event;
  const anydev_backend_table_t* table;
  const char* what;  // "copy", "fill"
  anydev_bk_stream_t stream;
  int device;
};

class PendingWrites {
 public:
  static PendingWrites& instance() {
    static ProcessObject<PendingWrites> writes;  // never destroyed; fork-safe
    return writes.get([] { return new PendingWrites(); });
  }

  void note_stream(anydev_bk_stream_t stream, int device) {
    std::lock_guard lock(mutex_);
    streams_[stream] = device;
  }
  void forget_stream(anydev_bk_stream_t stream) {
    std::lock_guard lock(mutex_);
    streams_.erase(stream);
  }

  void add(const anydev_backend_table_t* table, anydev_bk_stream_t stream,
           const anydev_bk_memory_ref_t& dst, std::size_t bytes, const char* what) {
    std::lock_guard lock(mutex_);
    const auto found = streams_.find(stream);
    if (found == streams_.end()) return;
    const anydev_status_t saved_status = last_error_status();
    const std::string saved_message = last_error_message();
    anydev_bk_event_t event = nullptr;
    bool ok = table->event_create(found->second, &event) == ANYDEV_SUCCESS;
    if (ok && table->event_record(event, stream) != ANYDEV_SUCCESS) {
      table->event_destroy(event);
      ok = false;
    }
    set_error(saved_status, saved_message);
    if (!ok) {
      log(ANYDEV_LOG_WARN, "validation: cannot follow a host write (event failed)");
      return;
    }
    auto& list = writes_[dst.handle];
    prune_locked(list);
    list.push_back(PendingWrite{dst.offset, bytes, event, table, what, stream, found->second});
  }

  // Called before host memory is freed: its writes have completed.
  void forget_memory(void* handle) {
    std::lock_guard lock(mutex_);
    const auto found = writes_.find(handle);
    if (found == writes_.end()) return;
    for (const PendingWrite& w : found->second) w.table->event_destroy(w.event);
    writes_.erase(found);
  }

  // The first still-running write overlapping [begin, end) of `handle`.
  std::optional<PendingWrite> running(void* handle, std::size_t begin, std::size_t end) {
    std::lock_guard lock(mutex_);
    const auto found = writes_.find(handle);
    if (found == writes_.end()) return std::nullopt;
    prune_locked(found->second);
    for (const PendingWrite& w : found->second) {
      if (w.offset < end && begin < w.offset + w.bytes) return w;
    }
    return std::nullopt;
  }

 private:
  static void prune_locked(std::vector<PendingWrite>& list) {
    std::erase_if(list, [](const PendingWrite& w) {
      int done = 0;
      if (w.table->event_query(w.event, &done) == ANYDEV_SUCCESS && done == 0) return false;
      w.table->event_destroy(w.event);
      return true;
    });
  }

  std::mutex mutex_;
  std::unordered_map<anydev_bk_stream_t, int> streams_;
  std::unordered_map<void*, std::vector<PendingWrite>> writes_;
};

template <std::size_t S>
struct ValidationWrap {
  static inline const anydev_backend_table_t* inner = nullptr;

  static anydev_status_t stream_create(int device, anydev_bk_stream_t* out) {
    const anydev_status_t s = inner->stream_create(device, out);
    if (s == ANYDEV_SUCCESS) PendingWrites::instance().note_stream(*out, device);
    return s;
  }
  static anydev_status_t stream_wrap_native(int device, void* native, anydev_bk_stream_t* out) {
    const anydev_status_t s = inner->stream_wrap_native(device, native, out);
    if (s == ANYDEV_SUCCESS) PendingWrites::instance().note_stream(*out, device);
    return s;
  }
  static anydev_status_t stream_destroy(anydev_bk_stream_t stream) {
    PendingWrites::instance().forget_stream(stream);
    return inner->stream_destroy(stream);
  }
  static anydev_status_t memory_free(int device, anydev_bk_memory_kind_t kind, void* handle) {
    if (kind == ANYDEV_BK_MEMORY_HOST) PendingWrites::instance().forget_memory(handle);
    return inner->memory_free(device, kind, handle);
  }
  static anydev_status_t copy(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              anydev_bk_memory_ref_t src, size_t bytes) {
    const anydev_status_t s = inner->copy(stream, dst, src, bytes);
    if (s == ANYDEV_SUCCESS && dst.kind == ANYDEV_BK_MEMORY_HOST) {
      PendingWrites::instance().add(inner, stream, dst, bytes,
                                    src.kind == ANYDEV_BK_MEMORY_DEVICE ? "copy from device memory"
                                                                        : "copy from host memory");
    }
    return s;
  }
  static anydev_status_t fill(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              const void* pattern, size_t pattern_size, size_t bytes) {
    const anydev_status_t s = inner->fill(stream, dst, pattern, pattern_size, bytes);
    if (s == ANYDEV_SUCCESS && dst.kind == ANYDEV_BK_MEMORY_HOST) {
      PendingWrites::instance().add(inner, stream, dst, bytes, "fill");
    }
    return s;
  }
};

anydev_status_t report(anydev_status_t status, std::string message) {
  log(ANYDEV_LOG_ERROR, "validation: " + message);
  return set_error(status, message + " [ANYDEV_VALIDATE]");
}

}  // namespace

namespace detail {

std::atomic<int> g_validation{-1};

int read_validation() noexcept {
  // layer_settings() is read once; no static of its own (fork-safe).
  const int enabled = layer_settings().validate != ValidateMode::off ? 1 : 0;
  g_validation.store(enabled, std::memory_order_relaxed);
  return enabled;
}

}  // namespace detail

void note_created(HandleKind kind, const void* handle) {
  HandleSet::instance().created(kind, handle);
}

void note_destroyed(HandleKind, const void* handle) { HandleSet::instance().destroyed(handle); }

namespace {

// The (backend, device, peer) pairs with peer access enabled. Never
// destroyed; guarded by its mutex.
struct EnabledPeers {
  std::mutex mutex;
  std::set<std::tuple<const void*, int, int>> pairs;

  static EnabledPeers& instance() {
    static ProcessObject<EnabledPeers> peers;  // fork-safe (fork_guard.h)
    return peers.get([] { return new EnabledPeers(); });
  }
};

}  // namespace

void note_peer_enabled(const void* backend, int device, int peer) {
  EnabledPeers& peers = EnabledPeers::instance();
  std::lock_guard lock(peers.mutex);
  peers.pairs.emplace(backend, device, peer);
}

anydev_status_t check_peer_write(const char* op, const void* backend, const char* backend_name,
                                 int stream_device, int memory_device) {
  if (stream_device == memory_device) return ANYDEV_SUCCESS;
  {
    EnabledPeers& peers = EnabledPeers::instance();
    std::lock_guard lock(peers.mutex);
    if (peers.pairs.count({backend, stream_device, memory_device}) != 0) return ANYDEV_SUCCESS;
  }
  return report(
      ANYDEV_ERROR_INVALID_ARGUMENT,
      cat(op, ": a stream of ", backend_name, ":", stream_device, " would write device memory of ",
          backend_name, ":", memory_device, " without peer access (call enable_peer_access(",
          backend_name, ":", stream_device, " -> ", backend_name, ":", memory_device, ") first)"));
}

anydev_status_t check_live(const char* op, HandleKind kind, const void* handle, const char* what) {
  if (handle == nullptr) return ANYDEV_SUCCESS;  // the NULL check reports it
  std::string why = HandleSet::instance().check(kind, handle);
  if (why.empty()) return ANYDEV_SUCCESS;
  return report(ANYDEV_ERROR_INVALID_STATE,
                cat(op, ": the ", what, " argument ", handle, " ", why));
}

const anydev_backend_table_t* wrap_validation(const anydev_backend_table_t* inner) {
  static SlotTables<ValidationWrap> slots;
  return slots.wrap(inner);
}

anydev_status_t check_host_access(const char* op, const anydev_buffer_s* buf, std::size_t offset,
                                  std::size_t count) {
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buf, "buf", &view); s != ANYDEV_SUCCESS) return s;
  if (buf->kind != ANYDEV_MEMORY_HOST || view.allocation->handle == nullptr) return ANYDEV_SUCCESS;
  const auto traits = dtype_traits(buf->dtype);
  const std::size_t size = traits ? traits->size : 1;
  if (offset > buf->count || count > buf->count - offset) {
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "elements ", offset, "..", offset + count,
                " lie outside the buffer of ", buf->count, " elements");
  }
  if (count == 0) return ANYDEV_SUCCESS;
  const std::size_t begin = buf->offset_bytes + offset * size;
  const std::size_t end = begin + count * size;
  const auto write = PendingWrites::instance().running(view.allocation->handle, begin, end);
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

}  // namespace anydev::core::layers
