// SPDX-License-Identifier: Apache-2.0
#include "core_pool.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core_config.h"
#include "core_device.h"

namespace anydev_emu::core {
namespace {

struct Pools {
  std::mutex mutex;
  std::vector<std::unique_ptr<Pool>> list;
};

Pools& P() {
  static Pools* pools = new Pools;  // never destroyed: handles stay recognizable
  return *pools;
}

Status not_emulated(const char* api, int attribute) {
  return misuse(Status::invalid_value,
                std::string(api) + ": attribute " + std::to_string(attribute) + " is not emulated");
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

Status create_pool(bool pinned, bool no_handles, bool is_device, int device, const char* api,
                   Pool** out) {
  const std::string what = std::string(api) + ": ";
  if (!pinned) return misuse(Status::invalid_value, what + "the allocation type is not pinned");
  if (!no_handles) {
    return misuse(Status::invalid_value, what + "only pools without handle types are emulated");
  }
  if (!is_device_location(is_device, device)) {
    return misuse(Status::invalid_value, what + "the location is not a device of this driver");
  }
  *out = create_pool(device, false);
  return Status::success;
}

Status lookup_pool(const void* handle, const char* api, Pool** out) {
  Pools& p = P();
  Pool* found = nullptr;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    for (const auto& pool : p.list) {
      if (to_handle(pool.get()) == handle) found = pool.get();
    }
  }
  std::ostringstream what;
  what << api << ": memory pool " << handle;
  if (found == nullptr)
    return misuse(Status::invalid_value, what.str() + " is not a pool of this driver");
  std::lock_guard<std::mutex> lock(found->mutex);
  if (found->destroyed) return misuse(Status::invalid_value, what.str() + " was destroyed");
  *out = found;
  return Status::success;
}

void* to_handle(Pool* pool) { return pool; }

bool is_device_location(bool is_device, int device) {
  return is_device && device >= 0 && device < device_count();
}

Status destroy_pool(Pool* pool, const char* api) {
  std::lock_guard<std::mutex> lock(pool->mutex);
  if (pool->is_default) {
    return misuse(Status::invalid_value, std::string(api) + ": the default pool of device " +
                                             std::to_string(pool->device) + " cannot be destroyed");
  }
  pool->destroyed = true;
  return Status::success;
}

Status set_pool_attribute(Pool* pool, int attribute, const void* value, const char* api) {
  if (value == nullptr) return misuse(Status::invalid_value, std::string(api) + ": null value");
  std::lock_guard<std::mutex> lock(pool->mutex);
  switch (static_cast<PoolAttribute>(attribute)) {
    case PoolAttribute::release_threshold:
      pool->release_threshold = *static_cast<const std::uint64_t*>(value);
      return Status::success;
    case PoolAttribute::reuse_follow_event_dependencies:
    case PoolAttribute::reuse_allow_opportunistic:
    case PoolAttribute::reuse_allow_internal_dependencies:
      pool->reuse_flags[attribute - 1] = *static_cast<const int*>(value);
      return Status::success;
  }
  return not_emulated(api, attribute);
}

Status get_pool_attribute(Pool* pool, int attribute, void* value, const char* api) {
  if (value == nullptr) return misuse(Status::invalid_value, std::string(api) + ": null value");
  std::lock_guard<std::mutex> lock(pool->mutex);
  switch (static_cast<PoolAttribute>(attribute)) {
    case PoolAttribute::release_threshold:
      *static_cast<std::uint64_t*>(value) = pool->release_threshold;
      return Status::success;
    case PoolAttribute::reuse_follow_event_dependencies:
    case PoolAttribute::reuse_allow_opportunistic:
    case PoolAttribute::reuse_allow_internal_dependencies:
      *static_cast<int*>(value) = pool->reuse_flags[attribute - 1];
      return Status::success;
  }
  return not_emulated(api, attribute);
}

Status set_pool_access(Pool* pool, const AccessGrant* grants, std::size_t count, const char* api) {
  if (grants == nullptr && count > 0) {
    return misuse(Status::invalid_value, std::string(api) + ": null map");
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (!is_device_location(grants[i].is_device, grants[i].device)) {
      return misuse(Status::invalid_value,
                    std::string(api) + ": a location is not a device of this driver");
    }
    if (grants[i].device == pool->device &&
        grants[i].level != static_cast<int>(AccessLevel::read_write)) {
      return misuse(Status::invalid_value, std::string(api) + ": the pool's own device " +
                                               std::to_string(pool->device) +
                                               " always has read-write access");
    }
  }
  std::lock_guard<std::mutex> lock(pool->mutex);
  for (std::size_t i = 0; i < count; ++i) {
    if (grants[i].device == pool->device) continue;
    if (grants[i].level == static_cast<int>(AccessLevel::none)) {
      pool->access.erase(grants[i].device);
    } else {
      pool->access.insert(grants[i].device);
    }
  }
  return Status::success;
}

AccessLevel pool_access(Pool* pool, int device) {
  std::lock_guard<std::mutex> lock(pool->mutex);
  return device == pool->device || pool->access.count(device) != 0 ? AccessLevel::read_write
                                                                   : AccessLevel::none;
}

}  // namespace anydev_emu::core
