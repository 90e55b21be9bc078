#include "layers/layer_stack.h"

#include "layers/fault_injection.h"
#include "layers/layer_config.h"
#include "layers/sync_mode.h"
#include "layers/table_slots.h"
#include "layers/trace.h"
#include "layers/validation.h"
#include "status.h"

namespace anydev::core::layers {

std::string probe_failure(std::string_view backend) {
  const LayerSettings& settings = layer_settings();
  if (!settings.errors.empty()) return settings.errors;
  return inject_plugin_fault(backend);
}

const anydev_backend_table_t* wrap_backend(const anydev_backend_table_t* table, std::string* why) {
  const LayerSettings& settings = layer_settings();
  if (!settings.any_table_layer()) return table;
  const anydev_backend_table_t* wrapped = table;
  auto add = [&](const char* layer,
                 const anydev_backend_table_t* (*wrap)(const anydev_backend_table_t*)) {
    if (wrapped == nullptr) return;
    wrapped = wrap(wrapped);
    if (wrapped == nullptr) {
      *why =
          cat("the ", layer, " layer wraps at most ", kMaxWrappedBackends, " backends per process");
    }
  };
  if (!settings.trace_path.empty()) add("tracing", wrap_trace);
  if (settings.validate != ValidateMode::off) add("validation", wrap_validation);
  if (!settings.fault.empty()) add("fault injection", wrap_fault_injection);
  if (settings.sync) add("synchronous mode", wrap_sync_mode);
  return wrapped;
}

}  // namespace anydev::core::layers
