// SPDX-License-Identifier: Apache-2.0
// The CUDA 11.3 cuGetProcAddress, without the query result: cuda.h maps the
// name to cuGetProcAddress_v2, so the macro is undone here.
#include <cuda.h>

#undef cuGetProcAddress

#include "emu_proc_table.h"

extern "C" CUresult cuGetProcAddress(const char* symbol, void** pfn, int cuda_version,
                                     cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, cuda_version, flags, nullptr);
}

namespace anydev_emu {
void* legacy_get_proc_address() { return reinterpret_cast<void*>(&cuGetProcAddress); }
}  // namespace anydev_emu
