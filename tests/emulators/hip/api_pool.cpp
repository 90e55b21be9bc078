// SPDX-License-Identifier: Apache-2.0
// Memory pools: hipMemPoolCreate/Destroy, their attributes and access
// (allocation from a pool: api_memory.cpp). Memory still allocated from a
// destroyed pool stays valid and may be freed later.
#include <hip/hip_runtime_api.h>

#include "core_config.h"
#include "core_pool.h"
#include "hip_face.h"

namespace hip = anydev_emu::hip;
namespace core = anydev_emu::core;
using hip::Call;

namespace {

// ready(), then the live pool behind `handle`.
hipError_t pool_of(hipMemPool_t handle, const char* api, core::Pool** out) {
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  return hip::to_hip(core::lookup_pool(handle, api, out));
}

}  // namespace

extern "C" {

hipError_t hipMemPoolCreate(hipMemPool_t* pool, const hipMemPoolProps* props) {
  hip::count(Call::hipMemPoolCreate);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  if (pool == nullptr || props == nullptr) {
    return hip::to_hip(
        core::misuse(core::Status::invalid_value, "hipMemPoolCreate: null argument"));
  }
  if (!core::get_config().memory_pools) return hipErrorNotSupported;
  core::Pool* created = nullptr;
  const core::Status s = core::create_pool(props->allocType == hipMemAllocationTypePinned,
                                           props->handleTypes == hipMemHandleTypeNone,
                                           props->location.type == hipMemLocationTypeDevice,
                                           props->location.id, "hipMemPoolCreate", &created);
  if (s == core::Status::success) *pool = static_cast<hipMemPool_t>(core::to_handle(created));
  return hip::to_hip(s);
}

hipError_t hipMemPoolDestroy(hipMemPool_t handle) {
  hip::count(Call::hipMemPoolDestroy);
  core::Pool* pool = nullptr;
  if (const hipError_t e = pool_of(handle, "hipMemPoolDestroy", &pool); e != hipSuccess) return e;
  return hip::to_hip(core::destroy_pool(pool, "hipMemPoolDestroy"));
}

hipError_t hipMemPoolSetAttribute(hipMemPool_t handle, hipMemPoolAttr attribute, void* value) {
  hip::count(Call::hipMemPoolSetAttribute);
  core::Pool* pool = nullptr;
  if (const hipError_t e = pool_of(handle, "hipMemPoolSetAttribute", &pool); e != hipSuccess) {
    return e;
  }
  return hip::to_hip(core::set_pool_attribute(pool, attribute, value, "hipMemPoolSetAttribute"));
}

hipError_t hipMemPoolSetAccess(hipMemPool_t handle, const hipMemAccessDesc* map, size_t count) {
  hip::count(Call::hipMemPoolSetAccess);
  core::Pool* pool = nullptr;
  if (const hipError_t e = pool_of(handle, "hipMemPoolSetAccess", &pool); e != hipSuccess) {
    return e;
  }
  return hip::to_hip(
      core::set_pool_access(pool, map, count, hipMemLocationTypeDevice, "hipMemPoolSetAccess"));
}

}  // extern "C"
