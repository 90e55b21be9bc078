// SPDX-License-Identifier: Apache-2.0
// The table cuGetProcAddress answers from: every entry point the emulator
// implements, under its unversioned name, with the CUDA version that
// introduced the signature it has. Immutable; thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_CUDA_EMU_PROC_TABLE_H_
#define ANYDEV_TESTS_EMULATORS_CUDA_EMU_PROC_TABLE_H_

namespace anydev_emu {

// The newest implementation of `name` whose version is <= `cuda_version`, or
// null; *known says whether `name` exists at all.
void* find_proc(const char* name, int cuda_version, bool* known);

// The 4-argument cuGetProcAddress of CUDA 11.3 (api_driver_legacy.cpp).
void* legacy_get_proc_address();

}  // namespace anydev_emu

#endif  // ANYDEV_TESTS_EMULATORS_CUDA_EMU_PROC_TABLE_H_
