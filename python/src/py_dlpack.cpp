// DLPack in Python, as the Python array API specifies: buffers implement
// __dlpack__(stream=None, max_version=None, dl_device=None, copy=None) and
// __dlpack_device__(); anydev.from_dlpack(obj, ctx=None) imports any object
// that implements them (or a legacy "dltensor" capsule).
//
// Stream semantics of __dlpack__ (see docs/embedding.md):
//   memory the host reads (kDLCPU, kDLCUDAHost, kDLROCMHost): stream None
//     waits on the host for the work enqueued on the buffer; -1 does not;
//   device memory (kDLCUDA, kDLROCM, kDLOpenCL): an int stream (1 legacy
//     default, 2 per-thread, or a CUstream/cl_command_queue address) is made
//     to wait on the device for that work; None waits on the host; -1 does
//     not; 0 is refused (the standard calls it ambiguous).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "anydev/anydev_dlpack.h"
#include "py_buffer.h"
#include "py_errors.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

// A capsule nobody consumed still owns its tensor.
void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;  // consumed (renamed)
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

bool is_host_side(int device_type) {
  return device_type == kDLCPU || device_type == kDLCUDAHost || device_type == kDLROCMHost;
}

std::pair<int, int> dlpack_device(const Buffer& b) {
  int type = 0, id = 0;
  check(anydev_buffer_dlpack_device(b.get("__dlpack_device__"), &type, &id));
  return {type, id};
}

// Orders the consumer after the buffer's work, as the module comment says.
void make_ready(const Buffer& b, int device_type, const py::object& stream) {
  const anydev_buffer_t handle = b.get("__dlpack__");
  void* consumer = nullptr;
  if (!stream.is_none()) {
    if (!py::isinstance<py::int_>(stream)) {
      throw py::type_error("__dlpack__: stream must be None or an int, not " +
                           std::string(py::str(stream.get_type().attr("__name__"))));
    }
    const auto value = stream.cast<long long>();
    if (value == -1) return;  // the consumer asked for no synchronization
    if (value == 0 || value < -1) {
      throw py::buffer_error("__dlpack__: stream " + std::to_string(value) +
                             " is not allowed (use None, -1, 1, 2 or a stream handle)");
    }
    if (!is_host_side(device_type)) consumer = reinterpret_cast<void*>(value);
  }
  anydev_status_t status = ANYDEV_SUCCESS;
  {
    py::gil_scoped_release unlocked;
    status = anydev_buffer_make_ready(handle, consumer);
  }
  check(status);
}

py::object to_capsule(const Buffer& b, const py::object& stream, const py::object& max_version,
                      const py::object& dl_device, const py::object& copy,
                      const py::object& shape) {
  static_cast<void>(max_version);  // only the unversioned (DLPack 0.x) tensor is produced
  if (!copy.is_none() && copy.cast<bool>()) {
    throw py::buffer_error(std::string(b.type_name()) +
                           ".__dlpack__: copy=True is not supported (anydev exports zero-copy "
                           "views only)");
  }
  const auto [type, id] = dlpack_device(b);
  if (!dl_device.is_none()) {
    const auto wanted = dl_device.cast<std::pair<int, int>>();
    if (wanted.first != type || wanted.second != id) {
      throw py::buffer_error(std::string(b.type_name()) + ".__dlpack__: dl_device (" +
                             std::to_string(wanted.first) + ", " + std::to_string(wanted.second) +
                             ") differs from the buffer's (" + std::to_string(type) + ", " +
                             std::to_string(id) + ") and copying is not supported");
    }
  }
  std::vector<int64_t> extents;
  if (!shape.is_none()) extents = shape.cast<std::vector<int64_t>>();
  make_ready(b, type, stream);
  DLManagedTensor* managed = nullptr;
  check(anydev_buffer_to_dlpack(b.get("__dlpack__"), static_cast<int>(extents.size()),
                                shape.is_none() ? nullptr : extents.data(), &managed));
  PyObject* capsule = PyCapsule_New(managed, kCapsuleName, capsule_destructor);
  if (capsule == nullptr) {
    managed->deleter(managed);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}

// anydev.from_dlpack(obj, ctx=None).
py::object from_dlpack(const py::object& obj, const py::object& ctx_arg) {
  const anydev::DeviceContext* ctx =
      ctx_arg.is_none() ? nullptr : &ctx_arg.cast<const anydev::DeviceContext&>();
  std::optional<anydev::DeviceContext> made;  // for device memory without ctx
  py::object capsule = obj;
  if (!PyCapsule_CheckExact(obj.ptr())) {
    if (!py::hasattr(obj, "__dlpack__")) {
      throw py::type_error(
          "anydev.from_dlpack: " + std::string(py::str(obj.get_type().attr("__name__"))) +
          " implements neither __dlpack__ nor is a DLPack capsule");
    }
    py::object stream = py::none();
    if (py::hasattr(obj, "__dlpack_device__")) {
      const auto device = obj.attr("__dlpack_device__")().cast<std::pair<int, int>>();
      const char* api = device.first == kDLCUDA   ? "cuda"
                        : device.first == kDLROCM ? "hip"
                                                  : nullptr;
      if (ctx == nullptr && api != nullptr) {
        // The context anydev_buffer_from_dlpack would make, made here so that
        // the producer can order its work before this context's stream.
        made.emplace(device.second, api);
        ctx = &*made;
      }
      if (!is_host_side(device.first) && ctx != nullptr) {
        // The producer makes anydev's stream wait for its work.
        void* native = ctx->stream().native_handle();
        if (native != nullptr) stream = py::int_(reinterpret_cast<std::uintptr_t>(native));
      }
    }
    capsule = stream.is_none() ? obj.attr("__dlpack__")()
                               : obj.attr("__dlpack__")(py::arg("stream") = stream);
  }
  if (!PyCapsule_IsValid(capsule.ptr(), kCapsuleName)) {
    throw py::value_error(
        "anydev.from_dlpack: not a usable DLPack capsule (already consumed, or not named "
        "'dltensor')");
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
  anydev_buffer_t out = nullptr;
  check(anydev_buffer_from_dlpack(ctx != nullptr ? ctx->handle() : nullptr, managed, &out));
  // anydev owns the tensor now: the capsule must not delete it.
  PyCapsule_SetName(capsule.ptr(), kUsedCapsuleName);
  return wrap_buffer(out);
}

}  // namespace

void bind_dlpack(py::module_& m, py::class_<Buffer>& buffer) {
  buffer
      .def("__dlpack__", &to_capsule, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
           py::arg("copy") = py::none(), py::arg("shape") = py::none(),
           "A DLPack capsule sharing this buffer's memory (1-D unless `shape`, an anydev "
           "extension, is given). `stream` orders the consumer after the buffer's work (see "
           "docs/embedding.md).")
      .def(
          "__dlpack_device__",
          [](const Buffer& b) {
            const auto [type, id] = dlpack_device(b);
            return py::make_tuple(type, id);
          },
          "(DLPack device type, device id): 1 kDLCPU, 2 kDLCUDA, 3 kDLCUDAHost, 4 kDLOpenCL, ...");
  m.def("from_dlpack", &from_dlpack, py::arg("obj"), py::arg("ctx") = py::none(),
        "An anydev buffer sharing the memory of `obj` (anything with __dlpack__, e.g. a NumPy "
        "array or a torch tensor, or a DLPack capsule). Host memory becomes a HostBuffer (on "
        "`ctx`, default the cpu backend), device memory a DeviceBuffer (on `ctx`, default a new "
        "context on its device). It keeps `obj`'s memory alive.");
}

}  // namespace anydev::python
