// SPDX-License-Identifier: Apache-2.0
#include "layers/fault_injection.h"

#include <algorithm>
#include <atomic>

#include "layers/layer_table.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core::layers {
namespace {

std::array<std::atomic<std::uint64_t>, kFaultKinds> g_calls{};

anydev_status_t natural_status(FaultKind kind) {
  return kind == FaultKind::alloc ? ANYDEV_ERROR_OUT_OF_MEMORY : ANYDEV_ERROR_DEVICE;
}

// The layer's own functions: the entries it counts (wrap_table<FaultLayer>, layer_table.h); each
// finds its inner table through its instance. Stateless (the counters are atomics); thread-safe.
struct FaultLayer {
  static anydev_status_t host_alloc(void* instance, int device, size_t bytes, void** handle,
                                    void** address) {
    const anydev_backend_table_t* inner = inner_of(instance);
    if (auto s = count_call(FaultKind::alloc, inner->name, "host_alloc")) return s;
    return bk(inner).host_alloc(device, bytes, handle, address);
  }
  static anydev_status_t device_alloc(void* instance, int device, size_t bytes,
                                      anydev_bk_stream_t stream, void** handle, void** address) {
    const anydev_backend_table_t* inner = inner_of(instance);
    if (auto s = count_call(FaultKind::alloc, inner->name, "device_alloc")) return s;
    return bk(inner).device_alloc(device, bytes, stream, handle, address);
  }
  static anydev_status_t copy(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              anydev_bk_memory_ref_t src, size_t bytes) {
    const anydev_backend_table_t* inner = inner_of(instance);
    if (auto s = count_call(FaultKind::copy, inner->name, "copy")) return s;
    return bk(inner).copy(stream, dst, src, bytes);
  }
  static anydev_status_t fill(void* instance, anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                              const void* pattern, size_t pattern_size, size_t bytes) {
    const anydev_backend_table_t* inner = inner_of(instance);
    if (auto s = count_call(FaultKind::fill, inner->name, "fill")) return s;
    return bk(inner).fill(stream, dst, pattern, pattern_size, bytes);
  }
  static anydev_status_t event_create(void* instance, int device, anydev_bk_event_t* out) {
    const anydev_backend_table_t* inner = inner_of(instance);
    if (auto s = count_call(FaultKind::event, inner->name, "event_create")) return s;
    return bk(inner).event_create(device, out);
  }
  static anydev_status_t event_record(void* instance, anydev_bk_event_t event,
                                      anydev_bk_stream_t stream) {
    const anydev_backend_table_t* inner = inner_of(instance);
    if (auto s = count_call(FaultKind::event, inner->name, "event_record")) return s;
    return bk(inner).event_record(event, stream);
  }
};

// The call number of this call when it is planned to fail, else 0.
std::uint64_t planned_failure(FaultKind kind) {
  const auto index = static_cast<std::size_t>(kind);
  const auto& planned = layer_settings().fault.calls[index];
  if (planned.empty()) return 0;
  const std::uint64_t call = g_calls[index].fetch_add(1, std::memory_order_relaxed) + 1;
  return std::binary_search(planned.begin(), planned.end(), call) ? call : 0;
}

}  // namespace

anydev_status_t count_call(FaultKind kind, const char* backend, const char* what) {
  const std::uint64_t call = planned_failure(kind);
  if (call == 0) return ANYDEV_SUCCESS;
  const anydev_status_t status = natural_status(kind);
  std::string message = cat(backend, " ", what, ": injected fault (", kEnvFault, "=\"",
                            layer_settings().fault.text, "\"): ", fault_kind_name(kind), " call ",
                            call, " fails with ", anydev_status_name(status));
  log(ANYDEV_LOG_INFO, message);
  return set_error(status, std::move(message));
}

const anydev_backend_table_t* wrap_fault_injection(const anydev_backend_table_t* inner) {
  return wrap_table<FaultLayer>(inner);
}

std::string inject_plugin_fault(std::string_view backend) {
  const std::uint64_t call = planned_failure(FaultKind::plugin);
  if (call == 0) return {};
  std::string reason = cat("injected fault (", kEnvFault, "=\"", layer_settings().fault.text,
                           "\"): plugin call ", call, " (probing backend ", backend, ") fails");
  log(ANYDEV_LOG_INFO, reason);
  return reason;
}

}  // namespace anydev::core::layers
