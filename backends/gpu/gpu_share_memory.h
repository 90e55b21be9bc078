// SPDX-License-Identifier: Apache-2.0
// Shareable memory of a GPU backend (gpu_share.h): shareable_alloc,
// memory_export, memory_import and memory_unshare.
//
// Ownership: the registry below owns each Shared record from shareable_alloc
// or memory_import until memory_unshare; the core owns the memory handle.
// Thread-safe: the registry has its own lock.
#ifndef ANYDEV_BACKENDS_GPU_GPU_SHARE_MEMORY_H_
#define ANYDEV_BACKENDS_GPU_GPU_SHARE_MEMORY_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "gpu_memory.h"
#include "gpu_objects.h"
#include "gpu_share_payload.h"
#include "gpu_state.h"

namespace anydev::gpu {
// One shareable or imported allocation of this process: what its release
// must undo. Owned by the registry; touched only under its lock or after
// being taken out of it.
template <class Api>
struct Shared {
  int device = 0;
  anydev_bk_memory_kind_t kind = ANYDEV_BK_MEMORY_DEVICE;
  std::size_t bytes = 0;
  std::size_t length = 0;
  int fd = -1;                                // host: the memfd
  typename Api::alloc_handle_t allocation{};  // device: the VMM allocation
  bool mapped = false;
  bool reserved = false;
  bool registered = false;
};

// The shareable and imported allocations of this process, by address.
// Never destroyed (entries may run during exit); `mutex` guards `blocks`.
template <class Api>
struct ShareRegistry {
  std::mutex mutex;
  std::map<void*, std::unique_ptr<Shared<Api>>> blocks;
};

template <class Api>
ShareRegistry<Api>& share_registry() {
  static ShareRegistry<Api>* r = new ShareRegistry<Api>;  // never destroyed
  return *r;
}

// Undoes what `s` holds (device: unmap, free the range, release; host:
// unregister, unmap, close). Returns the first failure, reported unless
// `quiet` (a clean-up after an error already reported).
template <class Api>
anydev_status_t release_shared(void* address, Shared<Api>& s, const char* operation,
                               bool quiet = false) {
  using names = typename Api::driver_t::names;
  const auto& drv = driver<Api>();
  anydev_status_t status = ANYDEV_SUCCESS;
  auto check = [&](typename Api::status_t r, const char* call) {
    if (r != Api::kSuccess && status == ANYDEV_SUCCESS) {
      if (quiet) {
        status = Api::status_for(r);
        return;
      }
      status = report_failure<Api>(r, call,
                                   cat(operation, " of ", s.length, " bytes at ", address, " (",
                                       Api::kName, " device ", s.device, ")"));
    }
  };
  if (s.kind == ANYDEV_BK_MEMORY_HOST) {
    if (s.registered) check(drv.MemHostUnregister(address), names::MemHostUnregister);
    if (s.mapped) ::munmap(address, s.length);
    if (s.fd >= 0) ::close(s.fd);
    return status;
  }
  const auto at = device_address<Api>(address);
  if (s.mapped) check(drv.MemUnmap(at, s.length), names::MemUnmap);
  if (s.reserved) check(drv.MemAddressFree(at, s.length), names::MemAddressFree);
  if (s.allocation != typename Api::alloc_handle_t{}) {
    check(drv.MemRelease(s.allocation), names::MemRelease);
  }
  return status;
}

// Maps `s.allocation` (s.length bytes) into a new range readable and
// writable by s.device; sets *address.
template <class Api>
anydev_status_t map_allocation(Shared<Api>& s, const char* operation, void** address) {
  using names = typename Api::driver_t::names;
  const auto& drv = driver<Api>();
  const std::string what =
      cat(operation, " of ", s.length, " bytes on ", Api::kName, " device ", s.device);
  typename Api::device_ptr at{};
  auto r = drv.MemAddressReserve(&at, s.length, 0, typename Api::device_ptr{}, 0);
  if (r != Api::kSuccess) return report_failure<Api>(r, names::MemAddressReserve, what);
  s.reserved = true;
  *address = to_handle<Api>(at);
  if ((r = drv.MemMap(at, s.length, 0, s.allocation, 0)) != Api::kSuccess) {
    return report_failure<Api>(r, names::MemMap, what);
  }
  s.mapped = true;
  typename Api::access_desc access{};
  access.location.type = Api::kLocationDevice;
  access.location.id = s.device;
  access.flags = Api::kAccessReadWrite;
  if ((r = drv.MemSetAccess(at, s.length, &access, 1)) != Api::kSuccess) {
    return report_failure<Api>(r, names::MemSetAccess, what);
  }
  return ANYDEV_SUCCESS;
}

// Maps memfd `s.fd` and registers it with the driver; sets *address.
template <class Api>
anydev_status_t map_host(Shared<Api>& s, const char* operation, void** address) {
  void* p = ::mmap(nullptr, s.length, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd, 0);
  if (p == MAP_FAILED) {
    return report_error<Api>(ANYDEV_ERROR_OUT_OF_MEMORY,
                             cat(operation, ": mapping ", s.length,
                                 " bytes of shared host memory failed: ", errno_text(errno)));
  }
  *address = p;
  s.mapped = true;
  const auto r = driver<Api>().MemHostRegister(p, s.length, Api::kHostRegisterFlags);
  if (r != Api::kSuccess) {
    return report_failure<Api>(
        r, Api::driver_t::names::MemHostRegister,
        cat(operation, ": registering ", s.length, " bytes of shared host memory with ", Api::kName,
            " device ", s.device));
  }
  s.registered = true;
  return ANYDEV_SUCCESS;
}

// Keeps `s` at `address`; on failure (or an exception) undoes it.
template <class Api>
anydev_status_t finish_shared(std::unique_ptr<Shared<Api>> s, anydev_status_t mapped, void* address,
                              const char* operation, void** handle, void** out) {
  if (mapped != ANYDEV_SUCCESS) {
    static_cast<void>(release_shared<Api>(address, *s, operation, true));
    return mapped;
  }
  try {
    ShareRegistry<Api>& reg = share_registry<Api>();
    std::lock_guard lock(reg.mutex);
    reg.blocks.emplace(address, std::move(s));
  } catch (...) {
    static_cast<void>(release_shared<Api>(address, *s, operation, true));
    throw;
  }
  *handle = address;
  *out = address;
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t not_shareable_here(int device, const std::string& why) {
  return report_error<Api>(
      ANYDEV_ERROR_UNSUPPORTED,
      cat(Api::kName, " device ", device, " cannot share device memory between processes: ", why));
}

template <class Api>
anydev_status_t shareable_alloc(int device, anydev_bk_memory_kind_t kind, std::size_t bytes,
                                void** handle, void** address) {
  using names = typename Api::driver_t::names;
  if (handle == nullptr || address == nullptr) return null_argument<Api>("shareable_alloc", "out");
  if (const anydev_status_t s = check_device<Api>(device, "shareable_alloc"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (bytes == 0) return zero_bytes<Api>("shareable_alloc", device);
  const auto& drv = driver<Api>();
  auto s = std::make_unique<Shared<Api>>();
  s->device = device;
  s->kind = kind;
  s->bytes = bytes;
  void* at = nullptr;
  if (kind == ANYDEV_BK_MEMORY_HOST) {
    if (drv.MemHostRegister == nullptr || drv.MemHostUnregister == nullptr) {
      return report_error<Api>(
          ANYDEV_ERROR_UNSUPPORTED,
          cat(Api::kName, " cannot share host memory: the ", Api::kDriverWhat, " lacks ",
              names::MemHostRegister, " or ", names::MemHostUnregister));
    }
    const std::size_t page = share_page_size();
    s->length = (bytes + page - 1) / page * page;
    s->fd = ::memfd_create("anydev-gpu-shared", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (s->fd < 0 || ::ftruncate(s->fd, static_cast<off_t>(s->length)) != 0 ||
        ::fcntl(s->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
      const int error = errno;
      if (s->fd >= 0) ::close(s->fd);
      return report_error<Api>(ANYDEV_ERROR_OUT_OF_MEMORY,
                               cat("shareable_alloc: a memfd of ", s->length,
                                   " bytes for shared host memory: ", errno_text(error)));
    }
    typename Api::scope scope;
    if (const anydev_status_t e = scope.enter(device, "shareable_alloc"); e != ANYDEV_SUCCESS) {
      ::close(s->fd);
      return e;
    }
    const anydev_status_t mapped = map_host<Api>(*s, "shareable_alloc", &at);
    return finish_shared<Api>(std::move(s), mapped, at, "shareable_alloc", handle, address);
  }
  std::string why;
  if (!Api::share_support(device, &why)) return not_shareable_here<Api>(device, why);
  typename Api::scope scope;
  if (const anydev_status_t e = scope.enter(device, "shareable_alloc"); e != ANYDEV_SUCCESS) {
    return e;
  }
  typename Api::alloc_prop prop{};
  Api::make_alloc_prop(device, &prop);
  std::size_t granularity = 0;
  auto r = drv.MemGetAllocationGranularity(&granularity, &prop, Api::kGranularityMinimum);
  if (r != Api::kSuccess || granularity == 0) {
    return report_failure<Api>(r, names::MemGetAllocationGranularity,
                               cat("shareable_alloc on ", Api::kName, " device ", device));
  }
  s->length = (bytes + granularity - 1) / granularity * granularity;
  if ((r = drv.MemCreate(&s->allocation, s->length, &prop, 0)) != Api::kSuccess) {
    return allocation_failure<Api>(r, names::MemCreate, bytes,
                                   device_state<Api>(device).total_memory, "device memory",
                                   cat("shareable_alloc of ", bytes, " bytes (", s->length,
                                       " mapped) on ", Api::kName, " device ", device));
  }
  const anydev_status_t mapped = map_allocation<Api>(*s, "shareable_alloc", &at);
  return finish_shared<Api>(std::move(s), mapped, at, "shareable_alloc", handle, address);
}

template <class Api>
anydev_status_t memory_export(int device, anydev_bk_memory_kind_t kind, void* handle,
                              anydev_bk_share_t* out) {
  using names = typename Api::driver_t::names;
  if (out == nullptr) return null_argument<Api>("memory_export", "out");
  SharePayload payload = start_payload<Api>(kind, device);
  int fd = -1;
  {
    ShareRegistry<Api>& reg = share_registry<Api>();
    std::lock_guard lock(reg.mutex);
    auto found = reg.blocks.find(handle);
    if (found == reg.blocks.end() || found->second->kind != kind ||
        found->second->device != device) {
      return report_error<Api>(ANYDEV_ERROR_UNSUPPORTED,
                               cat(Api::kName, " memory_export(", handle,
                                   "): not shareable memory of this backend on device ", device,
                                   " (made by shareable_alloc or imported)"));
    }
    const Shared<Api>& s = *found->second;
    payload.bytes = s.bytes;
    payload.length = s.length;
    if (kind == ANYDEV_BK_MEMORY_HOST) {
      fd = ::fcntl(s.fd, F_DUPFD_CLOEXEC, 0);
      if (fd < 0) {
        return report_error<Api>(
            ANYDEV_ERROR_OUT_OF_MEMORY,
            cat("memory_export: duplicating memfd ", s.fd, " failed: ", errno_text(errno)));
      }
    } else {
      typename Api::scope scope;
      if (const anydev_status_t e = scope.enter(device, "memory_export"); e != ANYDEV_SUCCESS) {
        return e;
      }
      const auto r =
          driver<Api>().MemExportToShareableHandle(&fd, s.allocation, Api::kHandlePosixFd, 0);
      if (r != Api::kSuccess) {
        return report_failure<Api>(
            r, names::MemExportToShareableHandle,
            cat("memory_export of ", s.length, " bytes on ", Api::kName, " device ", device));
      }
    }
  }
  return finish_export<Api>(fd, &payload, "memory_export", out);
}

template <class Api>
anydev_status_t memory_import(int device, anydev_bk_memory_kind_t kind, const anydev_bk_share_t* in,
                              std::size_t bytes, void** handle, void** address) {
  using names = typename Api::driver_t::names;
  if (handle == nullptr || address == nullptr) return null_argument<Api>("memory_import", "out");
  if (const anydev_status_t s = check_device<Api>(device, "memory_import"); s != ANYDEV_SUCCESS) {
    return s;
  }
  SharePayload payload{};
  if (const anydev_status_t s = check_payload<Api>(device, in, kind, "memory_import", &payload);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (payload.bytes != bytes || payload.length < bytes) {
    return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                             cat(Api::kName, " memory_import: the handle says ", bytes,
                                 " bytes but the exporter allocated ", payload.bytes));
  }
  auto s = std::make_unique<Shared<Api>>();
  s->device = device;
  s->kind = kind;
  s->bytes = bytes;
  s->length = payload.length;
  void* at = nullptr;
  const auto& drv = driver<Api>();
  if (kind == ANYDEV_BK_MEMORY_HOST) {
    const int seals = ::fcntl(in->fds[0], F_GET_SEALS);
    struct stat info {};
    if (seals < 0 || (seals & F_SEAL_SHRINK) == 0 || ::fstat(in->fds[0], &info) != 0 ||
        static_cast<std::uint64_t>(info.st_size) < payload.length) {
      return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                               cat(Api::kName, " memory_import: fd ", in->fds[0],
                                   " is not a sealed memfd of ", payload.length, " bytes"));
    }
    if (drv.MemHostRegister == nullptr || drv.MemHostUnregister == nullptr) {
      return report_error<Api>(ANYDEV_ERROR_UNSUPPORTED,
                               cat(Api::kName, " cannot share host memory: the ", Api::kDriverWhat,
                                   " lacks ", names::MemHostRegister));
    }
    s->fd = ::fcntl(in->fds[0], F_DUPFD_CLOEXEC, 0);
    if (s->fd < 0) {
      return report_error<Api>(
          ANYDEV_ERROR_OUT_OF_MEMORY,
          cat("memory_import: duplicating fd ", in->fds[0], " failed: ", errno_text(errno)));
    }
    typename Api::scope scope;
    if (const anydev_status_t e = scope.enter(device, "memory_import"); e != ANYDEV_SUCCESS) {
      ::close(s->fd);
      return e;
    }
    const anydev_status_t mapped = map_host<Api>(*s, "memory_import", &at);
    return finish_shared<Api>(std::move(s), mapped, at, "memory_import", handle, address);
  }
  std::string why;
  if (!Api::share_support(device, &why)) return not_shareable_here<Api>(device, why);
  typename Api::scope scope;
  if (const anydev_status_t e = scope.enter(device, "memory_import"); e != ANYDEV_SUCCESS) return e;
  // The driver takes the fd as the pointer's value and does not keep it.
  void* os_handle = reinterpret_cast<void*>(static_cast<std::intptr_t>(in->fds[0]));
  const auto r = drv.MemImportFromShareableHandle(&s->allocation, os_handle, Api::kHandlePosixFd);
  if (r != Api::kSuccess) {
    return report_failure<Api>(r, names::MemImportFromShareableHandle,
                               cat("memory_import of ", payload.length, " bytes on ", Api::kName,
                                   " device ", device, " from fd ", in->fds[0]));
  }
  const anydev_status_t mapped = map_allocation<Api>(*s, "memory_import", &at);
  return finish_shared<Api>(std::move(s), mapped, at, "memory_import", handle, address);
}

template <class Api>
anydev_status_t memory_unshare(int device, anydev_bk_memory_kind_t kind, void* handle) {
  std::unique_ptr<Shared<Api>> s;
  {
    ShareRegistry<Api>& reg = share_registry<Api>();
    std::lock_guard lock(reg.mutex);
    auto found = reg.blocks.find(handle);
    if (found == reg.blocks.end() || found->second->kind != kind) {
      return report_error<Api>(
          ANYDEV_ERROR_INVALID_ARGUMENT,
          cat(Api::kName, " memory_unshare(", handle, "): not shared memory of this backend"));
    }
    s = std::move(found->second);
    reg.blocks.erase(found);
  }
  typename Api::scope scope;
  if (const anydev_status_t e = scope.enter(device, "memory_unshare"); e != ANYDEV_SUCCESS) {
    return e;
  }
  return release_shared<Api>(handle, *s, "memory_unshare");
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_SHARE_MEMORY_H_
