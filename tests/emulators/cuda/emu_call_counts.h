// SPDX-License-Identifier: Apache-2.0
// The emulator's count of driver calls, per entry point: every call made
// through a pointer that cuGetProcAddress handed out (which is how the cuda
// backend calls the driver) adds one to its entry point's count, whatever it
// returns. Calls to the exported cu* symbols themselves are not counted, so a
// test that calls the emulator directly (standing in for the application or
// an embedding runtime) leaves the counts alone.
//
// One table per process, of relaxed atomic counters: thread-safe; a count
// read while other threads call the driver is a moment's value.
//
// Emulator-only functions, never named cu* (the real driver has no such
// entry points): a test finds them with dlsym in the libcuda.so.1 the backend
// opened. Declared extern "C" here so that the test can name their types.
#ifndef ANYDEV_TESTS_EMULATORS_CUDA_EMU_CALL_COUNTS_H_
#define ANYDEV_TESTS_EMULATORS_CUDA_EMU_CALL_COUNTS_H_

#include "core_calls.h"

// void anydev_cuda_emulator_reset_call_counts(): sets every count to 0.
// unsigned long long anydev_cuda_emulator_call_count(const char* name): the
//   calls made to `name` ("cuMemcpyAsync", the unversioned name) since the
//   last reset; 0 for a name the emulator does not implement.
// unsigned long long anydev_cuda_emulator_call_counts(char* text,
//   std::size_t capacity): writes "cuMemcpyAsync=1 cuStreamSynchronize=2"
//   (every non-zero count, in the order of the entry point table) into `text`
//   (truncated to `capacity` with the NUL) and returns the total.
ANYDEV_EMU_DECLARE_CALL_COUNT_EXPORTS(anydev_cuda_emulator)

#endif  // ANYDEV_TESTS_EMULATORS_CUDA_EMU_CALL_COUNTS_H_
