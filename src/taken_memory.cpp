#include "taken_memory.h"

#include <map>
#include <mutex>
#include <tuple>

#include "fork_guard.h"
#include "pool/pooled_allocation.h"

namespace anydev::core {
namespace {

using Key = std::tuple<const Backend*, int, void*>;

struct Table {
  std::mutex mutex;
  std::map<Key, std::shared_ptr<Allocation>> entries;
};

Table& table() {
  // Never destroyed: frees may come at exit. Fork-safe (fork_guard.h).
  static ProcessObject<Table> instance;
  return instance.get([] { return new Table(); });
}

}  // namespace

void remember_taken(void* address, std::shared_ptr<Allocation> allocation) {
  forget_pool_in_use(*allocation);  // the user's memory now, not the pool's
  Table& t = table();
  std::lock_guard lock(t.mutex);
  const Key key{allocation->backend, allocation->device, address};
  t.entries[key] = std::move(allocation);
}

std::shared_ptr<Allocation> forget_taken(const Backend* backend, int device, void* address) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  const auto it = t.entries.find(Key{backend, device, address});
  if (it == t.entries.end()) return nullptr;
  std::shared_ptr<Allocation> allocation = std::move(it->second);
  t.entries.erase(it);
  return allocation;
}

}  // namespace anydev::core
