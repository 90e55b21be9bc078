// SPDX-License-Identifier: Apache-2.0
// The emulator's memory pools: each device's default pool (created by
// initialize()) and the pools a face creates, with their attributes and the
// access other devices are granted.
//
// Pools are never freed: destroy_pool() marks one destroyed, so that a stale
// handle is recognized and refused, and memory allocated from it may still be
// freed afterwards (as real drivers allow). A Pool's fields are guarded by its
// own mutex; the registry is thread-safe.
#ifndef ANYDEV_TESTS_EMULATORS_COMMON_CORE_POOL_H_
#define ANYDEV_TESTS_EMULATORS_COMMON_CORE_POOL_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <vector>

#include "core_status.h"

namespace anydev_emu::core {

struct Pool {
  int device = 0;
  bool is_default = false;
  std::mutex mutex;
  bool destroyed = false;
  std::uint64_t release_threshold = 0;
  int reuse_flags[3] = {1, 1, 1};  // the three reuse switches
  std::set<int> access;            // other devices granted read-write access
};

// The attributes both CUDA and HIP number 1..4 (CU_MEMPOOL_ATTR_*, hipMemPool*).
enum class PoolAttribute {
  reuse_follow_event_dependencies = 1,
  reuse_allow_opportunistic = 2,
  reuse_allow_internal_dependencies = 3,
  release_threshold = 4,  // a std::uint64_t; the others are int
};

// Access levels as both APIs number them (PROT_NONE 0, READ 1, READWRITE 3).
enum class AccessLevel { none = 0, read = 1, read_write = 3 };

// One entry of a face's access map; `is_device` false for any other location.
struct AccessGrant {
  bool is_device = false;
  int device = -1;
  int level = 0;  // AccessLevel, as the caller passed it
};

// A new pool of `device`, registered; never null.
Pool* create_pool(int device, bool is_default);
// A pool a face's create call asked for: invalid_value (reported with `api`)
// unless its memory is pinned device memory (`pinned`), shared with no
// handle type (`no_handles`) and located on a device of the emulator.
Status create_pool(bool pinned, bool no_handles, bool is_device, int device, const char* api,
                   Pool** out);

// The live pool behind `handle`; invalid_value (reported with `api`) for an
// unknown or destroyed one.
Status lookup_pool(const void* handle, const char* api, Pool** out);
void* to_handle(Pool* pool);

// Whether `location` (a face's location) names a device of the emulator.
bool is_device_location(bool is_device, int device);

// Marks a pool destroyed; a default pool cannot be (invalid_value).
Status destroy_pool(Pool* pool, const char* api);
// `value` points at the attribute's type (PoolAttribute); `attribute` is the
// face's number, reported when it is not one of PoolAttribute.
Status set_pool_attribute(Pool* pool, int attribute, const void* value, const char* api);
Status get_pool_attribute(Pool* pool, int attribute, void* value, const char* api);
// Applies `count` grants (all checked first: nothing changes on error).
Status set_pool_access(Pool* pool, const AccessGrant* grants, std::size_t count, const char* api);
// set_pool_access over a face's access map (CUmemAccessDesc,
// hipMemAccessDesc: .location.type, .location.id, .flags), where
// `device_type` is the face's location type of a device.
template <class Desc>
Status set_pool_access(Pool* pool, const Desc* map, std::size_t count, int device_type,
                       const char* api) {
  std::vector<AccessGrant> grants;
  for (std::size_t i = 0; map != nullptr && i < count; ++i) {
    grants.push_back({static_cast<int>(map[i].location.type) == device_type, map[i].location.id,
                      static_cast<int>(map[i].flags)});
  }
  return set_pool_access(pool, map == nullptr ? nullptr : grants.data(), count, api);
}
// The level `device` has on `pool`'s memory.
AccessLevel pool_access(Pool* pool, int device);

}  // namespace anydev_emu::core

#endif  // ANYDEV_TESTS_EMULATORS_COMMON_CORE_POOL_H_
