// SPDX-License-Identifier: Apache-2.0
// DLPack in Python, as the Python array API specifies: buffers implement
// __dlpack__(stream=None, max_version=None, dl_device=None, copy=None) and
// __dlpack_device__(); anydev.from_dlpack(obj, ctx=None) imports any object
// that implements them (or a legacy "dltensor" capsule).
//
// Stream semantics of __dlpack__ (see docs/embedding.md): every int has a
// defined meaning for the buffer's DLPack device type, or is refused:
//   memory the host reads (kDLCPU, kDLCUDAHost, kDLROCMHost): None or any
//     int but -1 waits on the host for the work enqueued on the buffer; -1
//     does not;
//   kDLCUDA: None waits on the host; -1 does not; 1 (legacy default), 2
//     (per-thread default) or a CUstream address is made to wait on the
//     device; 0 is refused (the standard calls it ambiguous);
//   kDLOpenCL and other device memory: None waits on the host; -1 does not;
//     a cl_command_queue (...) address is made to wait on the device; 0, 1
//     and 2 (CUDA's reserved values) are refused, never dereferenced.
//
// Capsules. The capsule's DLManagedTensor is a CapsuleTensor whose deleter
// may run more than once: a consumer that calls it without renaming the
// capsule (torch 1.13 does while unwinding a failed import) leaves the
// capsule destructor to call it again, and the second call does nothing.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "anydev/anydev_dlpack.h"
#include "py_buffer.h"
#include "py_errors.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

// What a capsule made by __dlpack__ points to: a copy of the tensor
// anydev_buffer_to_dlpack made (`inner`, released by the first deleter
// call). Two owners share it: the capsule (until it is destroyed) and the
// consumer (until it calls the deleter, at most once in effect). Both may
// let go on any thread, in either order.
struct CapsuleTensor {
  DLManagedTensor managed{};  // the capsule's pointer; deleter is capsule_tensor_deleter
  DLManagedTensor* inner = nullptr;
  std::atomic<bool> deleted{false};
  std::atomic<int> owners{2};
};

void drop_owner(CapsuleTensor* tensor) noexcept {
  if (tensor->owners.fetch_sub(1, std::memory_order_acq_rel) == 1) delete tensor;
}

// Idempotent: the first call releases anydev's tensor and the consumer's
// share; later calls (while the capsule still holds its share) do nothing.
extern "C" void capsule_tensor_deleter(DLManagedTensor* self) {
  if (self == nullptr) return;
  auto* tensor = static_cast<CapsuleTensor*>(self->manager_ctx);
  if (tensor->deleted.exchange(true, std::memory_order_acq_rel)) return;
  tensor->inner->deleter(tensor->inner);
  drop_owner(tensor);
}

// The capsule's share. A capsule nobody consumed (still named "dltensor")
// also deletes the tensor, which does nothing if a consumer already did.
extern "C" void capsule_destructor(PyObject* capsule) {
  // A destructor must not disturb an exception being raised.
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* pending = PyErr_GetRaisedException();
#else
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
#endif
  const char* name = PyCapsule_GetName(capsule);
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, name));
  if (managed != nullptr) {
    auto* tensor = static_cast<CapsuleTensor*>(managed->manager_ctx);
    if (name != nullptr && std::string_view(name) == kCapsuleName) capsule_tensor_deleter(managed);
    drop_owner(tensor);
  }
  PyErr_Clear();
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(pending);
#else
  PyErr_Restore(type, value, traceback);
#endif
}

bool is_host_side(int device_type) {
  return device_type == kDLCPU || device_type == kDLCUDAHost || device_type == kDLROCMHost;
}

// The device types anydev_buffer_from_dlpack takes (anydev_dlpack.h).
bool importable(int device_type) {
  return is_host_side(device_type) || device_type == kDLCUDA || device_type == kDLROCM;
}

std::pair<int, int> dlpack_device(const Buffer& b) {
  int type = 0, id = 0;
  check(anydev_buffer_dlpack_device(b.get("__dlpack_device__"), &type, &id));
  return {type, id};
}

const char* device_type_name(int device_type) {
  switch (device_type) {
    case kDLCUDA:
      return "kDLCUDA";
    case kDLOpenCL:
      return "kDLOpenCL";
    case kDLROCM:
      return "kDLROCM";
    default:
      return "this device type";
  }
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
    if (!is_host_side(device_type)) {
      if ((value == 1 || value == 2) && device_type != kDLCUDA) {
        throw py::buffer_error(
            std::string(b.type_name()) + ".__dlpack__: stream " + std::to_string(value) +
            " has no meaning for " + device_type_name(device_type) + " memory (DLPack " +
            std::to_string(device_type) + "): 1 and 2 are CUDA's default streams; pass None to " +
            "wait on the host, -1 for no synchronization, or a native queue of the buffer's " +
            "device (e.g. DeviceContext.stream().native_handle())");
      }
      consumer = reinterpret_cast<void*>(static_cast<std::uintptr_t>(value));
    }
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
  DLManagedTensor* inner = nullptr;
  check(anydev_buffer_to_dlpack(b.get("__dlpack__"), static_cast<int>(extents.size()),
                                shape.is_none() ? nullptr : extents.data(), &inner));
  auto* tensor = new (std::nothrow) CapsuleTensor;
  if (tensor == nullptr) {
    inner->deleter(inner);
    throw std::bad_alloc();
  }
  tensor->inner = inner;
  tensor->managed.dl_tensor = inner->dl_tensor;
  tensor->managed.manager_ctx = tensor;
  tensor->managed.deleter = capsule_tensor_deleter;
  PyObject* capsule = PyCapsule_New(&tensor->managed, kCapsuleName, capsule_destructor);
  if (capsule == nullptr) {
    inner->deleter(inner);
    delete tensor;
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
      if (!importable(device.first)) {
        // Known before export: ask for no capsule anydev cannot take.
        throw Error(Status::unsupported,
                    "anydev.from_dlpack: cannot import memory of DLPack device type " +
                        std::to_string(device.first) +
                        (device.first == kDLOpenCL
                             ? " (kDLOpenCL): anydev's opencl backend can use only the cl_mem "
                               "objects it allocated"
                             : ": anydev imports kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDA and "
                               "kDLROCM") +
                        "; nothing was exported");
      }
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
