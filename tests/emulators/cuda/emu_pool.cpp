// SPDX-License-Identifier: Apache-2.0
#include "emu_pool.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "emu_config.h"

namespace anydev_emu {
namespace {

struct Pools {
  std::mutex mutex;
  std::vector<std::unique_ptr<Pool>> list;
};

Pools& P() {
  static Pools* pools = new Pools;  // never destroyed: handles stay recognizable
  return *pools;
}

}  // namespace

Pool* create_pool(int device, bool is_default) {
  auto pool = std::make_unique<Pool>();
  pool->device = device;
  pool->is_default = is_default;
  Pools& p = P();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.list.push_back(std::move(pool));
  return p.list.back().get();
}

CUresult lookup_pool(CUmemoryPool handle, const char* api, Pool** out) {
  Pools& p = P();
  Pool* found = nullptr;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    for (const auto& pool : p.list) {
      if (to_handle(pool.get()) == handle) found = pool.get();
    }
  }
  std::ostringstream what;
  what << api << ": memory pool " << static_cast<const void*>(handle);
  if (found == nullptr) {
    report_misuse(what.str() + " is not a pool of this driver");
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::lock_guard<std::mutex> lock(found->mutex);
  if (found->destroyed) {
    report_misuse(what.str() + " was destroyed");
    return CUDA_ERROR_INVALID_VALUE;
  }
  *out = found;
  return CUDA_SUCCESS;
}

CUmemoryPool to_handle(Pool* pool) { return reinterpret_cast<CUmemoryPool>(pool); }

}  // namespace anydev_emu
