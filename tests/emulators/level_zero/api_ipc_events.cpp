// SPDX-License-Identifier: Apache-2.0
// Interprocess event pools of the emulated driver
// (ANYDEV_LEVEL_ZERO_EMULATOR_IPC=1; without it ZE_EVENT_POOL_FLAG_IPC and
// these calls answer ZE_RESULT_ERROR_UNSUPPORTED_FEATURE).
//
// A pool created with ZE_EVENT_POOL_FLAG_IPC keeps its events' states in a
// memfd of one 32-bit word per event, mapped MAP_SHARED. zeEventPoolGetIpcHandle
// puts that memfd in the handle's first 4 bytes (the pool keeps owning it;
// the caller dups what it sends), then the event count and a magic.
// zeEventPoolOpenIpcHandle maps the fd it is given (dup'ed) as a pool of the
// opening process, whose zeEventCreate at the same index reaches the same
// word: a barrier's signal in one process is seen by a wait, query or host
// synchronize in the other (those poll, since no condition variable crosses
// processes). zeEventPoolCloseIpcHandle releases an opened pool, which
// zeEventPoolDestroy refuses. Thread-safe: the registry's and each event's
// mutex guard the objects; the shared words are atomics.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "emu_lz.h"
#include "emu_lz_api.h"

namespace anydev_lz_emu {
namespace {

constexpr char kMagic[8] = {'l', 'z', 'e', 'm', 'u', 'e', 'v', 'p'};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "atomics in shared memory");

// The handle's layout: fd, event count, magic.
struct HandleLayout {
  std::int32_t fd;
  std::uint32_t count;
  char magic[8];
};
static_assert(sizeof(HandleLayout) <= ZE_MAX_IPC_HANDLE_SIZE, "handle layout too large");

std::size_t bytes_for(std::uint32_t count) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = std::size_t{count} * sizeof(std::uint32_t);
  return (bytes + page - 1) / page * page;
}

ze_result_t map_pool(EventPool& pool, int fd) {
  const std::size_t bytes = bytes_for(pool.count);
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (memory == MAP_FAILED) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  pool.fd = fd;
  pool.shared = static_cast<std::atomic<std::uint32_t>*>(memory);
  pool.mapped_bytes = bytes;
  pool.ipc = true;
  return ZE_RESULT_SUCCESS;
}

}  // namespace

EventPool::~EventPool() {
  if (shared != nullptr) munmap(shared, mapped_bytes);
  if (fd >= 0) close(fd);
}

bool is_signaled(const Event& event) {
  if (event.pool->shared != nullptr) {
    return event.pool->shared[event.index].load(std::memory_order_acquire) != 0;
  }
  return event.signaled;
}

void set_signaled(Event& event, bool value) {
  if (event.pool->shared != nullptr) {
    event.pool->shared[event.index].store(value ? 1u : 0u, std::memory_order_release);
  }
  event.signaled = value;
}

void wait_signaled(Event& event, std::unique_lock<std::mutex>& lock) {
  if (event.pool->shared == nullptr) {
    event.changed.wait(lock, [&event] { return is_signaled(event); });
    return;
  }
  while (!is_signaled(event)) event.changed.wait_for(lock, std::chrono::microseconds(100));
}

ze_result_t make_ipc_pool(EventPool& pool) {
  const int fd = memfd_create("anydev-lz-emu-event-pool", MFD_CLOEXEC);
  if (fd < 0) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  if (ftruncate(fd, static_cast<off_t>(bytes_for(pool.count))) != 0) {
    close(fd);
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  const ze_result_t r = map_pool(pool, fd);
  if (r != ZE_RESULT_SUCCESS) close(fd);
  return r;
}

ze_result_t ZE_APICALL emu_zeEventPoolGetIpcHandle(ze_event_pool_handle_t hEventPool,
                                                   ze_ipc_event_pool_handle_t* phIpc) {
  count_call("zeEventPoolGetIpcHandle");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (hEventPool == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "zeEventPoolGetIpcHandle: null pool");
  }
  std::shared_ptr<EventPool> pool = find_event_pool(hEventPool);
  if (pool == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventPoolGetIpcHandle: unknown pool");
  }
  if (phIpc == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeEventPoolGetIpcHandle: null out");
  }
  if (!ipc_enabled()) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
  if (!pool->ipc || pool->opened) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  pool->opened ? "zeEventPoolGetIpcHandle of a pool opened from another process"
                               : "zeEventPoolGetIpcHandle of a pool created without "
                                 "ZE_EVENT_POOL_FLAG_IPC");
  }
  HandleLayout layout{};
  layout.fd = pool->fd;
  layout.count = pool->count;
  std::memcpy(layout.magic, kMagic, sizeof(kMagic));
  std::memset(phIpc->data, 0, sizeof(phIpc->data));
  std::memcpy(phIpc->data, &layout, sizeof(layout));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeEventPoolOpenIpcHandle(ze_context_handle_t hContext,
                                                    ze_ipc_event_pool_handle_t hIpc,
                                                    ze_event_pool_handle_t* phEventPool) {
  count_call("zeEventPoolOpenIpcHandle");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (hContext == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "zeEventPoolOpenIpcHandle: null context");
  }
  Context* context = find_context(hContext);
  if (context == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventPoolOpenIpcHandle: unknown context");
  }
  if (phEventPool == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "zeEventPoolOpenIpcHandle: null out");
  }
  if (!ipc_enabled()) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
  HandleLayout layout{};
  std::memcpy(&layout, hIpc.data, sizeof(layout));
  if (std::memcmp(layout.magic, kMagic, sizeof(kMagic)) != 0 || layout.count == 0) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeEventPoolOpenIpcHandle: not an event pool handle of this driver");
  }
  struct stat st = {};
  errno = 0;
  if (layout.fd < 0 || fstat(layout.fd, &st) != 0 ||
      static_cast<std::size_t>(st.st_size) != bytes_for(layout.count)) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeEventPoolOpenIpcHandle: the handle's fd " + std::to_string(layout.fd) +
                      " is not the pool's memory file (" +
                      (errno != 0 ? std::strerror(errno) : "wrong size") + ")");
  }
  const int own = fcntl(layout.fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  auto pool = std::make_shared<EventPool>();
  pool->context = context;
  pool->count = layout.count;
  pool->used.assign(layout.count, false);
  pool->opened = true;
  if (const ze_result_t r = map_pool(*pool, own); r != ZE_RESULT_SUCCESS) {
    close(own);
    return r;
  }
  *phEventPool = add_event_pool(pool);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL emu_zeEventPoolCloseIpcHandle(ze_event_pool_handle_t hEventPool) {
  count_call("zeEventPoolCloseIpcHandle");
  if (!initialized()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (hEventPool == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "zeEventPoolCloseIpcHandle: null pool");
  }
  std::shared_ptr<EventPool> pool = find_event_pool(hEventPool);
  if (pool == nullptr) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeEventPoolCloseIpcHandle: unknown pool");
  }
  if (!pool->opened) {
    return misuse(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                  "zeEventPoolCloseIpcHandle of a pool this process created (destroy it with "
                  "zeEventPoolDestroy)");
  }
  {
    const std::lock_guard<std::mutex> lock(pool->mutex);
    for (const bool used : pool->used) {
      if (used) {
        return misuse(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                      "zeEventPoolCloseIpcHandle: events of the pool are still alive");
      }
    }
  }
  remove_event_pool(hEventPool);
  return ZE_RESULT_SUCCESS;
}

}  // namespace anydev_lz_emu
