// SPDX-License-Identifier: Apache-2.0
// Events shared between processes (backend_entries.h, "Sharing between
// processes"; docs/backends.md, level_zero "Sharing between processes").
//
// A shareable event is a ring of kRing host-visible events of its own event
// pool, created with ZE_EVENT_POOL_FLAG_IPC and exported with
// zeEventPoolGetIpcHandle, plus a memfd page shared by every process that
// holds the event: the record sequence number and the pid of the latest
// recorder. Level Zero events are binary and a wait appended on an event
// passes as soon as it is signaled, so re-signalling one event would let a
// wait pass on the previous record. Instead record number n signals ring
// event n % kRing (host-reset first, once record n - kRing completed and
// this process's waits on it passed), then publishes n in the page; a query,
// synchronize or stream wait reads n and uses that ring event: "the latest
// record at the time of the wait", as on every other backend.
//
// The fd form: as with memory, the handle's first bytes are read as the fd
// of the pool's memory (Intel's driver lays out ze_ipc_event_pool_handle_t
// with the dma-buf handle first). It travels in fds[1], the page in fds[0];
// the importer writes its own received fd back before
// zeEventPoolOpenIpcHandle. zeEventPoolPutIpcHandle (1.6) is not called: the
// 1.4 headers lack it.
//
// A recorder that dies with its work unfinished leaves its ring event
// unsignaled forever: waits poll and check the page's pid, failing with
// DEVICE and the pid instead of hanging; a stream wait checks before it
// appends.
//
// Ownership: the SharedEvent is shared by its LzEvent and by every stream
// that appended a signal or wait on it, until those commands ran (the
// stream's held objects), so the ze events and the pool are destroyed (or the
// opened pool closed) only when nothing of this process uses them.
// Thread-safety: `mutex` serializes this process's records and guards
// `passed`; the page's fields are atomics. Records by two processes at once
// are not ordered with each other (as with one event recorded by two
// threads without an order between them).
#include "lz_share_events.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "lz_entries.h"
#include "lz_errors.h"
#include "lz_state.h"

namespace anydev::level_zero {

namespace {

constexpr std::uint32_t kRing = 16;
constexpr std::uint32_t kMagic = 0x4c5a4556;  // "LZEV"
constexpr std::uint32_t kVersion = 1;
constexpr char kPageMagic[8] = {'l', 'z', 'e', 'v', 'p', 'a', 'g', 'e'};

// The page every holder of the event maps.
struct PageLayout {
  char magic[8];
  std::atomic<std::int32_t> recorder_pid;
  std::atomic<std::uint64_t> sequence;  // records so far; 0: never recorded
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "atomics in shared memory");

// What event_export writes into the payload; event_import checks each field.
struct Payload {
  std::uint32_t magic;
  std::uint32_t version;
  std::uint32_t ring;
  std::uint32_t reserved;
  std::uint8_t uuid[ZE_MAX_DEVICE_UUID_SIZE];
  ze_ipc_event_pool_handle_t ipc;  // fd bytes overwritten on import
  std::uint64_t page_device, page_inode, pool_device, pool_inode;
};
static_assert(sizeof(Payload) <= ANYDEV_BK_SHARE_PAYLOAD_MAX, "payload too large");

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

struct SharedEvent {
  int device = 0;
  ze_event_pool_handle_t pool = nullptr;
  bool opened = false;  // zeEventPoolOpenIpcHandle, closed rather than destroyed
  ze_event_handle_t events[kRing] = {};
  ze_ipc_event_pool_handle_t ipc = {};  // the exporter's handle, fd bytes 0xff
  int pool_fd = -1;                     // the pool's memory, for exports
  int page_fd = -1;
  PageLayout* page = nullptr;
  std::mutex mutex;
  // Per ring event: slots signaled after this process's waits on it passed.
  std::vector<SlotRef> passed[kRing];

  SharedEvent() = default;
  SharedEvent(const SharedEvent&) = delete;
  SharedEvent& operator=(const SharedEvent&) = delete;
  ~SharedEvent() {
    const LoaderApi& a = api();
    for (ze_event_handle_t e : events) {
      if (e != nullptr) static_cast<void>(a.zeEventDestroy(e));
    }
    if (pool != nullptr) {
      static_cast<void>(opened ? a.zeEventPoolCloseIpcHandle(pool) : a.zeEventPoolDestroy(pool));
    }
    if (page != nullptr) munmap(page, page_size());
    if (page_fd >= 0) close(page_fd);
    if (pool_fd >= 0) close(pool_fd);
  }

  std::uint64_t sequence() const { return page->sequence.load(std::memory_order_acquire); }
  std::int32_t recorder() const { return page->recorder_pid.load(std::memory_order_acquire); }
  // Whether the latest recorder is another process that no longer exists.
  bool recorder_gone() const {
    const std::int32_t pid = recorder();
    return pid > 0 && pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH;
  }
};

namespace {

[[gnu::cold]] anydev_status_t recorder_exited(const SharedEvent& shared, const char* operation) {
  return report_error(ANYDEV_ERROR_DEVICE,
                      cat(operation, " on level_zero device ", shared.device,
                          ": the interprocess event's recorder, process ", shared.recorder(),
                          ", exited before the work it recorded completed"));
}

// SUCCESS or NOT_READY from zeEventQueryStatus, else the failure reported.
anydev_status_t query(const SharedEvent& shared, ze_event_handle_t e, const char* operation,
                      bool* signaled) {
  const ze_result_t r = api().zeEventQueryStatus(e);
  if (r == ZE_RESULT_SUCCESS || r == ZE_RESULT_NOT_READY) {
    *signaled = r == ZE_RESULT_SUCCESS;
    return ANYDEV_SUCCESS;
  }
  return report_failure(r, "zeEventQueryStatus",
                        cat(operation, " on level_zero device ", shared.device));
}

// Polls ring event `e` until it is signaled, failing if its recorder died
// (never blocks in the driver: a dead recorder's event is never signaled).
anydev_status_t poll_until_signaled(const SharedEvent& shared, ze_event_handle_t e,
                                    const char* operation) {
  auto pause = std::chrono::microseconds(10);
  for (;;) {
    bool signaled = false;
    if (const anydev_status_t s = query(shared, e, operation, &signaled); s != ANYDEV_SUCCESS) {
      return s;
    }
    if (signaled) return ANYDEV_SUCCESS;
    if (shared.recorder_gone()) {
      // Signaled between the query and the check?
      if (query(shared, e, operation, &signaled) == ANYDEV_SUCCESS && signaled) {
        return ANYDEV_SUCCESS;
      }
      return recorder_exited(shared, operation);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
}

anydev_status_t check_event_ipc(int device, const char* op) {
  if (const anydev_status_t s = check_device(device, op); s != ANYDEV_SUCCESS) return s;
  const LoaderApi& a = api();
  if (a.zeDriverGetIpcProperties == nullptr || a.zeEventPoolGetIpcHandle == nullptr ||
      a.zeEventPoolOpenIpcHandle == nullptr || a.zeEventPoolCloseIpcHandle == nullptr ||
      a.zeEventPoolDestroy == nullptr || a.zeEventDestroy == nullptr) {
    return report_error(ANYDEV_ERROR_UNSUPPORTED,
                        cat(op, ": the Level Zero loader ", a.path,
                            " lacks the event pool IPC entry points (zeEventPoolGetIpcHandle, "
                            "zeEventPoolOpenIpcHandle, zeEventPoolCloseIpcHandle, "
                            "zeEventPoolDestroy, zeEventDestroy, zeDriverGetIpcProperties)"));
  }
  return require_driver_ipc(device, op, ZE_IPC_PROPERTY_FLAG_EVENT_POOL, "event pool",
                            "ZE_IPC_PROPERTY_FLAG_EVENT_POOL");
}

anydev_status_t device_uuid(int device, std::uint8_t out[ZE_MAX_DEVICE_UUID_SIZE], const char* op) {
  ze_device_properties_t props = {};
  props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  const ze_result_t r = api().zeDeviceGetProperties(device_at(device).device, &props);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeDeviceGetProperties", cat(op, " on level_zero device ", device));
  }
  std::memcpy(out, props.uuid.id, ZE_MAX_DEVICE_UUID_SIZE);
  return ANYDEV_SUCCESS;
}

// Maps the page of `fd` (owned by `shared` from here on).
anydev_status_t map_page(SharedEvent& shared, int fd, const char* op) {
  shared.page_fd = fd;
  void* memory = mmap(nullptr, page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (memory == MAP_FAILED) {
    return report_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                        cat(op, ": mapping the event's page failed: ", std::strerror(errno)));
  }
  shared.page = static_cast<PageLayout*>(memory);
  return ANYDEV_SUCCESS;
}

// Creates the ring's events in `shared.pool`.
anydev_status_t create_ring(SharedEvent& shared, const char* op) {
  for (std::uint32_t i = 0; i < kRing; ++i) {
    ze_event_desc_t desc = {};
    desc.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
    desc.index = i;
    desc.signal = ZE_EVENT_SCOPE_FLAG_HOST;
    desc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
    const ze_result_t r = api().zeEventCreate(shared.pool, &desc, &shared.events[i]);
    if (r != ZE_RESULT_SUCCESS) {
      shared.events[i] = nullptr;
      return report_failure(r, "zeEventCreate",
                            cat(op, " (event ", i, " of an interprocess pool on level_zero device ",
                                shared.device, ")"));
    }
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t adopt(int device, std::shared_ptr<SharedEvent> shared, anydev_bk_event_t* out) {
  auto* event = new (std::nothrow) LzEvent;
  if (event == nullptr) {
    return report_error(ANYDEV_ERROR_OUT_OF_MEMORY, "shareable event: out of host memory");
  }
  event->device = device;
  event->shared = std::move(shared);
  *out = to_token(event);
  return ANYDEV_SUCCESS;
}

bool same_file(int fd, std::uint64_t device, std::uint64_t inode) {
  struct stat st = {};
  return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == device && st.st_ino == inode;
}

}  // namespace

anydev_status_t require_driver_ipc(int device, const char* op, ze_ipc_property_flags_t flag,
                                   const char* what, const char* flag_name) {
  const LoaderApi& a = api();
  ze_driver_ipc_properties_t props = {};
  props.stype = ZE_STRUCTURE_TYPE_DRIVER_IPC_PROPERTIES;
  const ze_result_t r = a.zeDriverGetIpcProperties(device_at(device).driver->driver, &props);
  if (r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE || r == ZE_RESULT_ERROR_UNINITIALIZED) {
    return report_failure(ANYDEV_ERROR_UNSUPPORTED, r, "zeDriverGetIpcProperties",
                          cat(op, ": the driver of level_zero device ", device, " has no IPC"));
  }
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeDriverGetIpcProperties", cat(op, " on level_zero device ", device));
  }
  if ((props.flags & flag) == 0) {
    return report_error(
        ANYDEV_ERROR_UNSUPPORTED,
        cat(op, ": the driver of level_zero device ", device, " (", device_at(device).name,
            ") reports no ", what, " IPC (zeDriverGetIpcProperties flags ", props.flags, ", no ",
            flag_name, ")"));
  }
  return ANYDEV_SUCCESS;
}

anydev_status_t shared_event_record(LzEvent& event, LzStream& stream) {
  SharedEvent& shared = *event.shared;
  if (stream.device != event.device) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("event_record: the interprocess event belongs to level_zero device ",
                            event.device, ", the stream to device ", stream.device));
  }
  const std::lock_guard<std::mutex> lock(shared.mutex);
  const std::uint64_t n = shared.sequence() + 1;
  ze_event_handle_t e = shared.events[n % kRing];
  if (n > kRing) {
    // Record n - kRing used this event: it must have completed, and this
    // process's waits on it passed, before the reset.
    if (const anydev_status_t s = poll_until_signaled(shared, e, "event_record");
        s != ANYDEV_SUCCESS) {
      return s;
    }
    for (const SlotRef& marker : shared.passed[n % kRing]) {
      const ze_result_t r = api().zeEventHostSynchronize(marker->event, UINT64_MAX);
      if (r != ZE_RESULT_SUCCESS) {
        return report_failure(r, "zeEventHostSynchronize",
                              cat("event_record on level_zero device ", event.device,
                                  " (a wait on the event's previous use)"));
      }
    }
    shared.passed[n % kRing].clear();
    const ze_result_t r = api().zeEventHostReset(e);
    if (r != ZE_RESULT_SUCCESS) {
      return report_failure(r, "zeEventHostReset",
                            cat("event_record on level_zero device ", event.device));
    }
  }
  shared.page->recorder_pid.store(static_cast<std::int32_t>(getpid()), std::memory_order_release);
  {
    const std::lock_guard<std::mutex> stream_lock(stream.mutex);
    const ze_result_t r = api().zeCommandListAppendBarrier(stream.list, e, 0, nullptr);
    if (r != ZE_RESULT_SUCCESS) {
      return report_failure(r, "zeCommandListAppendBarrier",
                            cat("event_record on level_zero device ", stream.device));
    }
    hold_locked(stream, event.shared);
  }
  shared.page->sequence.store(n, std::memory_order_release);
  return ANYDEV_SUCCESS;
}

anydev_status_t shared_event_query(const LzEvent& event, int* complete) {
  const SharedEvent& shared = *event.shared;
  const std::uint64_t n = shared.sequence();
  if (n == 0) {
    *complete = 1;
    return ANYDEV_SUCCESS;
  }
  bool signaled = false;
  if (const anydev_status_t s = query(shared, shared.events[n % kRing], "event_query", &signaled);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  *complete = signaled ? 1 : 0;
  return ANYDEV_SUCCESS;
}

anydev_status_t shared_event_synchronize(const LzEvent& event) {
  const SharedEvent& shared = *event.shared;
  const std::uint64_t n = shared.sequence();
  if (n == 0) return ANYDEV_SUCCESS;
  return poll_until_signaled(shared, shared.events[n % kRing], "event_synchronize");
}

anydev_status_t shared_stream_wait(LzStream& stream, const LzEvent& event) {
  SharedEvent& shared = *event.shared;
  if (device_at(stream.device).driver != device_at(event.device).driver) {
    // Another driver's context: the host waits instead (the caller blocks).
    return shared_event_synchronize(event);
  }
  const std::lock_guard<std::mutex> lock(shared.mutex);
  const std::uint64_t n = shared.sequence();
  if (n == 0) return ANYDEV_SUCCESS;  // never recorded: complete
  ze_event_handle_t e = shared.events[n % kRing];
  bool signaled = false;
  if (const anydev_status_t s = query(shared, e, "stream_wait_event", &signaled);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (signaled) return ANYDEV_SUCCESS;  // nothing to wait for
  if (shared.recorder_gone()) return recorder_exited(shared, "stream_wait_event");
  const std::lock_guard<std::mutex> stream_lock(stream.mutex);
  ze_result_t r = api().zeCommandListAppendWaitOnEvents(stream.list, 1, &e);
  if (r != ZE_RESULT_SUCCESS) {
    return report_failure(r, "zeCommandListAppendWaitOnEvents",
                          cat("stream_wait_event: a stream of level_zero device ", stream.device,
                              " waiting for an interprocess event of device ", event.device));
  }
  // A marker signaled once the wait passed, so that the ring event is reset
  // only after it (event_record). It takes nothing of the stream's held.
  std::vector<std::shared_ptr<void>> held = std::move(stream.held);
  stream.held.clear();
  SlotRef marker;
  const anydev_status_t s = signal_locked(stream, "stream_wait_event", &marker);
  stream.held = std::move(held);
  if (s != ANYDEV_SUCCESS) return s;
  hold_locked(stream, event.shared);
  std::vector<SlotRef>& markers = shared.passed[n % kRing];
  markers.erase(std::remove_if(markers.begin(), markers.end(),
                               [](const SlotRef& m) {
                                 return api().zeEventQueryStatus(m->event) == ZE_RESULT_SUCCESS;
                               }),
                markers.end());
  markers.push_back(std::move(marker));
  return ANYDEV_SUCCESS;
}

ze_event_handle_t shared_event_native(const LzEvent& event) {
  const std::uint64_t n = event.shared->sequence();
  return n == 0 ? nullptr : event.shared->events[n % kRing];
}

anydev_status_t event_create_shareable(int device, anydev_bk_event_t* out) {
  const char* op = "event_create_shareable";
  if (out == nullptr) return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, cat(op, ": null out"));
  if (const anydev_status_t s = check_event_ipc(device, op); s != ANYDEV_SUCCESS) return s;
  auto shared = std::make_shared<SharedEvent>();
  shared->device = device;
  const int page_fd = memfd_create("anydev-lz-event", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (page_fd < 0 || ftruncate(page_fd, static_cast<off_t>(page_size())) != 0 ||
      fcntl(page_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const int error = errno;
    if (page_fd >= 0) close(page_fd);
    return report_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                        cat(op, ": the event page's memfd: ", std::strerror(error)));
  }
  if (const anydev_status_t s = map_page(*shared, page_fd, op); s != ANYDEV_SUCCESS) return s;
  std::memcpy(shared->page->magic, kPageMagic, sizeof(kPageMagic));
  DeviceState& d = device_at(device);
  ze_event_pool_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
  desc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_IPC;
  desc.count = kRing;
  ze_device_handle_t dev = d.device;
  ze_result_t r = api().zeEventPoolCreate(d.driver->context, &desc, 1, &dev, &shared->pool);
  if (r != ZE_RESULT_SUCCESS) {
    shared->pool = nullptr;
    const anydev_status_t status =
        r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE ? ANYDEV_ERROR_UNSUPPORTED : status_for(r);
    return report_failure(status, r, "zeEventPoolCreate",
                          cat(op, ": an interprocess pool (ZE_EVENT_POOL_FLAG_IPC) of ", kRing,
                              " events on level_zero device ", device));
  }
  if (const anydev_status_t s = create_ring(*shared, op); s != ANYDEV_SUCCESS) return s;
  r = api().zeEventPoolGetIpcHandle(shared->pool, &shared->ipc);
  if (r != ZE_RESULT_SUCCESS) {
    const anydev_status_t status =
        r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE ? ANYDEV_ERROR_UNSUPPORTED : status_for(r);
    return report_failure(status, r, "zeEventPoolGetIpcHandle",
                          cat(op, " on level_zero device ", device));
  }
  int driver_fd = -1;
  std::memcpy(&driver_fd, shared->ipc.data, sizeof(driver_fd));
  shared->pool_fd = driver_fd >= 0 ? fcntl(driver_fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (shared->pool_fd < 0) {
    return report_error(
        ANYDEV_ERROR_DEVICE,
        cat(op, ": the event pool's IPC handle does not start with an fd (", driver_fd, ")"));
  }
  std::memset(shared->ipc.data, 0xff, sizeof(driver_fd));  // the fd travels in fds[1]
  return adopt(device, std::move(shared), out);
}

anydev_status_t event_export(anydev_bk_event_t token, anydev_bk_share_t* out) {
  const LzEvent* event = as_event(token);
  if (event == nullptr || out == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "event_export: null event or out");
  }
  if (event->shared == nullptr) {
    return report_error(ANYDEV_ERROR_UNSUPPORTED,
                        "event_export: not an interprocess level_zero event");
  }
  const SharedEvent& shared = *event->shared;
  Payload p = {};
  p.magic = kMagic;
  p.version = kVersion;
  p.ring = kRing;
  if (const anydev_status_t s = device_uuid(event->device, p.uuid, "event_export");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  p.ipc = shared.ipc;
  struct stat page_st = {};
  struct stat pool_st = {};
  if (fstat(shared.page_fd, &page_st) != 0 || fstat(shared.pool_fd, &pool_st) != 0) {
    return report_error(ANYDEV_ERROR_DEVICE, cat("event_export: fstat of the event's fds failed: ",
                                                 std::strerror(errno)));
  }
  p.page_device = page_st.st_dev;
  p.page_inode = page_st.st_ino;
  p.pool_device = pool_st.st_dev;
  p.pool_inode = pool_st.st_ino;
  const int page_fd = fcntl(shared.page_fd, F_DUPFD_CLOEXEC, 0);
  const int pool_fd = page_fd >= 0 ? fcntl(shared.pool_fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (pool_fd < 0) {
    const int error = errno;
    if (page_fd >= 0) close(page_fd);
    return report_error(
        ANYDEV_ERROR_OUT_OF_MEMORY,
        cat("event_export: duplicating the event's fds failed: ", std::strerror(error)));
  }
  std::memcpy(out->payload, &p, sizeof(p));
  out->payload_size = sizeof(p);
  out->fds[0] = page_fd;
  out->fds[1] = pool_fd;
  out->fd_count = 2;
  return ANYDEV_SUCCESS;
}

anydev_status_t event_import(int device, const anydev_bk_share_t* in, anydev_bk_event_t* out) {
  const char* op = "event_import";
  if (in == nullptr || out == nullptr) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT, "event_import: null argument");
  }
  if (const anydev_status_t s = check_event_ipc(device, op); s != ANYDEV_SUCCESS) return s;
  Payload p = {};
  if (in->payload_size != sizeof(p)) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("event_import: a level_zero event payload is ", sizeof(p),
                            " bytes, this one ", in->payload_size));
  }
  std::memcpy(&p, in->payload, sizeof(p));
  if (p.magic != kMagic || p.version != kVersion || p.ring != kRing) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("event_import: not a level_zero event payload of version ", kVersion,
                            " (magic ", p.magic, ", version ", p.version, ", ring ", p.ring, ")"));
  }
  std::uint8_t mine[ZE_MAX_DEVICE_UUID_SIZE] = {};
  if (const anydev_status_t s = device_uuid(device, mine, op); s != ANYDEV_SUCCESS) return s;
  if (std::memcmp(mine, p.uuid, sizeof(mine)) != 0) {
    return report_error(
        ANYDEV_ERROR_INVALID_ARGUMENT,
        cat("event_import: the event belongs to another level_zero device than ", device));
  }
  if (in->fd_count != 2 || !same_file(in->fds[0], p.page_device, p.page_inode) ||
      !same_file(in->fds[1], p.pool_device, p.pool_inode)) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        cat("event_import: a level_zero event handle carries two open fds, the "
                            "event's page and its pool's memory, as exported (",
                            in->fd_count, " fds, ", in->fds[0], " and ", in->fds[1], ")"));
  }
  auto shared = std::make_shared<SharedEvent>();
  shared->device = device;
  shared->opened = true;
  const int page_fd = fcntl(in->fds[0], F_DUPFD_CLOEXEC, 0);
  shared->pool_fd = page_fd >= 0 ? fcntl(in->fds[1], F_DUPFD_CLOEXEC, 0) : -1;
  if (shared->pool_fd < 0) {
    const int error = errno;
    if (page_fd >= 0) close(page_fd);
    return report_error(ANYDEV_ERROR_OUT_OF_MEMORY,
                        cat(op, ": duplicating the handle's fds failed: ", std::strerror(error)));
  }
  if (const anydev_status_t s = map_page(*shared, page_fd, op); s != ANYDEV_SUCCESS) return s;
  if (std::memcmp(shared->page->magic, kPageMagic, sizeof(kPageMagic)) != 0) {
    return report_error(ANYDEV_ERROR_INVALID_ARGUMENT,
                        "event_import: the first fd is not a level_zero event's page");
  }
  shared->ipc = p.ipc;  // kept with the 0xff fd bytes, for re-export
  ze_ipc_event_pool_handle_t ipc = p.ipc;
  const int fd = in->fds[1];  // borrowed: the driver maps it, it does not keep it
  std::memcpy(ipc.data, &fd, sizeof(fd));
  const ze_result_t r =
      api().zeEventPoolOpenIpcHandle(device_at(device).driver->context, ipc, &shared->pool);
  if (r != ZE_RESULT_SUCCESS) {
    shared->pool = nullptr;
    return report_failure(r, "zeEventPoolOpenIpcHandle", cat(op, " on level_zero device ", device));
  }
  if (const anydev_status_t s = create_ring(*shared, op); s != ANYDEV_SUCCESS) return s;
  return adopt(device, std::move(shared), out);
}

}  // namespace anydev::level_zero
