// SPDX-License-Identifier: Apache-2.0
// The CUDA face's settings. The core reads the shared ones (core_config.h)
// with the prefix ANYDEV_CUDA_EMULATOR_: DEVICES (0: cuInit fails with
// CUDA_ERROR_NO_DEVICE), DELAY_US, MEMORY_POOLS (cuMemAllocAsync),
// MEMORY_MB, HUGE_IS_INVALID (CUDA_ERROR_INVALID_VALUE for an impossible
// size) and QUIET. The face adds:
//
//   ANYDEV_CUDA_EMULATOR_HIDE_SYMBOLS  comma-separated names cuGetProcAddress
//                                      reports as missing ("cuMemcpyAsync")
//   ANYDEV_CUDA_EMULATOR_NULL_SYMBOLS  comma-separated names for which
//                                      cuGetProcAddress returns CUDA_SUCCESS
//                                      with a null pointer (as some drivers do)
//   ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT  what a call on a stream or event
//                                      from cuStreamCreate / cuEventCreate
//                                      (copies, memsets, records, waits,
//                                      synchronizes) wants current on the
//                                      thread: 0 nothing, the handle names
//                                      its context (default); 1 some context;
//                                      2 the handle's own context. Otherwise
//                                      it returns CUDA_ERROR_INVALID_CONTEXT
//                                      (not reported as misuse): the stricter
//                                      rules a driver might have
//   ANYDEV_CUDA_EMULATOR_NO_MODULES    1: cuModuleLoadData refuses every
//                                      image with
//                                      CUDA_ERROR_UNSUPPORTED_PTX_VERSION (a
//                                      driver older than the PTX), so that the
//                                      backend's fallback runs
//
// The core's VMM setting (core_share.h), ANYDEV_CUDA_EMULATOR_VMM=0, reports
// CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED and
// ..._HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED as 0 and answers the VMM
// calls CUDA_ERROR_NOT_SUPPORTED.
//
// Misuse is printed as "anydev-cuda-emulator: <message>".
// Thread-safe: the settings are read once, at first use, and never change.
#ifndef ANYDEV_TESTS_EMULATORS_CUDA_EMU_CONFIG_H_
#define ANYDEV_TESTS_EMULATORS_CUDA_EMU_CONFIG_H_

#include <string>
#include <vector>

namespace anydev_emu {

struct CudaConfig {
  std::vector<std::string> hidden_symbols;
  std::vector<std::string> null_symbols;
  int stream_context = 0;   // ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT
  bool no_modules = false;  // ANYDEV_CUDA_EMULATOR_NO_MODULES
};

const CudaConfig& cuda_config();

}  // namespace anydev_emu

#endif  // ANYDEV_TESTS_EMULATORS_CUDA_EMU_CONFIG_H_
