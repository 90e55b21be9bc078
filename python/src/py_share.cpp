// SPDX-License-Identifier: Apache-2.0
// Sharing between processes (docs/python.md "Sharing between processes"):
// ShareHandle, the shareable/import members of DeviceContext and
// export_handle on buffers and events. anydev/_sharing.py builds the
// multiprocessing reducers on top of these. Every call that enters anydev
// releases the GIL.
#include "py_share.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "py_errors.h"
#include "py_values.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

using anydev::DeviceContext;
using anydev::DeviceEvent;
using anydev::ShareHandle;

// Called with every shareable buffer or event made here (set by
// anydev/_sharing.py): it re-opens them in a fork() child, where the
// parent's handles are invalid_state. Leaked on purpose: it must outlive the
// module's other objects at interpreter exit.
PyObject* g_tracker = nullptr;

void track(const py::object& made) {
  if (g_tracker == nullptr) return;
  const py::handle tracker(g_tracker);
  tracker(made);
}

// An int fd, or an object with fileno() (a socket).
int fd_of(py::handle socket) {
  if (py::isinstance<py::int_>(socket)) return socket.cast<int>();
  if (py::hasattr(socket, "fileno")) return socket.attr("fileno")().cast<int>();
  throw py::type_error("ShareHandle: expected a socket or an int file descriptor, not " +
                       std::string(py::str(socket.get_type().attr("__name__"))));
}

py::bytes handle_bytes(const ShareHandle& h) {
  const auto bytes = h.bytes();
  return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

py::tuple handle_fds(const ShareHandle& h) {
  py::list out;
  for (std::uint32_t i = 0; i < h.raw().fd_count && i < ANYDEV_SHARE_MAX_FDS; ++i) {
    out.append(h.raw().fds[i]);
  }
  return py::tuple(out);
}

// A handle from its bytes and, optionally, fds it takes over.
ShareHandle from_bytes(py::bytes data, const std::vector<int>& fds) {
  const std::string text = data;
  if (text.size() != ANYDEV_SHARE_HANDLE_BYTES) {
    throw Error(Status::invalid_argument, "ShareHandle.from_bytes: " + std::to_string(text.size()) +
                                              " bytes given; a handle is " +
                                              std::to_string(ANYDEV_SHARE_HANDLE_BYTES));
  }
  if (fds.size() > ANYDEV_SHARE_MAX_FDS) {
    throw Error(Status::invalid_argument, "ShareHandle.from_bytes: " + std::to_string(fds.size()) +
                                              " fds given; a handle holds at most " +
                                              std::to_string(ANYDEV_SHARE_MAX_FDS));
  }
  ShareHandle out = ShareHandle::from_bytes(std::span<const std::uint8_t>(
      reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  for (std::size_t i = 0; i < fds.size(); ++i) out.raw().fds[i] = fds[i];
  out.raw().fd_count = static_cast<std::uint32_t>(fds.size());
  return out;
}

void bind_share_handle(py::module_& m) {
  py::class_<ShareHandle>(
      m, "ShareHandle",
      "A buffer or event on its way to another process (Buffer.export_handle(), "
      "DeviceEvent.export_handle()): 256 serialisable bytes plus the file descriptors the "
      "object needs, which this handle owns and closes on close(), on leaving a with-block or "
      "when collected. Not for concurrent use.")
      .def_static("from_bytes", &from_bytes, py::arg("data"), py::arg("fds") = std::vector<int>(),
                  "A handle from its 256 bytes and optionally the fds it takes over (closed "
                  "by close()); without fds, fetch_fds() copies them from the exporter.")
      .def_static(
          "receive",
          [](py::handle socket) {
            const int fd = fd_of(socket);
            const WithoutGil unlocked;
            return ShareHandle::receive(fd);
          },
          py::arg("sock"),
          "Receives one handle sent with send() over a connected AF_UNIX socket (a socket "
          "object or an fd); the new handle owns the fds received.")
      .def("to_bytes", &handle_bytes, "The 256 serialisable bytes (without the fds).")
      .def("__bytes__", &handle_bytes)
      .def_property_readonly("fds", &handle_fds, "The fds the handle owns, as a tuple of ints.")
      .def(
          "send",
          [](const ShareHandle& h, py::handle socket) {
            const int fd = fd_of(socket);
            const WithoutGil unlocked;
            h.send(fd);
          },
          py::arg("sock"),
          "Sends the bytes and the fds (SCM_RIGHTS) over a connected AF_UNIX socket (a socket "
          "object or an fd); this handle keeps its fds.")
      .def("fetch_fds", &ShareHandle::fetch_fds, py::call_guard<WithoutGil>(),
           "Copies the fds out of the exporting process (pidfd_getfd; Linux 5.6+ and ptrace "
           "permission over it), for a handle that travelled as bytes alone.")
      .def("close", &ShareHandle::close, py::call_guard<WithoutGil>(),
           "Closes the fds now (after sending or importing).")
      .def(
          "__enter__", [](py::object self) { return self; }, "Returns the handle.")
      .def(
          "__exit__",
          [](ShareHandle& h, py::handle, py::handle, py::handle) {
            {
              const WithoutGil unlocked;
              h.close();
            }
            return false;
          },
          "Closes the fds.")
      .def("__repr__", [](const ShareHandle& h) {
        return "ShareHandle(fds=" + std::string(py::repr(handle_fds(h))) + ")";
      });
}

// The buffer of an import, or InvalidArgumentError (naming `method`) when
// the handle is of the other memory kind.
py::object import_kind(const DeviceContext& c, const ShareHandle& h, anydev_memory_kind_t kind,
                       const char* method) {
  const anydev_context_t ctx = c.handle();
  if (ctx == nullptr) anydev::detail::throw_empty("DeviceContext", method, "context");
  anydev_buffer_t out = nullptr;
  {
    const WithoutGil unlocked;
    check(anydev_buffer_import(ctx, &h.raw(), &out));
  }
  anydev::detail::BufferHandle held(out);
  anydev_buffer_info_t info{};
  info.struct_size = sizeof(info);
  check(anydev_buffer_get_info(out, &info));
  if (info.kind != kind) {
    throw Error(Status::invalid_argument,
                std::string("DeviceContext.") + method + ": the handle is of " +
                    (info.kind == ANYDEV_MEMORY_HOST ? "host memory (use import_host_buffer)"
                                                     : "device memory (use import_buffer)"));
  }
  py::object made = wrap_buffer(held.detach());
  track(made);
  return made;
}

py::object create_shareable(const DeviceContext& c, anydev_memory_kind_t kind, std::size_t size,
                            py::handle dtype, const char* method) {
  const anydev_context_t ctx = c.handle();
  if (ctx == nullptr) anydev::detail::throw_empty("DeviceContext", method, "context");
  const anydev_dtype_t type = dtype_from_object(dtype);
  anydev_buffer_t out = nullptr;
  {
    const WithoutGil unlocked;
    check(anydev_buffer_create_shareable(ctx, kind, type, size, &out));
  }
  py::object made = wrap_buffer(out);
  track(made);
  return made;
}

// Replaces the C buffer of `self` by the import of `h` on ctx: how a buffer
// inherited through fork() becomes usable in the child (anydev/_sharing.py).
void reopen_buffer(Buffer& self, const DeviceContext& c, const ShareHandle& h) {
  anydev_buffer_t out = nullptr;
  {
    const WithoutGil unlocked;
    check(anydev_buffer_import(c.handle(), &h.raw(), &out));
  }
  anydev::detail::BufferHandle held(out);
  anydev_buffer_info_t info{};
  info.struct_size = sizeof(info);
  check(anydev_buffer_get_info(out, &info));
  self.handle = std::move(held);
  self.kind = info.kind;
  self.dtype = info.dtype;
  self.count = info.count;
  self.taken = false;
}

}  // namespace

void bind_share_types(py::module_& m) {
  bind_share_handle(m);
  m.def(
      "_set_share_tracker",
      [](py::object tracker) {
        PyObject* old = g_tracker;
        g_tracker = tracker.is_none() ? nullptr : tracker.release().ptr();
        Py_XDECREF(old);
      },
      py::arg("tracker"), "Used by anydev._sharing: called with each shareable object made.");
}

void bind_share_context(py::class_<DeviceContext>& cls) {
  cls.def(
         "create_shareable_host_buffer",
         [](const DeviceContext& c, std::size_t size, py::handle dtype) {
           return create_shareable(c, ANYDEV_MEMORY_HOST, size, dtype,
                                   "create_shareable_host_buffer");
         },
         py::arg("size"), py::arg("dtype") = "float32",
         "A HostBuffer of `size` elements that other processes can open (export_handle(), "
         "or pass it through multiprocessing). UnsupportedError, naming the reason, where the "
         "backend cannot share host memory.")
      .def(
          "create_shareable_buffer",
          [](const DeviceContext& c, std::size_t size, py::handle dtype) {
            return create_shareable(c, ANYDEV_MEMORY_DEVICE, size, dtype,
                                    "create_shareable_buffer");
          },
          py::arg("size"), py::arg("dtype") = "float32",
          "A DeviceBuffer of `size` elements that other processes can open.")
      .def(
          "import_host_buffer",
          [](const DeviceContext& c, const ShareHandle& h) {
            return import_kind(c, h, ANYDEV_MEMORY_HOST, "import_host_buffer");
          },
          py::arg("handle"),
          "Opens a HostBuffer exported by another process (or this one) on this context; the "
          "handle keeps its fds (close it after).")
      .def(
          "import_buffer",
          [](const DeviceContext& c, const ShareHandle& h) {
            return import_kind(c, h, ANYDEV_MEMORY_DEVICE, "import_buffer");
          },
          py::arg("handle"), "Opens an exported DeviceBuffer on this context.")
      .def(
          "create_shareable_event",
          [](const DeviceContext& c) {
            std::optional<DeviceEvent> made;
            {
              const WithoutGil unlocked;
              made.emplace(c.create_shareable_event());
            }
            py::object out = py::cast(std::move(*made));
            out.attr("_api") = c.api();
            out.attr("_device") = c.id();
            track(out);
            return out;
          },
          "An event other processes can open (export_handle()); it never measures time.")
      .def(
          "import_event",
          [](const DeviceContext& c, const ShareHandle& h) {
            std::optional<DeviceEvent> made;
            {
              const WithoutGil unlocked;
              made.emplace(c.import_event(h));
            }
            py::object out = py::cast(std::move(*made));
            out.attr("_api") = c.api();
            out.attr("_device") = c.id();
            track(out);
            return out;
          },
          py::arg("handle"),
          "Opens an exported event: waiting for it orders this process's stream after the "
          "exporter's recorded work.");
}

void bind_share_buffer(py::class_<Buffer>& cls) {
  cls.def(
         "export_handle",
         [](const Buffer& b) {
           const anydev_buffer_t handle = b.get("export_handle");
           anydev_share_handle_t raw{};
           {
             const WithoutGil unlocked;
             check(anydev_buffer_export(handle, &raw));
           }
           return ShareHandle::adopt(raw);
         },
         "A ShareHandle another process opens with import_host_buffer / import_buffer (a view "
         "exports its allocation plus its offset). UnsupportedError unless the buffer was "
         "created shareable or imported.")
      .def("_reopen", &reopen_buffer, py::arg("ctx"), py::arg("handle"),
           "Used by anydev._sharing after fork(): this object now holds the import of handle.");
}

void bind_share_event(py::class_<DeviceEvent>& cls) {
  cls.def("export_handle", &DeviceEvent::export_handle, py::call_guard<WithoutGil>(),
          "A ShareHandle another process opens with import_event (the event must come from "
          "create_shareable_event or an import).")
      .def(
          "_reopen",
          [](DeviceEvent& self, const DeviceContext& c, const ShareHandle& h) {
            const WithoutGil unlocked;
            self = c.import_event(h);
          },
          py::arg("ctx"), py::arg("handle"),
          "Used by anydev._sharing after fork(): this object now holds the import of handle.");
}

}  // namespace anydev::python
