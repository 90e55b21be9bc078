// SPDX-License-Identifier: Apache-2.0
#include "emu_config.h"

#include "core_config.h"

namespace anydev_emu {

extern const core::Identity core::kIdentity{"ANYDEV_CUDA_EMULATOR_", "anydev-cuda-emulator"};

const CudaConfig& cuda_config() {
  static const CudaConfig config = [] {
    CudaConfig c;
    c.stream_context = static_cast<int>(core::read_setting("STREAM_CONTEXT", 0, 0, 2));
    c.no_modules = core::read_setting("NO_MODULES", 0, 0, 1) != 0;
    c.hidden_symbols = core::read_setting_list("HIDE_SYMBOLS");
    c.null_symbols = core::read_setting_list("NULL_SYMBOLS");
    return c;
  }();
  return config;
}

}  // namespace anydev_emu
