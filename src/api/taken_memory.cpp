// SPDX-License-Identifier: Apache-2.0
#include "api/taken_memory.h"

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

#include "api/api_common.h"
#include "memory/pool/pooled_allocation.h"
#include "support/core_mutex.h"
#include "support/fork_guard.h"

namespace anydev::core {
namespace {

using Key = std::tuple<const Backend*, int, std::uintptr_t>;

struct Table {
  CoreMutex mutex;
  std::map<Key, std::shared_ptr<Allocation>> entries;
};

Table& table() {
  // Never destroyed: frees may come at exit. Fork-safe (fork_guard.h).
  static ProcessObject<Table> instance;
  return instance.get([] { return new Table(); });
}

std::uintptr_t numeric(const void* address) { return reinterpret_cast<std::uintptr_t>(address); }

}  // namespace

bool remember_taken(std::shared_ptr<Allocation> allocation) {
  Table& t = table();
  const Key key{allocation->backend, allocation->device, numeric(allocation->address)};
  {
    std::lock_guard lock(t.mutex);
    if (t.entries.contains(key)) return false;
    t.entries.emplace(key, allocation);
    forget_pool_in_use(*allocation);  // the user's memory now, not the pool's
  }
  return true;
}

std::shared_ptr<Allocation> forget_taken(const Backend* backend, int device, void* address) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  const auto it = t.entries.find(Key{backend, device, numeric(address)});
  if (it == t.entries.end()) return nullptr;
  std::shared_ptr<Allocation> allocation = std::move(it->second);
  t.entries.erase(it);
  return allocation;
}

std::string explain_not_taken(const Backend* backend, int device, void* address) {
  Table& t = table();
  std::ostringstream text;
  std::lock_guard lock(t.mutex);
  const std::uintptr_t where = numeric(address);
  // The record starting below `address` on the same device, if it spans it.
  auto above = t.entries.upper_bound(Key{backend, device, where});
  if (above != t.entries.begin()) {
    const auto& [key, allocation] = *std::prev(above);
    const auto& [key_backend, key_device, start] = key;
    if (key_backend == backend && key_device == device && where - start < allocation->bytes) {
      text << "it lies " << (where - start) << " bytes inside the " << allocation->bytes
           << "-byte allocation taken at " << allocation->address
           << "; free() takes the address take_ptr() returned";
      return text.str();
    }
  }
  for (const auto& [key, allocation] : t.entries) {
    if (std::get<2>(key) == where) {
      text << "it was taken on " << describe_device(std::get<0>(key), std::get<1>(key))
           << "; free it with a context there";
      return text.str();
    }
  }
  text << "it was not obtained with take_ptr() on " << describe_device(backend, device)
       << " (or was already freed)";
  return text.str();
}

}  // namespace anydev::core
