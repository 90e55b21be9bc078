// SPDX-License-Identifier: Apache-2.0
#include "layers/validation.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "layers/layer_config.h"
#include "layers/layer_table.h"
#include "support/core_mutex.h"
#include "support/fork_guard.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core::layers {
namespace {

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
    bool ok = bk(table).event_create(found->second, &event) == ANYDEV_SUCCESS;
    if (ok && bk(table).event_record(event, stream) != ANYDEV_SUCCESS) {
      bk(table).event_destroy(event);
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
    for (const PendingWrite& w : found->second) bk(w.table).event_destroy(w.event);
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
      if (bk(w.table).event_query(w.event, &done) == ANYDEV_SUCCESS && done == 0) return false;
      bk(w.table).event_destroy(w.event);
      return true;
    });
  }

  CoreMutex mutex_;
  std::unordered_map<anydev_bk_stream_t, int> streams_;
  std::unordered_map<void*, std::vector<PendingWrite>> writes_;
};

// The layer's own functions: the entries that follow streams and host writes
// (wrap_table<ValidationLayer>, layer_table.h); each finds its inner table through its instance.
// Stateless: the writes are PendingWrites'; thread-safe.
struct ValidationLayer {
  static anydev_status_t stream_create(void* instance, int device, anydev_bk_stream_t* out) {
    const anydev_backend_table_t* inner = inner_of(instance);
    const anydev_status_t s = bk(inner).stream_create(device, out);
    if (s == ANYDEV_SUCCESS) PendingWrites::instance().note_stream(*out, device);
    return s;
  }
  static anydev_status_t stream_wrap_native(void* instance, int device, void* native,
                                            anydev_bk_stream_t* out) {
    const anydev_backend_table_t* inner = inner_of(instance);
    const anydev_status_t s = bk(inner).stream_wrap_native(device, native, out);
    if (s == ANYDEV_SUCCESS) PendingWrites::instance().note_stream(*out, device);
    return s;
  }
  static anydev_status_t stream_destroy(void* instance, anydev_bk_stream_t stream) {
    const anydev_backend_table_t* inner = inner_of(instance);
    PendingWrites::instance().forget_stream(stream);
    return bk(inner).stream_destroy(stream);
  }
  static anydev_status_t memory_free(void* instance, int device, anydev_bk_memory_kind_t kind,
                                     void* handle) {
    const anydev_backend_table_t* inner = inner_of(instance);
    if (kind == ANYDEV_BK_MEMORY_HOST) PendingWrites::instance().forget_memory(handle);
    return bk(inner).memory_free(device, kind, handle);
  }
  static anydev_status_t copy(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              anydev_bk_memory_ref_t src, size_t bytes) {
    const anydev_backend_table_t* inner = inner_of(instance);
    const anydev_status_t s = bk(inner).copy(stream, dst, src, bytes);
    if (s == ANYDEV_SUCCESS && dst.kind == ANYDEV_BK_MEMORY_HOST) {
      PendingWrites::instance().add(inner, stream, dst, bytes,
                                    src.kind == ANYDEV_BK_MEMORY_DEVICE ? "copy from device memory"
                                                                        : "copy from host memory");
    }
    return s;
  }
  static anydev_status_t fill(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              const void* pattern, size_t pattern_size, size_t bytes) {
    const anydev_backend_table_t* inner = inner_of(instance);
    const anydev_status_t s = bk(inner).fill(stream, dst, pattern, pattern_size, bytes);
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

namespace {

// The (backend, device, peer) pairs with peer access enabled. Never
// destroyed; guarded by its mutex.
struct EnabledPeers {
  CoreMutex mutex;
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

const anydev_backend_table_t* wrap_validation(const anydev_backend_table_t* inner) {
  return wrap_table<ValidationLayer>(inner);
}

std::optional<PendingHostWrite> running_host_write(void* handle, std::size_t begin,
                                                   std::size_t end) {
  const auto write = PendingWrites::instance().running(handle, begin, end);
  if (!write) return std::nullopt;
  return PendingHostWrite{write->offset, write->bytes, write->what, write->stream, write->device};
}

}  // namespace anydev::core::layers
