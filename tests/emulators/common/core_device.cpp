// SPDX-License-Identifier: Apache-2.0
#include "core_device.h"

#include <pthread.h>

#include <memory>
#include <vector>

#include "core_config.h"
#include "core_memory.h"
#include "core_pool.h"

namespace anydev_emu::core {
namespace {

struct Devices {
  std::mutex mutex;
  std::atomic<bool> initialized{false};
  std::vector<std::unique_ptr<Device>> list;
};

Devices& D() {
  static Devices* devices = new Devices;  // never destroyed
  return *devices;
}

// Set in a child of fork(): the driver's state belongs to the parent.
std::atomic<bool> g_forked{false};

}  // namespace

Status check_initialized() {
  return D().initialized.load(std::memory_order_acquire) &&
                 !g_forked.load(std::memory_order_relaxed)
             ? Status::success
             : Status::not_initialized;
}

bool is_sticky(Status status) { return status == Status::illegal_address; }

void break_context(Context* context, Status fault) {
  Status healthy = Status::success;
  context->sticky.compare_exchange_strong(healthy, fault);
}

Status sticky_error(const Context* context) { return context->sticky.load(); }

Status initialize(unsigned int flags) {
  if (g_forked.load()) return Status::not_initialized;  // initializing in a forked child
  if (flags != 0) return Status::invalid_value;
  Devices& d = D();
  std::lock_guard<std::mutex> lock(d.mutex);
  if (d.initialized.load()) return Status::success;
  const int count = get_config().devices;
  if (count == 0) return Status::no_device;
  if (const Status s = reserve_device_regions(count); s != Status::success) return s;
  for (int i = 0; i < count; ++i) {
    auto device = std::make_unique<Device>();
    device->index = i;
    device->primary.device = i;
    device->default_pool = create_pool(i, /*is_default=*/true);
    d.list.push_back(std::move(device));
  }
  pthread_atfork(nullptr, nullptr, [] { g_forked.store(true, std::memory_order_relaxed); });
  d.initialized.store(true, std::memory_order_release);
  return Status::success;
}

int device_count() { return static_cast<int>(D().list.size()); }

Device* device_at(int index) { return D().list.at(static_cast<std::size_t>(index)).get(); }

Status get_device(int ordinal, Device** out) {
  if (const Status s = check_initialized(); s != Status::success) return s;
  if (ordinal < 0 || ordinal >= device_count()) return Status::invalid_device;
  *out = device_at(ordinal);
  return Status::success;
}

Context* as_context(const void* handle) {
  if (check_initialized() != Status::success || handle == nullptr) return nullptr;
  for (const auto& device : D().list) {
    if (to_handle(&device->primary) == handle) return &device->primary;
  }
  return nullptr;
}

void* to_handle(Context* context) { return context; }

Status enable_peer(Context* current, const Context* peer, unsigned int flags) {
  if (flags != 0) return Status::invalid_value;
  if (peer == current) return Status::invalid_device;
  std::lock_guard<std::mutex> lock(current->mutex);
  if (!current->peers.insert(peer->device).second) return Status::peer_already_enabled;
  return Status::success;
}

}  // namespace anydev_emu::core
