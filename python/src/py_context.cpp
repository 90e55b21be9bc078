// SPDX-License-Identifier: Apache-2.0
// DeviceContext, DeviceStream, DeviceEvent and anydev.backends(): the C++
// API's classes (anydev.hpp) bound directly, plus the calls that take a
// run-time dtype. Blocking calls release the GIL.
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "anydev/anydev.hpp"
#include "py_buffer.h"
#include "py_errors.h"
#include "py_values.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

using anydev::DeviceContext;
using anydev::DeviceEvent;
using anydev::DeviceStream;

std::uintptr_t as_int(void* p) { return reinterpret_cast<std::uintptr_t>(p); }

anydev_native_kind_t native_kind(const std::string& kind) {
  if (kind == "context") return ANYDEV_NATIVE_CONTEXT;
  if (kind == "device") return ANYDEV_NATIVE_DEVICE;
  throw py::value_error("DeviceContext.native_handle: kind must be 'context' or 'device', not '" +
                        kind + "'");
}

DeviceContext make_context(std::optional<int> device_id, std::optional<std::string> api) {
  if (!device_id && !api) return DeviceContext();
  return DeviceContext(device_id.value_or(0), api.value_or(std::string()));
}

py::object create_buffer(const DeviceContext& ctx, anydev_memory_kind_t kind, std::size_t size,
                         py::handle dtype) {
  anydev_buffer_t out = nullptr;
  const anydev_context_t handle = ctx.handle();
  if (handle == nullptr) anydev::detail::throw_empty("DeviceContext", "create", "context");
  check(anydev_buffer_create(handle, kind, dtype_from_object(dtype), size, &out));
  return wrap_buffer(out);
}

}  // namespace

void bind_context(py::module_& m) {
  py::class_<anydev::BackendInfo>(m, "BackendInfo", "One known backend, as anydev-info lists it.")
      .def_readonly("name", &anydev::BackendInfo::name)
      .def_readonly("available", &anydev::BackendInfo::available)
      .def_readonly("reason", &anydev::BackendInfo::reason)
      .def_readonly("device_count", &anydev::BackendInfo::device_count)
      .def_readonly("library", &anydev::BackendInfo::library)
      .def("__repr__", [](const anydev::BackendInfo& b) {
        return "BackendInfo(name='" + b.name + "', available=" + (b.available ? "True" : "False") +
               ", device_count=" + std::to_string(b.device_count) + ", reason='" + b.reason + "')";
      });
  py::class_<anydev::MemoryInfo>(m, "MemoryInfo", "Free and total bytes of a device.")
      .def_readonly("free", &anydev::MemoryInfo::free)
      .def_readonly("total", &anydev::MemoryInfo::total)
      .def("__repr__", [](const anydev::MemoryInfo& i) {
        return "MemoryInfo(free=" + std::to_string(i.free) + ", total=" + std::to_string(i.total) +
               ")";
      });
  m.def("backends", &DeviceContext::backends,
        "Every known backend, available or not, with the reason it is unavailable.");

  py::class_<DeviceEvent>(m, "DeviceEvent",
                          "A point in a stream's work (DeviceContext.create_event).")
      .def("synchronize", &DeviceEvent::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("is_complete", &DeviceEvent::is_complete)
      .def(
          "native_handle", [](const DeviceEvent& e) { return as_int(e.native_handle()); },
          "CUevent, cl_event, ... as an int (borrowed: valid while this event lives).");

  py::class_<DeviceStream>(m, "DeviceStream", "An in-order queue of work on one device.")
      .def("synchronize", &DeviceStream::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("record_event", &DeviceStream::record_event, py::arg("event"))
      .def("enqueue_wait_for", &DeviceStream::enqueue_wait_for, py::arg("event"))
      .def(
          "native_handle", [](const DeviceStream& s) { return as_int(s.native_handle()); },
          "CUstream, cl_command_queue, ... as an int (borrowed: valid while this stream lives).");

  py::class_<DeviceContext>(m, "DeviceContext",
                            "One device of one backend plus one stream on it. DeviceContext() "
                            "follows ANYDEV_BACKEND (else cuda, hip, level_zero, opencl, cpu); "
                            "DeviceContext(0, api='cpu') names one.")
      .def(py::init(&make_context), py::arg("device_id") = py::none(), py::arg("api") = py::none())
      .def_static("number_of_devices", &DeviceContext::number_of_devices,
                  py::arg("api") = std::string_view())
      .def_static("backends", &DeviceContext::backends)
      .def_static(
          "wrap_native_stream",
          [](const std::string& api, int device, std::uintptr_t native_stream) {
            return DeviceContext::wrap_native_stream(api, device,
                                                     reinterpret_cast<void*>(native_stream));
          },
          py::arg("api"), py::arg("device"), py::arg("native_stream"),
          "A context on device `device` of `api` whose stream is the existing native stream "
          "(an int, e.g. torch.cuda.current_stream().cuda_stream), not owned.")
      .def("api", &DeviceContext::api)
      .def("name", &DeviceContext::name)
      .def("id", &DeviceContext::id)
      .def("memory_info", &DeviceContext::memory_info)
      .def(
          "enqueue_create_host_buffer",
          [](const DeviceContext& c, std::size_t size, py::handle dtype) {
            return create_buffer(c, ANYDEV_MEMORY_HOST, size, dtype);
          },
          py::arg("size"), py::arg("dtype") = "float32")
      .def(
          "enqueue_create_buffer",
          [](const DeviceContext& c, std::size_t size, py::handle dtype) {
            return create_buffer(c, ANYDEV_MEMORY_DEVICE, size, dtype);
          },
          py::arg("size"), py::arg("dtype") = "float32")
      .def(
          "create_buffer_sync",
          [](const DeviceContext& c, std::size_t size, py::handle dtype) {
            py::object buf = create_buffer(c, ANYDEV_MEMORY_DEVICE, size, dtype);
            py::gil_scoped_release unlocked;
            c.synchronize();
            return buf;
          },
          py::arg("size"), py::arg("dtype") = "float32")
      .def(
          "enqueue_copy",
          [](const DeviceContext& c, const Buffer& dst, const Buffer& src) {
            if (dst.dtype != src.dtype) {
              throw anydev::Error(anydev::Status::invalid_argument,
                                  "DeviceContext.enqueue_copy: a " + dtype_name(dst.dtype) +
                                      " destination and a " + dtype_name(src.dtype) +
                                      " source (the dtypes must match)");
            }
            check(
                anydev_enqueue_copy(c.handle(), dst.get("enqueue_copy"), src.get("enqueue_copy")));
          },
          py::arg("dst"), py::arg("src"))
      .def(
          "enqueue_memset",
          [](const DeviceContext& c, const Buffer& buf, py::handle value) {
            const Element e = encode(buf.dtype, value);
            check(
                anydev_enqueue_fill(c.handle(), buf.get("enqueue_memset"), e.bytes.data(), e.size));
          },
          py::arg("buffer"), py::arg("value"))
      .def(
          "free",
          [](const DeviceContext& c, std::uintptr_t taken) {
            check(anydev_context_free(c.handle(), reinterpret_cast<void*>(taken)));
          },
          py::arg("taken"), "Releases memory obtained with take_ptr() (stream-ordered).")
      .def("synchronize", &DeviceContext::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("stream", &DeviceContext::stream)
      .def("create_stream", &DeviceContext::create_stream)
      .def("with_stream", &DeviceContext::with_stream, py::arg("stream"))
      .def("create_event", &DeviceContext::create_event)
      .def("enqueue_wait_for", &DeviceContext::enqueue_wait_for, py::arg("other"))
      .def("can_access", &DeviceContext::can_access, py::arg("peer"))
      .def("enable_peer_access", &DeviceContext::enable_peer_access, py::arg("peer"))
      .def(
          "native_handle",
          [](const DeviceContext& c, const std::string& kind) {
            return as_int(c.native_handle(native_kind(kind)));
          },
          py::arg("kind") = "context",
          "The native context ('context': CUcontext, cl_context, ...) or device ('device': "
          "CUdevice, cl_device_id, ...) as an int; borrowed.")
      .def("__repr__", [](const DeviceContext& c) {
        return "DeviceContext(" + std::to_string(c.id()) + ", api='" + c.api() + "')";
      });
}

}  // namespace anydev::python
