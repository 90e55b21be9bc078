// SPDX-License-Identifier: Apache-2.0
// C entry points of the validation layer (layers/validation.h).
#include "anydev/anydev.h"
#include "api/api_common.h"
#include "api/handle_tracking.h"

using namespace anydev::core;

extern "C" {

int anydev_validation_enabled(void) { return layers::validation_enabled() ? 1 : 0; }

anydev_status_t anydev_buffer_check_host_access(anydev_buffer_t buf, size_t offset, size_t count) {
  static constexpr const char* op = "anydev_buffer_check_host_access";
  if (!layers::validation_enabled()) return ANYDEV_SUCCESS;
  return guarded(op, [&] { return handles::check_host_access(op, buf, offset, count); });
}

}  // extern "C"
