// SPDX-License-Identifier: Apache-2.0
#include "transport/transfer_gate.h"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "layers/layer_table.h"
#include "support/fork_guard.h"
#include "support/status.h"

namespace anydev::core::transport {
namespace {

// One stream's open transfers and its first unreported error.
struct StreamGate {
  int open = 0;
  std::weak_ptr<GateDriver> driver;  // the last opener's
  anydev_status_t status = ANYDEV_SUCCESS;
  std::string message;
};

// Transfers open in the process: while 0, gated entries call straight
// through (one load; constant-initialized, so no guard and no indirection).
std::atomic<int> g_open_total{0};
// Streams with a gate entry, and errors kept and not yet reported: while 0,
// stream_destroy and synchronize skip the lock too. Written under the mutex.
std::atomic<std::size_t> g_tracked{0};
std::atomic<int> g_errors_kept{0};
// Counts gate_close calls: a driving waiter looks at the gates again only
// when it has moved.
std::atomic<std::uint64_t> g_closes{0};

// The process's gates.
struct Gates {
  std::mutex mutex;
  std::condition_variable closed;
  std::unordered_map<anydev_bk_stream_t, StreamGate> by_stream;  // guarded by mutex
};

Gates& gates() {
  // Lives for the process (used from exit-time threads); no C++ static guard
  // that a fork() could leave locked.
  static ProcessObject<Gates> g;
  return g.get([] { return new Gates; });
}

thread_local int t_bypass = 0;

// The waiting part of wait_for_transfers, out of line so that the layer's
// entries stay a load, a branch and a tail call when nothing is open.
[[gnu::noinline, gnu::cold]] void wait_slow(anydev_bk_stream_t stream) {
  if (t_bypass > 0) return;
  Gates& g = gates();
  const auto clear = [&] {
    auto it = g.by_stream.find(stream);
    return it == g.by_stream.end() || it->second.open == 0;
  };
  std::unique_lock lock(g.mutex);
  if (clear()) return;
  // Drive the transfers here rather than wait for a hand-over from the
  // progress thread: a round trip then costs no thread switch.
  std::shared_ptr<GateDriver> driver = g.by_stream[stream].driver.lock();
  if (driver != nullptr) {
    std::uint64_t seen = g_closes.load(std::memory_order_relaxed);
    lock.unlock();
    const bool drove = driver->drive([&] {
      const std::uint64_t now = g_closes.load(std::memory_order_acquire);
      if (now == seen) return false;  // nothing closed since the last look
      seen = now;
      std::lock_guard relock(g.mutex);
      return clear();
    });
    driver.reset();  // unlocked: it may be the communicator's last reference
    lock.lock();
    if (drove) return;
  }
  g.closed.wait(lock, clear);
}

inline void wait_for_transfers(anydev_bk_stream_t stream) {
  if (g_open_total.load(std::memory_order_acquire) != 0) wait_slow(stream);
}

// The error kept for `stream`, taken (cleared); SUCCESS when none.
[[gnu::noinline, gnu::cold]] anydev_status_t take_error(anydev_bk_stream_t stream) {
  Gates& g = gates();
  std::unique_lock lock(g.mutex);
  auto it = g.by_stream.find(stream);
  if (it == g.by_stream.end() || it->second.status == ANYDEV_SUCCESS) return ANYDEV_SUCCESS;
  const anydev_status_t status = it->second.status;
  std::string message = std::move(it->second.message);
  it->second.status = ANYDEV_SUCCESS;
  g_errors_kept.fetch_sub(1, std::memory_order_relaxed);
  if (it->second.open == 0) g.by_stream.erase(it);
  g_tracked.store(g.by_stream.size(), std::memory_order_relaxed);
  lock.unlock();
  return set_error(status, std::move(message));
}

// Calls entry Field of the table that the gate's table with `instance` wraps.
template <auto Field, class... Args>
anydev_status_t call_inner(void* instance, Args... args) {
  const anydev_backend_table_t* inner = layers::inner_of(instance);
  return (inner->*Field)(inner->instance, args...);
}

// The layer's entries: wait for the stream's transfers, then call through.
struct GateLayer {
  static anydev_status_t stream_destroy(void* instance, anydev_bk_stream_t stream) {
    wait_for_transfers(stream);
    if (g_tracked.load(std::memory_order_acquire) != 0) {
      Gates& g = gates();
      std::lock_guard lock(g.mutex);
      auto it = g.by_stream.find(stream);  // nothing can be open on it any more
      if (it != g.by_stream.end()) {
        if (it->second.status != ANYDEV_SUCCESS)
          g_errors_kept.fetch_sub(1, std::memory_order_relaxed);
        g.by_stream.erase(it);
        g_tracked.store(g.by_stream.size(), std::memory_order_relaxed);
      }
    }
    return call_inner<&anydev_backend_table_t::stream_destroy>(instance, stream);
  }
  static anydev_status_t stream_synchronize(void* instance, anydev_bk_stream_t stream) {
    wait_for_transfers(stream);
    const anydev_status_t s =
        call_inner<&anydev_backend_table_t::stream_synchronize>(instance, stream);
    if (s != ANYDEV_SUCCESS || g_errors_kept.load(std::memory_order_acquire) == 0 || t_bypass > 0) {
      return s;
    }
    return take_error(stream);
  }
  static anydev_status_t event_record(void* instance, anydev_bk_event_t event,
                                      anydev_bk_stream_t stream) {
    wait_for_transfers(stream);
    return call_inner<&anydev_backend_table_t::event_record>(instance, event, stream);
  }
  static anydev_status_t stream_wait_event(void* instance, anydev_bk_stream_t stream,
                                           anydev_bk_event_t event) {
    wait_for_transfers(stream);
    return call_inner<&anydev_backend_table_t::stream_wait_event>(instance, stream, event);
  }
  static anydev_status_t device_alloc(void* instance, int device, size_t bytes,
                                      anydev_bk_stream_t stream, void** handle, void** address) {
    wait_for_transfers(stream);
    return call_inner<&anydev_backend_table_t::device_alloc>(instance, device, bytes, stream,
                                                             handle, address);
  }
  static anydev_status_t memory_free_async(void* instance, int device, void* handle,
                                           anydev_bk_stream_t stream) {
    wait_for_transfers(stream);
    return call_inner<&anydev_backend_table_t::memory_free_async>(instance, device, handle, stream);
  }
  static anydev_status_t copy(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              anydev_bk_memory_ref_t src, size_t bytes) {
    wait_for_transfers(stream);
    return call_inner<&anydev_backend_table_t::copy>(instance, stream, dst, src, bytes);
  }
  static anydev_status_t fill(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              const void* pattern, size_t pattern_size, size_t bytes) {
    wait_for_transfers(stream);
    return call_inner<&anydev_backend_table_t::fill>(instance, stream, dst, pattern, pattern_size,
                                                     bytes);
  }
  // A native graph's replay reads and writes buffers like copies and fills.
  static anydev_status_t graph_launch(void* instance, anydev_bk_graph_t graph,
                                      anydev_bk_stream_t stream) {
    wait_for_transfers(stream);
    return call_inner<&anydev_backend_table_t::graph_launch>(instance, graph, stream);
  }
};

}  // namespace

void gate_open(anydev_bk_stream_t stream, std::weak_ptr<GateDriver> driver) {
  Gates& g = gates();
  std::lock_guard lock(g.mutex);
  StreamGate& gate = g.by_stream[stream];
  ++gate.open;
  if (!driver.expired()) gate.driver = std::move(driver);
  g_tracked.store(g.by_stream.size(), std::memory_order_relaxed);
  g_open_total.fetch_add(1, std::memory_order_relaxed);
}

void gate_close(anydev_bk_stream_t stream, anydev_status_t status, const std::string& message) {
  Gates& g = gates();
  {
    std::lock_guard lock(g.mutex);
    StreamGate& gate = g.by_stream[stream];
    --gate.open;
    if (status != ANYDEV_SUCCESS && gate.status == ANYDEV_SUCCESS) {
      gate.status = status;
      gate.message = message;
      g_errors_kept.fetch_add(1, std::memory_order_release);
    }
    g_tracked.store(g.by_stream.size(), std::memory_order_relaxed);
    g_open_total.fetch_sub(1, std::memory_order_release);
    g_closes.fetch_add(1, std::memory_order_release);
  }
  g.closed.notify_all();
}

GateBypass::GateBypass() { ++t_bypass; }
GateBypass::~GateBypass() { --t_bypass; }

const anydev_backend_table_t* wrap_transfer_gate(const anydev_backend_table_t* inner) {
  return layers::wrap_table<GateLayer>(inner);
}

}  // namespace anydev::core::transport
