// SPDX-License-Identifier: Apache-2.0
// The memory an operation names (anydev_bk_memory_ref_t), for backends whose
// handles are addresses (cpu, cuda, hip, level_zero; not opencl's cl_mem):
// the address it designates, and the words error messages use for it.
// Stateless, thread-safe.
#ifndef ANYDEV_KIT_MEMORY_REF_H_
#define ANYDEV_KIT_MEMORY_REF_H_

#include <anydev/backend.h>

#include <string>

#include "anydev/kit/cat.h"

namespace anydev::kit {

// handle + offset, for a backend whose handles are addresses.
inline void* address_of(const anydev_bk_memory_ref_t& ref) {
  return static_cast<char*>(ref.handle) + ref.offset;
}

// "device 0 memory 0x...+64", "pinned memory ...", "host memory ...".
inline std::string describe_memory(const anydev_bk_memory_ref_t& ref) {
  switch (ref.kind) {
    case ANYDEV_BK_MEMORY_USER_HOST:
      return cat("host memory ", ref.handle);
    case ANYDEV_BK_MEMORY_HOST:
      return cat("pinned memory ", ref.handle, "+", ref.offset, " (device ", ref.device, ")");
    case ANYDEV_BK_MEMORY_DEVICE:
      return cat("device ", ref.device, " memory ", ref.handle, "+", ref.offset);
  }
  return cat("memory of unknown kind ", static_cast<int>(ref.kind));
}

}  // namespace anydev::kit

#endif  // ANYDEV_KIT_MEMORY_REF_H_
