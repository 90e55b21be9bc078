// SPDX-License-Identifier: Apache-2.0
#include "transport/transfer_gate.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <unordered_map>

#include "layers/layer_table.h"
#include "support/status.h"

namespace anydev::core::transport {
namespace {

// One stream's open transfers and its first unreported error.
struct StreamGate {
  int open = 0;
  anydev_status_t status = ANYDEV_SUCCESS;
  std::string message;
};

// The process's gates; `open_total` lets gated entries skip the lock.
struct Gates {
  std::atomic<int> open_total{0};
  std::mutex mutex;
  std::condition_variable closed;
  std::unordered_map<anydev_bk_stream_t, StreamGate> by_stream;  // guarded by mutex
};

Gates& gates() {
  static Gates* g = new Gates;  // lives for the process: used from exit-time threads
  return *g;
}

thread_local int t_bypass = 0;

// The error kept for `stream`, taken (cleared); SUCCESS when none.
anydev_status_t take_error(anydev_bk_stream_t stream) {
  Gates& g = gates();
  std::unique_lock lock(g.mutex);
  auto it = g.by_stream.find(stream);
  if (it == g.by_stream.end() || it->second.status == ANYDEV_SUCCESS) return ANYDEV_SUCCESS;
  const anydev_status_t status = it->second.status;
  std::string message = std::move(it->second.message);
  it->second.status = ANYDEV_SUCCESS;
  if (it->second.open == 0) g.by_stream.erase(it);
  lock.unlock();
  return set_error(status, std::move(message));
}

// The layer's entries: wait for the stream's transfers, then call through.
struct GateLayer {
  static anydev_status_t stream_destroy(void* instance, anydev_bk_stream_t stream) {
    gate_wait(stream);
    const anydev_backend_table_t* inner = layers::inner_of(instance);
    {
      Gates& g = gates();
      std::lock_guard lock(g.mutex);
      g.by_stream.erase(stream);  // nothing can be open on it any more
    }
    return bk(inner).stream_destroy(stream);
  }
  static anydev_status_t stream_synchronize(void* instance, anydev_bk_stream_t stream) {
    gate_wait(stream);
    const anydev_status_t s = bk(layers::inner_of(instance)).stream_synchronize(stream);
    if (s != ANYDEV_SUCCESS || t_bypass > 0) return s;
    return take_error(stream);
  }
  static anydev_status_t event_record(void* instance, anydev_bk_event_t event,
                                      anydev_bk_stream_t stream) {
    gate_wait(stream);
    return bk(layers::inner_of(instance)).event_record(event, stream);
  }
  static anydev_status_t stream_wait_event(void* instance, anydev_bk_stream_t stream,
                                           anydev_bk_event_t event) {
    gate_wait(stream);
    return bk(layers::inner_of(instance)).stream_wait_event(stream, event);
  }
  static anydev_status_t device_alloc(void* instance, int device, size_t bytes,
                                      anydev_bk_stream_t stream, void** handle, void** address) {
    gate_wait(stream);
    return bk(layers::inner_of(instance)).device_alloc(device, bytes, stream, handle, address);
  }
  static anydev_status_t memory_free_async(void* instance, int device, void* handle,
                                           anydev_bk_stream_t stream) {
    gate_wait(stream);
    return bk(layers::inner_of(instance)).memory_free_async(device, handle, stream);
  }
  static anydev_status_t copy(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              anydev_bk_memory_ref_t src, size_t bytes) {
    gate_wait(stream);
    return bk(layers::inner_of(instance)).copy(stream, dst, src, bytes);
  }
  static anydev_status_t fill(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              const void* pattern, size_t pattern_size, size_t bytes) {
    gate_wait(stream);
    return bk(layers::inner_of(instance)).fill(stream, dst, pattern, pattern_size, bytes);
  }
};

}  // namespace

void gate_open(anydev_bk_stream_t stream) {
  Gates& g = gates();
  std::lock_guard lock(g.mutex);
  ++g.by_stream[stream].open;
  g.open_total.fetch_add(1, std::memory_order_relaxed);
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
    }
    g.open_total.fetch_sub(1, std::memory_order_release);
  }
  g.closed.notify_all();
}

void gate_wait(anydev_bk_stream_t stream) {
  Gates& g = gates();
  if (g.open_total.load(std::memory_order_acquire) == 0 || t_bypass > 0) return;
  std::unique_lock lock(g.mutex);
  g.closed.wait(lock, [&] {
    auto it = g.by_stream.find(stream);
    return it == g.by_stream.end() || it->second.open == 0;
  });
}

GateBypass::GateBypass() { ++t_bypass; }
GateBypass::~GateBypass() { --t_bypass; }

const anydev_backend_table_t* wrap_transfer_gate(const anydev_backend_table_t* inner) {
  return layers::wrap_table<GateLayer>(inner);
}

}  // namespace anydev::core::transport
