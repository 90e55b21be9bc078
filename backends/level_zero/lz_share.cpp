// SPDX-License-Identifier: Apache-2.0
// Memory shared between processes (backend_entries.h, "Sharing between
// processes"; docs/backends.md, level_zero "Sharing between processes").
//
// Device memory: zeMemAllocDevice, exported with zeMemGetIpcHandle, opened
// with zeMemOpenIpcHandle, closed with zeMemCloseIpcHandle. Host memory:
// Level Zero's IPC handles describe device allocations only, so host memory
// is a sealed memfd mapped MAP_SHARED in each process and imported into the
// driver with Intel's experimental zexDriverImportExternalPointer (found with
// zeDriverGetExtensionFunctionAddress; without it host memory is
// UNSUPPORTED, naming it), released with zexDriverReleaseImportedPointer.
//
// The fd form: the headers (and Debian's 1.8 loader) predate
// zeMemGetFileDescriptorFromIpcHandleExp, so the handle's first bytes are
// read as the dma-buf fd, as Intel's driver lays out ze_ipc_mem_handle_t.
// That fd (dup'ed) travels in fds[0]; the whole handle travels in the
// payload, and the importer writes its own copy of the fd back in before
// zeMemOpenIpcHandle.
//
// Lifetime: the importer's mapping holds the dma-buf, whose kernel refcount
// keeps the pages alive after the exporter frees or exits. That is Intel's
// driver's behaviour; Level Zero's spec does not promise it.
//
// Interprocess events are in lz_share_events.cpp.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "lz_entries.h"
#include "lz_errors.h"
#include "lz_share_events.h"
#include "lz_state.h"

namespace anydev::level_zero {
namespace {

constexpr std::uint32_t kMagic = 0x4c5a5348;  // "LZSH"
constexpr std::uint32_t kVersion = 1;

// What memory_export writes into the payload; memory_import checks each field.
struct Payload {
  std::uint32_t magic;
  std::uint32_t version;
  std::uint32_t kind;  // anydev_bk_memory_kind_t
  std::uint32_t reserved;
  std::uint64_t bytes;
  std::uint64_t fd_device;                     // st_dev and st_ino of the fd: the importer
  std::uint64_t fd_inode;                      // checks it received that file
  std::uint8_t uuid[ZE_MAX_DEVICE_UUID_SIZE];  // ze_device_properties_t::uuid
  ze_ipc_mem_handle_t ipc;                     // fd bytes overwritten on import
};
static_assert(sizeof(Payload) <= ANYDEV_BK_SHARE_PAYLOAD_MAX, "payload too large");

// A shareable pointer of this process: device memory it allocated or
// opened (memory_unshare picks zeMemFree or zeMemCloseIpcHandle), or host
// memory it mapped from a memfd (`fd`, `bytes`: unimported, unmapped and
// closed by memory_unshare).
struct Entry {
  bool imported = false;
  bool host = false;
  int fd = -1;
  std::size_t bytes = 0;
};

// The shareable pointers, guarded by its mutex. Never destroyed: the core's
// reclaimer may release memory during exit, after static destructors ran.
struct Registry {
  std::mutex mutex;
  std::unordered_map<void*, Entry> imported;  // pointer -> how it was made
};

// Intel's experimental host-pointer import (zex_api.h; not in the headers).
using ImportFn = ze_result_t(ZE_APICALL*)(ze_driver_handle_t, void*, size_t);
using ReleaseFn = ze_result_t(ZE_APICALL*)(ze_driver_handle_t, void*);
struct HostImport {
  ImportFn import = nullptr;
  ReleaseFn release = nullptr;
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

void uuid_of(int device, std::uint8_t out[ZE_MAX_DEVICE_UUID_SIZE], ze_result_t* r) {
  ze_device_properties_t props = {};
  props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  *r = api().zeDeviceGetProperties(device_at(device).device, &props);
  if (*r == ZE_RESULT_SUCCESS) std::memcpy(out, props.uuid.id, ZE_MAX_DEVICE_UUID_SIZE);
}

std::string hex_uuid(const std::uint8_t in[ZE_MAX_DEVICE_UUID_SIZE]) {
  std::uint8_t copy[ZE_MAX_DEVICE_UUID_SIZE];
  std::memcpy(copy, in, sizeof(copy));
  std::string hex;
  static const char kDigits[] = "0123456789abcdef";
  for (std::uint8_t b : copy) {
    hex += kDigits[b >> 4];
    hex += kDigits[b & 15];
  }
  return hex;
}

// UNSUPPORTED unless the device's driver offers memory IPC: the entry
// points resolved and zeDriverGetIpcProperties reporting
// ZE_IPC_PROPERTY_FLAG_MEMORY.
anydev_status_t check_memory_ipc(int device, anydev_bk_memory_kind_t kind, const char* op) {
  if (const anydev_status_t s = check_device(device, op); s != ANYDEV_SUCCESS) return s;
  if (kind != ANYDEV_BK_MEMORY_DEVICE) return ANYDEV_SUCCESS;  // host_import checks
  const LoaderApi& a = api();
  if (a.zeDriverGetIpcProperties == nullptr || a.zeMemGetIpcHandle == nullptr ||
      a.zeMemOpenIpcHandle == nullptr || a.zeMemCloseIpcHandle == nullptr) {
    return report_error(ANYDEV_ERROR_UNSUPPORTED,
                        cat(op, ": the Level Zero loader ", a.path,
                            " lacks the IPC entry points (zeMemGetIpcHandle, zeMemOpenIpcHandle, "
                            "zeMemCloseIpcHandle, zeDriverGetIpcProperties)"));
  }
  return require_driver_ipc(device, op, ZE_IPC_PROPERTY_FLAG_MEMORY, "memory",
                            "ZE_IPC_PROPERTY_FLAG_MEMORY");
}

// The driver's host-pointer import, or UNSUPPORTED naming what is missing.
anydev_status_t host_import(int device, const char* op, HostImport* out) {
  const LoaderApi& a = api();
  const ze_driver_handle_t driver = device_at(device).driver->driver;
  ze_result_t r = ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
  void* import = nullptr;
  void* release = nullptr;
  if (a.zeDriverGetExtensionFunctionAddress != nullptr) {
    r = a.zeDriverGetExtensionFunctionAddress(driver, "zexDriverImportExternalPointer", &import);
    if (r == ZE_RESULT_SUCCESS) {
      r = a.zeDriverGetExtensionFunctionAddress(driver, "zexDriverReleaseImportedPointer",
                                                &release);
    }
  }
  if (r != ZE_RESULT_SUCCESS || import == nullptr || release == nullptr) {
    return report_error(
        ANYDEV_ERROR_UNSUPPORTED,
        cat(op,
            ": the level_zero backend shares host memory as a memfd mapping imported with "
            "Intel's experimental zexDriverImportExternalPointer (Level Zero IPC handles "
            "describe device allocations only), and the driver of level_zero device ",
            device, " does not offer it (zeDriverGetExtensionFunctionAddress: ",
            a.zeDriverGetExtensionFunctionAddress == nullptr ? "missing from the loader"
                                                             : describe_result(r),
            ")"));
  }
  out->import = reinterpret_cast<ImportFn>(import);
  out->release = reinterpret_cast<ReleaseFn>(release);
  return ANYDEV_SUCCESS;
}

// Maps `bytes` of memfd `fd` and imports the mapping into the driver.
anydev_status_t map_host(int device, int fd, std::size_t bytes, const char* op, void** out) {
  HostImport fns;
  if (const anydev_status_t s = host_import(device, op, &fns); s != ANYDEV_SUCCESS) return s;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    return report_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                        cat(op, ": mapping ", bytes,
                            " bytes of shareable host memory failed: ", std::strerror(errno)));
  }
  const ze_result_t r = fns.import(device_at(device).driver->driver, p, bytes);
  if (r != ZE_RESULT_SUCCESS) {
    munmap(p, bytes);
    return report_failure(
        r, "zexDriverImportExternalPointer",
        cat(op, ": ", bytes, " bytes of host memory on level_zero device ", device));
  }
  *out = p;
  return ANYDEV_SUCCESS;
}

// Host memory of `entry` at `p`: released from the driver, unmapped, closed.
anydev_status_t unmap_host(int device, void* p, const Entry& entry) {
  HostImport fns;
  anydev_status_t status = host_import(device, "memory_unshare", &fns);
  if (status == ANYDEV_SUCCESS) {
    const ze_result_t r = fns.release(device_at(device).driver->driver, p);
    if (r != ZE_RESULT_SUCCESS) {
      status = report_failure(r, "zexDriverReleaseImportedPointer", cat("memory_unshare of ", p));
    }
  }
  munmap(p, entry.bytes);
  close(entry.fd);
  return status;
}

anydev_status_t shareable_host_alloc(int device, std::size_t bytes, void** out) {
  const char* op = "shareable_alloc";
  HostImport fns;
  if (const anydev_status_t s = host_import(device, op, &fns); s != ANYDEV_SUCCESS) return s;
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t size = (bytes + page - 1) / page * page;
  const int fd = memfd_create("anydev-lz-host", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const int error = errno;
    if (fd >= 0) close(fd);
    return report_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                        cat(op, ": a memfd of ", size, " bytes: ", std::strerror(error)));
  }
  void* p = nullptr;
  if (const anydev_status_t s = map_host(device, fd, size, op, &p); s != ANYDEV_SUCCESS) {
    close(fd);
    return s;
  }
  const std::lock_guard<std::mutex> lock(registry().mutex);
  registry().imported[p] = Entry{false, true, fd, size};
  *out = p;
  return ANYDEV_SUCCESS;
}

// memory_export of host memory: the memfd travels in fds[0].
anydev_status_t export_host(int device, void* handle, Payload* p, anydev_bk_share_t* out) {
  Entry entry;
  {
    const std::lock_guard<std::mutex> lock(registry().mutex);
    const auto it = registry().imported.find(handle);
    if (it == registry().imported.end() || !it->second.host) {
      return report_error(
          ANYDEV_ERROR_INVALID_ARGUMENT,
          cat("memory_export: ", handle, " is not shareable level_zero host memory"));
    }
    entry = it->second;
  }
  p->bytes = entry.bytes;
  ze_result_t r = ZE_RESULT_SUCCESS;
  uuid_of(device, p->uuid, &r);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeDeviceGetProperties", cat("memory_export on device ", device));
  }
  const int fd = fcntl(entry.fd, F_DUPFD_CLOEXEC, 0);
  struct stat st = {};
  if (fd < 0 || fstat(fd, &st) != 0) {
    const int error = errno;
    if (fd >= 0) close(fd);
    return report_error(
        ANYDEV_ERROR_OUT_OF_MEMORY,
        cat("memory_export: duplicating the host memory's memfd failed: ", std::strerror(error)));
  }
  p->fd_device = st.st_dev;
  p->fd_inode = st.st_ino;
  std::memcpy(out->payload, p, sizeof(*p));
  out->payload_size = sizeof(*p);
  out->fds[0] = fd;
  out->fd_count = 1;
  return ANYDEV_SUCCESS;
}

}  // namespace

anydev_status_t shareable_alloc(int device, anydev_bk_memory_kind_t kind, std::size_t bytes,
                                void** handle, void** address) {
  if (handle == nullptr || address == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "shareable_alloc: null out");
  }
  if (const anydev_status_t s = check_memory_ipc(device, kind, "shareable_alloc");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (kind == ANYDEV_BK_MEMORY_HOST) {
    if (const anydev_status_t s = shareable_host_alloc(device, bytes, handle);
        s != ANYDEV_SUCCESS) {
      return s;
    }
    *address = *handle;
    return ANYDEV_SUCCESS;
  }
  // device_alloc does not use its stream (zeMemAllocDevice is not ordered).
  if (const anydev_status_t s = device_alloc(device, bytes, nullptr, handle, address);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const std::lock_guard<std::mutex> lock(registry().mutex);
  registry().imported[*handle] = Entry{};
  return ANYDEV_SUCCESS;
}

anydev_status_t memory_export(int device, anydev_bk_memory_kind_t kind, void* handle,
                              anydev_bk_share_t* out) {
  if (handle == nullptr || out == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "memory_export: null handle or out");
  }
  if (const anydev_status_t s = check_memory_ipc(device, kind, "memory_export");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  DeviceState& d = device_at(device);
  Payload p = {};
  p.magic = kMagic;
  p.version = kVersion;
  p.kind = static_cast<std::uint32_t>(kind);
  if (kind == ANYDEV_BK_MEMORY_HOST) return export_host(device, handle, &p, out);
  std::size_t size = 0;
  ze_result_t r = api().zeMemGetAddressRange(d.driver->context, handle, nullptr, &size);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeMemGetAddressRange", cat("memory_export of ", handle));
  }
  p.bytes = size;
  uuid_of(device, p.uuid, &r);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeDeviceGetProperties", cat("memory_export on device ", device));
  }
  r = api().zeMemGetIpcHandle(d.driver->context, handle, &p.ipc);
  if (r != ZE_RESULT_SUCCESS) {
    const anydev_status_t status =
        r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE ? ANYDEV_ERROR_UNSUPPORTED : status_for(r);
    return report_failure(status, r, "zeMemGetIpcHandle",
                          cat("memory_export of ", handle, " (level_zero device ", device, ")"));
  }
  int driver_fd = -1;
  std::memcpy(&driver_fd, p.ipc.data, sizeof(driver_fd));
  const int fd = driver_fd >= 0 ? dup(driver_fd) : -1;
  if (fd < 0) {
    return report_error(ANYDEV_ERROR_DEVICE,
                        cat("memory_export: the IPC handle of ", handle,
                            " does not start with a dma-buf fd (", driver_fd, ")"));
  }
  struct stat st = {};
  if (fstat(fd, &st) != 0) {
    close(fd);
    return report_error(ANYDEV_ERROR_DEVICE,
                        cat("memory_export: fstat of the IPC handle's fd ", driver_fd, " failed"));
  }
  p.fd_device = st.st_dev;
  p.fd_inode = st.st_ino;
  std::memset(p.ipc.data, 0xff, sizeof(driver_fd));  // the fd travels in fds[0]
  std::memcpy(out->payload, &p, sizeof(p));
  out->payload_size = sizeof(p);
  out->fds[0] = fd;
  out->fd_count = 1;
  return ANYDEV_SUCCESS;
}

anydev_status_t memory_import(int device, anydev_bk_memory_kind_t kind, const anydev_bk_share_t* in,
                              std::size_t bytes, void** handle, void** address) {
  if (in == nullptr || handle == nullptr || address == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "memory_import: null argument");
  }
  if (const anydev_status_t s = check_memory_ipc(device, kind, "memory_import");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  Payload p = {};
  if (in->payload_size != sizeof(p)) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("memory_import: a level_zero payload is ", sizeof(p),
                            " bytes, this one ", in->payload_size));
  }
  std::memcpy(&p, in->payload, sizeof(p));
  if (p.magic != kMagic || p.version != kVersion) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("memory_import: not a level_zero memory payload of version ", kVersion,
                            " (magic ", p.magic, ", version ", p.version, ")"));
  }
  if (p.kind != static_cast<std::uint32_t>(kind) || p.bytes < bytes) {
    return report_error(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat("memory_import: the payload describes ", p.bytes, " bytes of memory kind ", p.kind,
            ", asked for ", bytes, " bytes of kind ", static_cast<int>(kind)));
  }
  std::uint8_t mine[ZE_MAX_DEVICE_UUID_SIZE] = {};
  ze_result_t r = ZE_RESULT_SUCCESS;
  uuid_of(device, mine, &r);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeDeviceGetProperties", cat("memory_import on device ", device));
  }
  if (std::memcmp(mine, p.uuid, sizeof(mine)) != 0) {
    return report_error(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat("memory_import: the memory belongs to the level_zero device of uuid ", hex_uuid(p.uuid),
            ", not to device ", device, " (uuid ", hex_uuid(mine), ")"));
  }
  if (in->fd_count != 1 || in->fds[0] < 0 || fcntl(in->fds[0], F_GETFD) == -1) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("memory_import: a level_zero handle carries one open dma-buf fd (",
                            in->fd_count, " fds, first ", in->fds[0], ")"));
  }
  struct stat st = {};
  if (fstat(in->fds[0], &st) != 0 || st.st_dev != p.fd_device || st.st_ino != p.fd_inode) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("memory_import: fd ", in->fds[0],
                            " is not the file the exporter sent (another device or inode)"));
  }
  if (kind == ANYDEV_BK_MEMORY_HOST) {
    const int own = fcntl(in->fds[0], F_DUPFD_CLOEXEC, 0);
    if (own < 0) {
      return report_error(
          ANYDEV_ERROR_OUT_OF_MEMORY,
          cat("memory_import: duplicating fd ", in->fds[0], " failed: ", std::strerror(errno)));
    }
    if (static_cast<std::uint64_t>(st.st_size) != p.bytes) {
      close(own);
      return report_error(
          ANYDEV_ERROR_INVALID_ARGUMENT,
          cat("memory_import: the memfd holds ", st.st_size, " bytes, the payload says ", p.bytes));
    }
    void* ptr = nullptr;
    if (const anydev_status_t s = map_host(device, own, p.bytes, "memory_import", &ptr);
        s != ANYDEV_SUCCESS) {
      close(own);
      return s;
    }
    {
      const std::lock_guard<std::mutex> lock(registry().mutex);
      registry().imported[ptr] = Entry{true, true, own, p.bytes};
    }
    *handle = ptr;
    *address = ptr;
    return ANYDEV_SUCCESS;
  }
  const int fd = in->fds[0];  // borrowed: the driver imports it, it does not keep it
  std::memcpy(p.ipc.data, &fd, sizeof(fd));
  DeviceState& d = device_at(device);
  void* ptr = nullptr;
  r = api().zeMemOpenIpcHandle(d.driver->context, d.device, p.ipc, 0, &ptr);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(
        r, "zeMemOpenIpcHandle",
        cat("memory_import of ", p.bytes, " bytes on level_zero device ", device));
  }
  {
    const std::lock_guard<std::mutex> lock(registry().mutex);
    registry().imported[ptr] = Entry{true, false, -1, 0};
  }
  *handle = ptr;
  *address = ptr;
  return ANYDEV_SUCCESS;
}

anydev_status_t memory_unshare(int device, anydev_bk_memory_kind_t kind, void* handle) {
  if (handle == nullptr) return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "memory_unshare: null");
  if (const anydev_status_t s = check_device(device, "memory_unshare"); s != ANYDEV_SUCCESS) {
    return s;
  }
  Entry entry;
  {
    const std::lock_guard<std::mutex> lock(registry().mutex);
    const auto it = registry().imported.find(handle);
    if (it == registry().imported.end()) {
      return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                          cat("memory_unshare: ", handle, " is not shareable level_zero memory"));
    }
    entry = it->second;
    registry().imported.erase(it);
  }
  if (entry.host) return unmap_host(device, handle, entry);
  if (!entry.imported) return memory_free(device, kind, handle);
  const ze_result_t r = api().zeMemCloseIpcHandle(device_at(device).driver->context, handle);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeMemCloseIpcHandle", cat("memory_unshare of ", handle));
  }
  return ANYDEV_SUCCESS;
}

}  // namespace anydev::level_zero
