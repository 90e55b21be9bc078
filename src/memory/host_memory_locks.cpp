// SPDX-License-Identifier: Apache-2.0
#include "memory/host_memory_locks.h"

#include <pthread.h>
#include <sys/resource.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "runtime/registry.h"
#include "support/backend_calls.h"
#include "support/core_mutex.h"
#include "support/fork_guard.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core {
namespace {

struct BlockKey {
  const Backend* backend;
  int device;
  void* handle;
  bool operator==(const BlockKey&) const = default;
};

struct BlockKeyHash {
  std::size_t operator()(const BlockKey& key) const noexcept {
    const auto mix = reinterpret_cast<std::uintptr_t>(key.handle) ^
                     (reinterpret_cast<std::uintptr_t>(key.backend) << 1) ^
                     static_cast<std::uintptr_t>(key.device);
    return std::hash<std::uintptr_t>{}(mix);
  }
};

struct Block {
  std::size_t bytes;
  bool locked;
};

struct State {
  CoreMutex mutex;
  std::unordered_map<BlockKey, Block, BlockKeyHash> blocks;
  std::map<std::pair<const Backend*, int>, HostMemoryLocks> devices;
  std::set<const Backend*> warned;  // backends whose pageable memory was logged
};

State& state() {
  // A ProcessObject, not a guarded static (fork-safe, fork_guard.h).
  static ProcessObject<State> instance;
  return instance.get([] { return new State; },
                      [](State&) {
                        // A child of fork() must not inherit the mutex held by
                        // another thread.
                        pthread_atfork([] { state().mutex.lock(); }, [] { state().mutex.unlock(); },
                                       [] { state().mutex.unlock(); });
                      });
}

std::string memlock_limit_text() {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0) return "unknown";
  if (limit.rlim_cur == RLIM_INFINITY) return "unlimited";
  return cat(limit.rlim_cur, " bytes");
}

// Whether pageable host memory matters on the device: not when the device
// is the host's own processor (an OpenCL CPU device such as PoCL), whose
// copies are host memory copies that nothing stages.
bool pinning_matters(const Backend* backend, int device) {
  return device < 0 || static_cast<std::size_t>(device) >= backend->devices.size() ||
         !backend->devices[static_cast<std::size_t>(device)].host_processor;
}

void log_pageable(const Backend* backend, int device, std::size_t bytes) {
  if (!pinning_matters(backend, device)) {
    log(ANYDEV_LOG_INFO,
        cat(backend->name, ": host memory is pageable on device ", device, " (host_alloc of ",
            bytes,
            " bytes): its driver does not page-lock it, and on this device, the host's own "
            "processor, it does not matter (copies are host memory copies). "
            "HostBuffer::is_locked() reports it (logged once per backend)"));
    return;
  }
  log(ANYDEV_LOG_WARN,
      cat(backend->name, ": host memory is not page-locked (pinned): host_alloc of ", bytes,
          " bytes on device ", device,
          " gave pageable memory, which the OS may swap out and which copies to and from the "
          "device may stage. RLIMIT_MEMLOCK is ",
          memlock_limit_text(),
          "; for a backend that locks with mlock (cpu) raise it with `ulimit -l` (bytes/1024), "
          "LimitMEMLOCK= in a systemd unit or `docker run --ulimit memlock=-1`, or grant "
          "CAP_IPC_LOCK (unless the backend was told not to lock, as with ANYDEV_CPU_MLOCK=0). "
          "anydev_buffer_is_locked / HostBuffer::is_locked() tell which buffers "
          "are locked; anydev-info shows the locked total (logged once per backend)"));
}

}  // namespace

anydev_status_t backend_memory_is_locked(const Backend* backend, int device, void* handle,
                                         int* locked) {
  if (backend->table->memory_is_locked == nullptr) {
    *locked = 1;
    return ANYDEV_SUCCESS;
  }
  int value = 0;
  if (anydev_status_t s = bk(backend->table).memory_is_locked(device, handle, &value);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  *locked = value != 0 ? 1 : 0;
  return ANYDEV_SUCCESS;
}

void note_host_alloc(const Backend* backend, int device, void* handle, std::size_t bytes) noexcept {
  try {
    int locked = 0;
    if (backend->table->memory_is_locked != nullptr) {
      // The caller's call succeeds: keep the thread's last error as it was.
      const anydev_status_t error_status = last_error_status();
      std::string error_message = last_error_message();
      if (backend_memory_is_locked(backend, device, handle, &locked) != ANYDEV_SUCCESS) {
        log(ANYDEV_LOG_DEBUG, cat(backend->name, ": memory_is_locked failed; counting ", bytes,
                                  " bytes of host memory as pageable: ", last_error_message()));
        if (error_status == ANYDEV_SUCCESS) {
          clear_last_error();
        } else {
          set_error(error_status, std::move(error_message));
        }
        locked = 0;
      }
    } else {
      locked = 1;
    }
    bool warn = false;
    {
      State& s = state();
      std::lock_guard<CoreMutex> hold(s.mutex);
      HostMemoryLocks& totals = s.devices[{backend, device}];
      const auto [it, fresh] =
          s.blocks.try_emplace(BlockKey{backend, device, handle}, Block{bytes, locked != 0});
      if (!fresh) {
        // A handle noted before whose free was not seen: count the new block.
        totals.total_bytes -= it->second.bytes;
        if (it->second.locked) totals.locked_bytes -= it->second.bytes;
        it->second = Block{bytes, locked != 0};
      }
      totals.total_bytes += bytes;
      if (locked != 0) totals.locked_bytes += bytes;
      if (locked == 0) warn = s.warned.insert(backend).second;
    }
    if (warn) log_pageable(backend, device, bytes);
  } catch (...) {
    // Out of memory for bookkeeping: the block stays out of the totals.
  }
}

void note_host_free(const Backend* backend, int device, anydev_bk_memory_kind_t kind,
                    void* handle) noexcept {
  if (kind != ANYDEV_BK_MEMORY_HOST) return;
  State& s = state();
  std::lock_guard<CoreMutex> hold(s.mutex);
  const auto it = s.blocks.find(BlockKey{backend, device, handle});
  if (it == s.blocks.end()) return;
  const auto totals = s.devices.find({backend, device});
  if (totals != s.devices.end()) {
    totals->second.total_bytes -= it->second.bytes;
    if (it->second.locked) totals->second.locked_bytes -= it->second.bytes;
  }
  s.blocks.erase(it);
}

HostMemoryLocks host_memory_locks(const Backend* backend, int device) noexcept {
  State& s = state();
  std::lock_guard<CoreMutex> hold(s.mutex);
  const auto it = s.devices.find({backend, device});
  return it == s.devices.end() ? HostMemoryLocks{} : it->second;
}

}  // namespace anydev::core
