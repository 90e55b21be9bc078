// SPDX-License-Identifier: Apache-2.0
// Interprocess events of a GPU backend (gpu_share.h): event_create_shareable,
// event_export and event_import. Each event owns its pid page
// (gpu_share_page.h); recording, waiting and destroying are gpu_streams.h's.
// Thread-safe: nothing here outlives the call but the event the core owns.
#ifndef ANYDEV_BACKENDS_GPU_GPU_SHARE_EVENTS_H_
#define ANYDEV_BACKENDS_GPU_GPU_SHARE_EVENTS_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <new>

#include "gpu_objects.h"
#include "gpu_share_page.h"
#include "gpu_share_payload.h"
#include "gpu_state.h"
#include "gpu_streams.h"

namespace anydev::gpu {

template <class Api>
anydev_status_t ipc_events_supported(const char* operation) {
  using names = typename Api::driver_t::names;
  const auto& drv = driver<Api>();
  if (drv.IpcGetEventHandle == nullptr || drv.IpcOpenEventHandle == nullptr) {
    return report_error<Api>(ANYDEV_ERROR_UNSUPPORTED,
                             cat(Api::kName, " ", operation, ": the ", Api::kDriverWhat, " lacks ",
                                 names::IpcGetEventHandle, " or ", names::IpcOpenEventHandle,
                                 ": no interprocess events"));
  }
  return ANYDEV_SUCCESS;
}

// An Event with a pid page from `fd` (owned by it from here on).
template <class Api>
anydev_status_t adopt_event(int device, typename Api::event_t native, int fd, const char* operation,
                            anydev_bk_event_t* out) {
  auto page = std::make_unique<EventPidPage>();
  page->fd = fd;
  void* memory =
      ::mmap(nullptr, share_page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, page->fd, 0);
  if (memory == MAP_FAILED) {
    static_cast<void>(driver<Api>().EventDestroy(native));
    return report_error<Api>(
        ANYDEV_ERROR_OUT_OF_MEMORY,
        cat(operation, ": mapping the event's pid page failed: ", errno_text(errno)));
  }
  page->page = static_cast<EventPidPage::Layout*>(memory);
  auto* event = new (std::nothrow) Event<Api>{device, native, page.get()};
  if (event == nullptr) {
    static_cast<void>(driver<Api>().EventDestroy(native));
    return report_error<Api>(ANYDEV_ERROR_OUT_OF_MEMORY, cat(operation, ": out of host memory"));
  }
  page.release();
  *out = to_token(event);
  return ANYDEV_SUCCESS;
}

template <class Api>
anydev_status_t event_create_shareable(int device, anydev_bk_event_t* out) {
  if (out == nullptr) return null_argument<Api>("event_create_shareable", "out");
  if (const anydev_status_t s = check_device<Api>(device, "event_create_shareable");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  if (const anydev_status_t s = ipc_events_supported<Api>("event_create_shareable");
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const int fd = ::memfd_create("anydev-gpu-event", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(share_page_size())) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    return report_error<Api>(
        ANYDEV_ERROR_OUT_OF_MEMORY,
        cat("event_create_shareable: the pid page's memfd: ", errno_text(error)));
  }
  typename Api::scope scope;
  if (const anydev_status_t e = scope.enter(device, "event_create_shareable");
      e != ANYDEV_SUCCESS) {
    ::close(fd);
    return e;
  }
  typename Api::event_t native{};
  const auto r = driver<Api>().EventCreate(&native, Api::kSharedEventFlags);
  if (r != Api::kSuccess) {
    ::close(fd);
    return report_failure<Api>(
        r, Api::driver_t::names::EventCreate,
        cat("event_create_shareable (interprocess) on ", Api::kName, " device ", device));
  }
  const anydev_status_t s = adopt_event<Api>(device, native, fd, "event_create_shareable", out);
  if (s == ANYDEV_SUCCESS) {
    auto* layout = as_event<Api>(*out)->shared->page;
    std::memcpy(layout->magic, EventPidPage::kMagic, sizeof layout->magic);
  }
  return s;
}

template <class Api>
anydev_status_t event_export(anydev_bk_event_t token, anydev_bk_share_t* out) {
  const Event<Api>* event = as_event<Api>(token);
  if (event == nullptr || out == nullptr) return null_argument<Api>("event_export", "event or out");
  if (event->shared == nullptr) {
    return report_error<Api>(ANYDEV_ERROR_UNSUPPORTED,
                             cat(Api::kName, " event_export: not an interprocess event"));
  }
  SharePayload payload = start_payload<Api>(kEventKind, event->device);
  payload.length = share_page_size();
  typename Api::ipc_event_handle_t ipc{};
  static_assert(sizeof ipc == sizeof payload.ipc);
  const auto r = call_on_stream<Api>(event->device, true, "event_export", [&] {
    return driver<Api>().IpcGetEventHandle(&ipc, event->native);
  });
  if (r != Api::kSuccess) {
    return report_failure<Api>(r, Api::driver_t::names::IpcGetEventHandle,
                               cat("event_export on ", Api::kName, " device ", event->device));
  }
  std::memcpy(payload.ipc, &ipc, sizeof ipc);
  const int fd = ::fcntl(event->shared->fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    return report_error<Api>(
        ANYDEV_ERROR_OUT_OF_MEMORY,
        cat("event_export: duplicating the pid page's fd failed: ", errno_text(errno)));
  }
  return finish_export<Api>(fd, &payload, "event_export", out);
}

template <class Api>
anydev_status_t event_import(int device, const anydev_bk_share_t* in, anydev_bk_event_t* out) {
  if (out == nullptr) return null_argument<Api>("event_import", "out");
  if (const anydev_status_t s = check_device<Api>(device, "event_import"); s != ANYDEV_SUCCESS) {
    return s;
  }
  if (const anydev_status_t s = ipc_events_supported<Api>("event_import"); s != ANYDEV_SUCCESS) {
    return s;
  }
  SharePayload payload{};
  if (const anydev_status_t s =
          check_payload<Api>(device, in, kEventKind, "event_import", &payload);
      s != ANYDEV_SUCCESS) {
    return s;
  }
  const int fd = ::fcntl(in->fds[0], F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    return report_error<Api>(
        ANYDEV_ERROR_OUT_OF_MEMORY,
        cat("event_import: duplicating fd ", in->fds[0], " failed: ", errno_text(errno)));
  }
  typename Api::scope scope;
  if (const anydev_status_t e = scope.enter(device, "event_import"); e != ANYDEV_SUCCESS) {
    ::close(fd);
    return e;
  }
  typename Api::ipc_event_handle_t ipc{};
  std::memcpy(&ipc, payload.ipc, sizeof ipc);
  typename Api::event_t native{};
  const auto r = driver<Api>().IpcOpenEventHandle(&native, ipc);
  if (r != Api::kSuccess) {
    ::close(fd);
    return report_failure<Api>(r, Api::driver_t::names::IpcOpenEventHandle,
                               cat("event_import on ", Api::kName, " device ", device));
  }
  const anydev_status_t s = adopt_event<Api>(device, native, fd, "event_import", out);
  if (s == ANYDEV_SUCCESS) {
    const auto* layout = as_event<Api>(*out)->shared->page;
    if (std::memcmp(layout->magic, EventPidPage::kMagic, sizeof layout->magic) != 0) {
      static_cast<void>(event_destroy<Api>(*out));
      *out = nullptr;
      return report_error<Api>(ANYDEV_ERROR_INVALID_ARGUMENT,
                               cat(Api::kName, " event_import: the fd is not an event's pid page"));
    }
  }
  return s;
}

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_GPU_SHARE_EVENTS_H_
