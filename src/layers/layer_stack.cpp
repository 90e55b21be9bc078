// SPDX-License-Identifier: Apache-2.0
#include "layers/layer_stack.h"

#include "layers/fault_injection.h"
#include "layers/layer_config.h"
#include "layers/sync_mode.h"
#include "layers/trace.h"
#include "layers/validation.h"
#include "support/status.h"
#if ANYDEV_HAVE_UCX
#include "transport/transfer_gate.h"
#endif

namespace anydev::core::layers {

std::string probe_failure(std::string_view backend) {
  const LayerSettings& settings = layer_settings();
  if (!settings.errors.empty()) return settings.errors;
  return inject_plugin_fault(backend);
}

const anydev_backend_table_t* wrap_backend(const anydev_backend_table_t* table) {
  const LayerSettings& settings = layer_settings();
  const anydev_backend_table_t* wrapped = table;
  if (!settings.trace_path.empty()) wrapped = wrap_trace(wrapped);
  if (settings.validate != ValidateMode::off) wrapped = wrap_validation(wrapped);
  if (!settings.fault.empty()) wrapped = wrap_fault_injection(wrapped);
  if (settings.sync) wrapped = wrap_sync_mode(wrapped);
#if ANYDEV_HAVE_UCX
  // Outermost: work enqueued after a UCX transfer waits for it
  // (transport/transfer_gate.h).
  wrapped = transport::wrap_transfer_gate(wrapped);
#endif
  return wrapped;
}

}  // namespace anydev::core::layers
