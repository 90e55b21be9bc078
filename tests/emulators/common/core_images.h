// SPDX-License-Identifier: Apache-2.0
// The kernel entries that binary images declare, for emulators that load
// modules other than PTX (core_kernels.h parses PTX): an AMD GPU code object
// (an ELF whose AMDGPU note carries the code object's MessagePack metadata:
// its target and each kernel's arguments) and a SPIR-V module (its
// OpEntryPoint Kernel functions and their parameters). Pure functions;
// thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_IMAGES_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_IMAGES_H_

#include <cstddef>
#include <string>
#include <vector>

#include "core_kernels.h"
#include "core_status.h"

namespace anydev_emu::core {

// An AMD GPU code object's processor ("gfx90a" of the target
// "amdgcn-amd-amdhsa--gfx90a") and its kernels, each with the sizes of its
// explicit arguments (the hidden ones the runtime fills are left out).
// invalid_value (reported) when `image` is not such an ELF or its metadata
// cannot be read.
Status parse_amdgpu_code_object(const char* api, const void* image, std::string* processor,
                                std::vector<KernelEntry>* out);

// A SPIR-V module of `size` bytes: its Kernel entry points, each with the
// sizes of its parameters (64-bit pointers). invalid_value (reported) when
// it is not SPIR-V or declares no kernel.
Status parse_spirv_entries(const char* api, const void* il, std::size_t size,
                           std::vector<KernelEntry>* out);

}  // namespace anydev_emu::core

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_IMAGES_H_
