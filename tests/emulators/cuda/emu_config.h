// SPDX-License-Identifier: Apache-2.0
// The emulator's settings, read once from the environment.
//
//   ANYDEV_CUDA_EMULATOR_DEVICES       number of devices (default 1; 0: cuInit
//                                      fails with CUDA_ERROR_NO_DEVICE)
//   ANYDEV_CUDA_EMULATOR_DELAY_US      microseconds each stream operation waits
//                                      before it runs (default 0)
//   ANYDEV_CUDA_EMULATOR_MEMORY_POOLS  1: devices support cuMemAllocAsync
//                                      (default); 0: they do not
//   ANYDEV_CUDA_EMULATOR_MEMORY_MB     device memory per device and pinned host
//                                      memory in all, in mib (default 4096)
//   ANYDEV_CUDA_EMULATOR_HIDE_SYMBOLS  comma-separated names cuGetProcAddress
//                                      reports as missing ("cuMemcpyAsync")
//   ANYDEV_CUDA_EMULATOR_NULL_SYMBOLS  comma-separated names for which
//                                      cuGetProcAddress returns CUDA_SUCCESS
//                                      with a null pointer (as some drivers do)
//   ANYDEV_CUDA_EMULATOR_HUGE_IS_INVALID  1: an allocation larger than all the
//                                      memory there is fails with
//                                      CUDA_ERROR_INVALID_VALUE, not
//                                      CUDA_ERROR_OUT_OF_MEMORY (default 0)
//   ANYDEV_CUDA_EMULATOR_QUIET         1: do not print misuse to stderr
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
//
// Thread-safe: the settings are read once, at first use, and never change.
#ifndef ANYDEV_TESTS_EMULATORS_CUDA_EMU_CONFIG_H_
#define ANYDEV_TESTS_EMULATORS_CUDA_EMU_CONFIG_H_

#include <cstddef>
#include <string>
#include <vector>

namespace anydev_emu {

struct Config {
  int devices = 1;
  unsigned delay_us = 0;
  bool memory_pools = true;
  std::size_t memory_bytes = std::size_t{4096} << 20;
  std::vector<std::string> hidden_symbols;
  std::vector<std::string> null_symbols;
  bool huge_is_invalid = false;
  bool quiet = false;
  int stream_context = 0;  // ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT
};

const Config& get_config();

// Prints "anydev-cuda-emulator: <message>" to stderr unless quiet: every
// misuse the emulator detects is reported this way as well as by its CUresult.
void report_misuse(const std::string& message);

}  // namespace anydev_emu

#endif  // ANYDEV_TESTS_EMULATORS_CUDA_EMU_CONFIG_H_
