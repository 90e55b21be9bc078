// SPDX-License-Identifier: Apache-2.0
// DeviceContext, DeviceStream, DeviceEvent and anydev.backends(): the C++
// API's classes (anydev.hpp) bound directly, plus the calls that take a
// run-time dtype. Blocking calls release the GIL.
#include <pybind11/stl.h>

#include <cstdio>
#include <optional>
#include <string>

#include "anydev/anydev.hpp"
#include "py_buffer.h"
#include "py_errors.h"
#include "py_register.h"
#include "py_share.h"
#include "py_values.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

using anydev::DeviceContext;
using anydev::DeviceEvent;
using anydev::DeviceStream;

std::uintptr_t as_int(void* p) { return reinterpret_cast<std::uintptr_t>(p); }

std::string hex_text(void* p) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(as_int(p)));
  return text;
}

// Streams and events made through a context remember its backend and
// device (as Python attributes) for their repr.
py::object with_owner(py::object made, const DeviceContext& ctx) {
  made.attr("_api") = ctx.api();
  made.attr("_device") = ctx.id();
  return made;
}

// "api='cpu', device=0, " or "" for a stream or event of unknown origin.
std::string owner_text(const py::object& self) {
  if (!py::hasattr(self, "_api")) return "";
  return "api='" + self.attr("_api").cast<std::string>() +
         "', device=" + std::to_string(self.attr("_device").cast<int>()) + ", ";
}

// ", native_handle=0x..." or "" when the backend has no native object
// (cpu) or the handle is empty: a repr never raises.
template <class F>
std::string native_text(F&& native) {
  try {
    return "native_handle=" + hex_text(native());
  } catch (const anydev::Error&) {
    return "";
  }
}

// The synchronize of a with-block's exit, with the GIL released.
template <class F>
void exit_synchronize(F&& synchronize) {
  const WithoutGil unlocked;
  synchronize();
}

anydev_native_kind_t native_kind(const std::string& kind) {
  if (kind == "context") return ANYDEV_NATIVE_CONTEXT;
  if (kind == "device") return ANYDEV_NATIVE_DEVICE;
  throw py::value_error("DeviceContext.native_handle: kind must be 'context' or 'device', not '" +
                        kind + "'");
}

DeviceContext make_context(std::optional<int> device_id, std::optional<std::string> api) {
  const WithoutGil unlocked;
  if (!device_id && !api) return DeviceContext();
  return DeviceContext(device_id.value_or(0), api.value_or(std::string()));
}

py::object create_buffer(const DeviceContext& ctx, anydev_memory_kind_t kind, std::size_t size,
                         py::handle dtype) {
  anydev_buffer_t out = nullptr;
  const anydev_context_t handle = ctx.handle();
  if (handle == nullptr) anydev::detail::throw_empty("DeviceContext", "create", "context");
  const anydev_dtype_t type = dtype_from_object(dtype);
  {
    const WithoutGil unlocked;
    check(anydev_buffer_create(handle, kind, type, size, &out));
  }
  return wrap_buffer(out);
}

using ContextClass = py::class_<DeviceContext>;

// BackendInfo, MemoryInfo and anydev.backends(): what anydev-info lists.
void bind_backend_info(py::module_& m) {
  // Names, reasons and paths may hold bytes that are not UTF-8 (a plugin
  // folder's name): library_text, not pybind11's strict conversion.
  py::class_<anydev::BackendInfo>(m, "BackendInfo", "One known backend, as anydev-info lists it.")
      .def_property_readonly(
          "name", [](const anydev::BackendInfo& b) { return library_text(b.name); },
          "The backend's name.")
      .def_readonly("available", &anydev::BackendInfo::available, "True when it can be used.")
      .def_property_readonly(
          "reason", [](const anydev::BackendInfo& b) { return library_text(b.reason); },
          "Why it is unavailable, else ''.")
      .def_readonly("device_count", &anydev::BackendInfo::device_count, "Its devices.")
      .def_property_readonly(
          "library", [](const anydev::BackendInfo& b) { return library_text(b.library); },
          "The plugin or driver library it uses.")
      .def("__repr__", [](const anydev::BackendInfo& b) {
        return library_text(
            "BackendInfo(name='" + b.name + "', available=" + (b.available ? "True" : "False") +
            ", device_count=" + std::to_string(b.device_count) + ", reason='" + b.reason + "')");
      });
  py::class_<anydev::MemoryInfo>(m, "MemoryInfo", "Free and total bytes of a device.")
      .def_readonly("free", &anydev::MemoryInfo::free, "Free bytes.")
      .def_readonly("total", &anydev::MemoryInfo::total, "Total bytes.")
      .def("__repr__", [](const anydev::MemoryInfo& i) {
        return "MemoryInfo(free=" + std::to_string(i.free) + ", total=" + std::to_string(i.total) +
               ")";
      });
  m.def("backends", &DeviceContext::backends, py::call_guard<WithoutGil>(),
        "Every known backend, available or not, with the reason it is unavailable.");
}

// DeviceEvent.
void bind_event(py::module_& m) {
  py::class_<DeviceEvent> cls(m, "DeviceEvent", py::dynamic_attr(),
                              "A point in a stream's work (DeviceContext.create_event). Record it "
                              "with DeviceStream.record_event; other streams can wait for it.");
  cls.def("synchronize", &DeviceEvent::synchronize, py::call_guard<WithoutGil>(),
          "Blocks until the work before the event's last record has finished.")
      .def("is_complete", &DeviceEvent::is_complete, py::call_guard<WithoutGil>(),
           "True when the work before the event's last record has finished (never blocks).")
      .def(
          "native_handle", [](const DeviceEvent& e) { return as_int(e.native_handle()); },
          "CUevent, cl_event, ... as an int (borrowed: valid while this event lives).")
      .def("__repr__", [](py::object self) {
        const auto& event = self.cast<const DeviceEvent&>();
        const std::string native = native_text([&] { return event.native_handle(); });
        return "DeviceEvent(" + owner_text(self) +
               "complete=" + (event.is_complete() ? "True" : "False") +
               (native.empty() ? "" : ", ") + native + ")";
      });
  bind_share_event(cls);
}

// DeviceStream, a context manager that synchronizes on exit.
void bind_stream(py::module_& m) {
  py::class_<DeviceStream>(m, "DeviceStream", py::dynamic_attr(),
                           "An in-order queue of work on one device (DeviceContext.stream(), "
                           "create_stream()). As a context manager it synchronizes on exit: "
                           "`with ctx.create_stream() as s: ...`.")
      .def("synchronize", &DeviceStream::synchronize, py::call_guard<WithoutGil>(),
           "Blocks until the stream's work has finished; raises its asynchronous errors.")
      .def("record_event", &DeviceStream::record_event, py::arg("event"),
           py::call_guard<WithoutGil>(), "Records `event` after the work enqueued so far.")
      .def("enqueue_wait_for", &DeviceStream::enqueue_wait_for, py::arg("event"),
           py::call_guard<WithoutGil>(),
           "Later work on this stream waits for `event` (on the device, not blocking the caller).")
      .def(
          "native_handle", [](const DeviceStream& s) { return as_int(s.native_handle()); },
          "CUstream, cl_command_queue, ... as an int (borrowed: valid while this stream lives).")
      .def(
          "__enter__", [](py::object self) { return self; },
          "Returns the stream; the with-block's exit synchronizes it.")
      .def(
          "__exit__",
          [](const DeviceStream& s, py::handle, py::handle, py::handle) {
            exit_synchronize([&] { s.synchronize(); });
            return false;
          },
          "Synchronizes the stream (an error of its work is raised, chained to an exception "
          "already leaving the block).")
      .def("__repr__", [](py::object self) {
        const auto& stream = self.cast<const DeviceStream&>();
        std::string text = "DeviceStream(" + owner_text(self) +
                           native_text([&] { return stream.native_handle(); });
        if (text.ends_with(", ")) text.resize(text.size() - 2);
        return text + ")";
      });
}

// DeviceContext's constructor and its static calls (devices, backends, wrapping
// a native stream).
void bind_context_construction(ContextClass& cls) {
  cls.def(py::init(&make_context), py::arg("device_id") = py::none(), py::arg("api") = py::none(),
          "A context on device `device_id` (default 0) of backend `api` (default: "
          "ANYDEV_BACKEND, else the first available).")
      .def_static("number_of_devices", &DeviceContext::number_of_devices,
                  py::arg("api") = std::string_view(), py::call_guard<WithoutGil>(),
                  "Devices of backend `api` (default: the default backend); 0 when unavailable.")
      .def_static("backends", &DeviceContext::backends, py::call_guard<WithoutGil>(),
                  "Every known backend, available or not (as anydev.backends()).")
      .def_static(
          "wrap_native_stream",
          [](const std::string& api, int device, std::uintptr_t native_stream) {
            return DeviceContext::wrap_native_stream(api, device,
                                                     reinterpret_cast<void*>(native_stream));
          },
          py::arg("api"), py::arg("device"), py::arg("native_stream"), py::call_guard<WithoutGil>(),
          "A context on device `device` of `api` whose stream is the existing native stream "
          "(an int, e.g. torch.cuda.current_stream().cuda_stream), not owned.");
}

// What a context tells about its backend and device.
void bind_context_properties(ContextClass& cls) {
  cls.def(
         "api", [](const DeviceContext& c) { return library_text(c.api()); },
         "The backend's name ('cpu', 'cuda', ...).")
      .def(
          "name",
          [](const DeviceContext& c) {
            std::string name;
            {
              const WithoutGil unlocked;
              name = c.name();
            }
            return library_text(name);
          },
          "The device's name.")
      .def("id", &DeviceContext::id, "The device's index in its backend.")
      .def("memory_info", &DeviceContext::memory_info, py::call_guard<WithoutGil>(),
           "Free and total bytes of the device.");
}

// Making host and device buffers on a context's stream.
void bind_context_buffers(ContextClass& cls) {
  cls.def(
         "enqueue_create_host_buffer",
         [](const DeviceContext& c, std::size_t size, py::handle dtype) {
           return create_buffer(c, ANYDEV_MEMORY_HOST, size, dtype);
         },
         py::arg("size"), py::arg("dtype") = "float32",
         "A HostBuffer of `size` elements of `dtype` (pinned where the backend can), ordered on "
         "this context's stream.")
      .def(
          "enqueue_create_buffer",
          [](const DeviceContext& c, std::size_t size, py::handle dtype) {
            return create_buffer(c, ANYDEV_MEMORY_DEVICE, size, dtype);
          },
          py::arg("size"), py::arg("dtype") = "float32",
          "A DeviceBuffer of `size` elements of `dtype`, ordered on this context's stream.")
      .def(
          "create_buffer_sync",
          [](const DeviceContext& c, std::size_t size, py::handle dtype) {
            py::object buf = create_buffer(c, ANYDEV_MEMORY_DEVICE, size, dtype);
            const WithoutGil unlocked;
            c.synchronize();
            return buf;
          },
          py::arg("size"), py::arg("dtype") = "float32",
          "enqueue_create_buffer, then synchronize.");
}

// Copies, fills, stream-ordered frees and synchronize on a context's stream.
void bind_context_work(ContextClass& cls) {
  cls.def(
         "enqueue_copy",
         [](const DeviceContext& c, const Buffer& dst, const Buffer& src) {
           if (dst.dtype != src.dtype) {
             throw anydev::Error(anydev::Status::invalid_argument,
                                 "DeviceContext.enqueue_copy: a " + dtype_name(dst.dtype) +
                                     " destination and a " + dtype_name(src.dtype) +
                                     " source (the dtypes must match)");
           }
           const anydev_buffer_t d = dst.get("enqueue_copy"), s = src.get("enqueue_copy");
           const WithoutGil unlocked;
           check(anydev_enqueue_copy(c.handle(), d, s));
         },
         py::arg("dst"), py::arg("src"),
         "Copies src into dst (same dtype and size) on this context's stream.")
      .def(
          "enqueue_memset",
          [](const DeviceContext& c, const Buffer& buf, py::handle value) {
            const Element e = encode(buf.dtype, value);
            const anydev_buffer_t b = buf.get("enqueue_memset");
            const WithoutGil unlocked;
            check(anydev_enqueue_fill(c.handle(), b, e.bytes.data(), e.size));
          },
          py::arg("buffer"), py::arg("value"),
          "Fills `buffer` with `value` (as its dtype) on this context's stream.")
      .def(
          "free",
          [](const DeviceContext& c, std::uintptr_t taken) {
            check(anydev_context_free(c.handle(), reinterpret_cast<void*>(taken)));
          },
          py::arg("taken"), py::call_guard<WithoutGil>(),
          "Releases memory obtained with take_ptr() (stream-ordered).")
      .def("synchronize", &DeviceContext::synchronize, py::call_guard<WithoutGil>(),
           "Blocks until the work on this context's stream has finished; raises its "
           "asynchronous errors.");
}

// Streams, events, ordering between contexts, and peer access.
void bind_context_streams(ContextClass& cls) {
  cls.def(
         "stream",
         [](const DeviceContext& c) {
           std::optional<DeviceStream> made;
           {
             const WithoutGil unlocked;
             made.emplace(c.stream());
           }
           return with_owner(py::cast(std::move(*made)), c);
         },
         "This context's stream.")
      .def(
          "create_stream",
          [](const DeviceContext& c, std::optional<int> priority) {
            std::optional<DeviceStream> made;
            {
              const WithoutGil unlocked;
              made.emplace(priority ? c.create_stream(*priority) : c.create_stream());
            }
            return with_owner(py::cast(std::move(*made)), c);
          },
          py::arg("priority") = py::none(),
          "A new stream on this context's device; `priority` as CUDA's (lower is higher, "
          "stream_priority_range()), clamped into the range.")
      .def("with_stream", &DeviceContext::with_stream, py::arg("stream"),
           py::call_guard<WithoutGil>(),
           "A context on the same device whose operations go to `stream`; use it as "
           "`with ctx.with_stream(s) as c:` to scope work to s (synchronized on exit).")
      .def(
          "create_event",
          [](const DeviceContext& c, bool timing, bool blocking_sync) {
            std::optional<DeviceEvent> made;
            {
              const WithoutGil unlocked;
              made.emplace(timing || blocking_sync
                               ? c.create_event(anydev::EventOptions{timing, blocking_sync})
                               : c.create_event());
            }
            return with_owner(py::cast(std::move(*made)), c);
          },
          py::kw_only(), py::arg("timing") = false, py::arg("blocking_sync") = false,
          "A new event on this context's device. timing=True: it can measure time "
          "(DeviceEvent.elapsed_time); blocking_sync=True: synchronize sleeps in the OS.")
      .def("enqueue_wait_for", &DeviceContext::enqueue_wait_for, py::arg("other"),
           py::call_guard<WithoutGil>(),
           "Later work on this context's stream waits for the work enqueued so far on `other`'s.")
      .def("can_access", &DeviceContext::can_access, py::arg("peer"), py::call_guard<WithoutGil>(),
           "True when this device can access `peer`'s memory directly.")
      .def("enable_peer_access", &DeviceContext::enable_peer_access, py::arg("peer"),
           py::call_guard<WithoutGil>(),
           "Lets this device access `peer`'s memory (can_access must be True).");
}

// The with-block protocol, the native handles and the repr.
void bind_context_protocols(ContextClass& cls) {
  cls.def(
         "__enter__", [](py::object self) { return self; },
         "Returns the context; the with-block's exit synchronizes it.")
      .def(
          "__exit__",
          [](const DeviceContext& c, py::handle, py::handle, py::handle) {
            exit_synchronize([&] { c.synchronize(); });
            return false;
          },
          "Synchronizes the context's stream.")
      .def(
          "native_handle",
          [](const DeviceContext& c, const std::string& kind) {
            const anydev_native_kind_t which = native_kind(kind);
            const WithoutGil unlocked;
            return as_int(c.native_handle(which));
          },
          py::arg("kind") = "context",
          "The native context ('context': CUcontext, cl_context, ...) or device ('device': "
          "CUdevice, cl_device_id, ...) as an int; borrowed.")
      .def("__repr__", [](const DeviceContext& c) {
        return library_text("DeviceContext(" + std::to_string(c.id()) + ", api='" + c.api() + "')");
      });
}

// DeviceContext, bound in parts; pybind11 adds the methods in the order of
// the calls.
void bind_device_context(py::module_& m) {
  ContextClass cls(m, "DeviceContext",
                   "One device of one backend plus one stream on it. DeviceContext() "
                   "follows ANYDEV_BACKEND (else cuda, hip, level_zero, opencl, cpu); "
                   "DeviceContext(0, api='cpu') names one. As a context manager it "
                   "synchronizes on exit; `with ctx.with_stream(s) as c:` scopes work "
                   "to stream s.");
  bind_context_construction(cls);
  bind_context_properties(cls);
  bind_context_buffers(cls);
  bind_context_work(cls);
  bind_context_streams(cls);
  bind_context_protocols(cls);
  bind_share_context(cls);
  bind_register_context(cls);
  bind_attributes_context(cls);
}

}  // namespace

void bind_context(py::module_& m) {
  bind_backend_info(m);
  bind_event(m);
  bind_stream(m);
  bind_device_context(m);
}

}  // namespace anydev::python
