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
// Versions. __dlpack__(max_version=(1, 0)) (any major >= 1) returns a
// "dltensor_versioned" capsule of a DLPack 1.0 versioned tensor (flags 0:
// anydev's memory is writable and shared, never copied; bool is kDLBool);
// max_version None or a major below 1 the unversioned "dltensor" capsule
// (DLPack 0.x; no bool). anydev.from_dlpack asks producers for
// max_version=(1, 0) and again without it when they refuse the keyword
// (TypeError), and takes either capsule.
//
// Capsules. The capsule's managed tensor is a CapsuleTensor whose deleter
// may run more than once: a consumer that calls it without renaming the
// capsule (torch 1.13 does while unwinding a failed import) leaves the
// capsule destructor to call it again, and the second call does nothing.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "anydev/anydev_dlpack.h"
#include "py_buffer.h"
#include "py_errors.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

// Capsule names (the Python array API's DLPack protocol): a producer names
// a capsule `unused`, a consumer renames it `used` when it takes the tensor.
struct CapsuleNames {
  const char* unused;
  const char* used;
};
constexpr CapsuleNames kUnversioned{"dltensor", "used_dltensor"};
constexpr CapsuleNames kVersioned{"dltensor_versioned", "used_dltensor_versioned"};

template <class Managed>
constexpr const CapsuleNames& names_of() {
  if constexpr (std::is_same_v<Managed, DLManagedTensor>) {
    return kUnversioned;
  } else {
    return kVersioned;
  }
}

// What a capsule made by __dlpack__ points to (Managed: DLManagedTensor or
// anydev_dlpack_managed_tensor_versioned_t): a copy of the tensor the C ABI
// made (`inner`, released by the first deleter call). Two owners share it:
// the capsule (until it is destroyed) and the consumer (until it calls the
// deleter, at most once in effect). Both may let go on any thread, in
// either order.
template <class Managed>
struct CapsuleTensor {
  Managed managed{};  // the capsule's pointer; deleter is capsule_tensor_deleter
  Managed* inner = nullptr;
  std::atomic<bool> deleted{false};
  std::atomic<int> owners{2};
};

template <class Managed>
void drop_owner(CapsuleTensor<Managed>* tensor) noexcept {
  if (tensor->owners.fetch_sub(1, std::memory_order_acq_rel) == 1) delete tensor;
}

// Idempotent: the first call releases anydev's tensor and the consumer's
// share; later calls (while the capsule still holds its share) do nothing.
template <class Managed>
void capsule_tensor_deleter(Managed* self) {
  if (self == nullptr) return;
  auto* tensor = static_cast<CapsuleTensor<Managed>*>(self->manager_ctx);
  if (tensor->deleted.exchange(true, std::memory_order_acq_rel)) return;
  tensor->inner->deleter(tensor->inner);
  drop_owner(tensor);
}

// The capsule's share. A capsule nobody consumed (still named `unused`)
// also deletes the tensor, which does nothing if a consumer already did.
template <class Managed>
void capsule_destructor(PyObject* capsule) {
  // A destructor must not disturb an exception being raised.
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* pending = PyErr_GetRaisedException();
#else
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
#endif
  const char* name = PyCapsule_GetName(capsule);
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed != nullptr) {
    auto* tensor = static_cast<CapsuleTensor<Managed>*>(managed->manager_ctx);
    if (name != nullptr && std::string_view(name) == names_of<Managed>().unused) {
      capsule_tensor_deleter(managed);
    }
    drop_owner(tensor);
  }
  PyErr_Clear();
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(pending);
#else
  PyErr_Restore(type, value, traceback);
#endif
}

// A capsule named names_of<Managed>().unused over `inner` (taken over: it is
// released on every path).
template <class Managed>
py::object make_capsule(Managed* inner) {
  auto* tensor = new (std::nothrow) CapsuleTensor<Managed>;
  if (tensor == nullptr) {
    inner->deleter(inner);
    throw std::bad_alloc();
  }
  tensor->inner = inner;
  tensor->managed = *inner;
  tensor->managed.manager_ctx = tensor;
  tensor->managed.deleter = capsule_tensor_deleter<Managed>;
  PyObject* capsule =
      PyCapsule_New(&tensor->managed, names_of<Managed>().unused, capsule_destructor<Managed>);
  if (capsule == nullptr) {
    inner->deleter(inner);
    delete tensor;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}

// True when a consumer's max_version asks for the versioned (1.x) tensor:
// None (a consumer of the 0.x protocol) or a major version below 1 gets the
// unversioned one. Anything but None or a (major, minor) pair of ints is a
// TypeError naming it.
// Python ints compared and printed as Python does: any size is a value.
bool compare(py::handle a, int op, py::handle b) {
  const int result = PyObject_RichCompareBool(a.ptr(), b.ptr(), op);
  if (result < 0) throw py::error_already_set();
  return result == 1;
}
std::string text_of(py::handle value) { return std::string(py::str(value)); }

// A pair of Python ints, compared as Python ints: any size is a valid value.
bool is_int_pair(const py::object& value) {
  if (!py::isinstance<py::tuple>(value) || py::len(value) != 2) return false;
  const py::tuple pair = value;
  return py::isinstance<py::int_>(pair[0]) && py::isinstance<py::int_>(pair[1]);
}

bool wants_versioned(const Buffer& b, const py::object& max_version) {
  if (max_version.is_none()) return false;
  if (is_int_pair(max_version)) {
    const py::tuple pair = max_version;
    return compare(pair[0], Py_GE, py::int_(ANYDEV_DLPACK_MAJOR_VERSION));
  }
  throw py::type_error(std::string(b.type_name()) +
                       ".__dlpack__: max_version must be None or a (major, minor) tuple of ints, "
                       "not " +
                       std::string(py::repr(max_version)));
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
    // Compared as a Python int first: a value no pointer can hold is no
    // stream (and would not fit the conversion below).
    const py::int_ number = stream;
    if (compare(number, Py_EQ, py::int_(-1))) return;  // the consumer asked for no synchronization
    if (compare(number, Py_LE, py::int_(0)) || compare(number, Py_GT, py::int_(UINTPTR_MAX))) {
      throw py::buffer_error(std::string(b.type_name()) + ".__dlpack__: stream " + text_of(number) +
                             " is not allowed (use None, -1, 1, 2 or a stream handle; a handle "
                             "lies between 1 and 2**64 - 1)");
    }
    const auto value = number.cast<std::uintptr_t>();
    if (!is_host_side(device_type)) {
      if ((value == 1 || value == 2) && device_type != kDLCUDA) {
        throw py::buffer_error(
            std::string(b.type_name()) + ".__dlpack__: stream " + std::to_string(value) +
            " has no meaning for " + device_type_name(device_type) + " memory (DLPack " +
            std::to_string(device_type) + "): 1 and 2 are CUDA's default streams; pass None to " +
            "wait on the host, -1 for no synchronization, or a native queue of the buffer's " +
            "device (e.g. DeviceContext.stream().native_handle())");
      }
      consumer = reinterpret_cast<void*>(value);
    }
  }
  anydev_status_t status = ANYDEV_SUCCESS;
  {
    const WithoutGil unlocked;
    status = anydev_buffer_make_ready(handle, consumer);
  }
  check(status);
}

// The extents of __dlpack__'s `shape`: a sequence of ints, each within
// int64 (TypeError / InvalidArgumentError naming it otherwise).
std::vector<int64_t> shape_extents(const Buffer& b, const py::object& shape) {
  const std::string where = std::string(b.type_name()) + ".__dlpack__: shape ";
  if (!py::isinstance<py::sequence>(shape) || py::isinstance<py::str>(shape)) {
    throw py::type_error(where + "must be None or a sequence of ints, not " +
                         std::string(py::repr(shape)));
  }
  std::vector<int64_t> extents;
  for (const py::handle extent : shape) {
    if (!py::isinstance<py::int_>(extent)) {
      throw py::type_error(where + std::string(py::repr(shape)) + ": extent " +
                           std::string(py::repr(extent)) + " is not an int");
    }
    const py::int_ number = py::reinterpret_borrow<py::int_>(extent);
    if (compare(number, Py_LT, py::int_(0)) || compare(number, Py_GT, py::int_(INT64_MAX))) {
      throw Error(Status::invalid_argument, where + std::string(py::repr(shape)) + ": extent " +
                                                text_of(number) + " is outside 0 .. 2**63 - 1");
    }
    extents.push_back(number.cast<int64_t>());
  }
  return extents;
}

py::object to_capsule(const Buffer& b, const py::object& stream, const py::object& max_version,
                      const py::object& dl_device, const py::object& copy,
                      const py::object& shape) {
  const bool versioned = wants_versioned(b, max_version);
  if (!copy.is_none() && !PyBool_Check(copy.ptr())) {
    throw py::type_error(std::string(b.type_name()) +
                         ".__dlpack__: copy must be None, True or False, not " +
                         std::string(py::repr(copy)));
  }
  if (!copy.is_none() && copy.cast<bool>()) {
    throw py::buffer_error(std::string(b.type_name()) +
                           ".__dlpack__: copy=True is not supported (anydev exports zero-copy "
                           "views only)");
  }
  const auto [type, id] = dlpack_device(b);
  if (!dl_device.is_none()) {
    if (!is_int_pair(dl_device)) {
      throw py::type_error(std::string(b.type_name()) +
                           ".__dlpack__: dl_device must be None or a (device_type, device_id) "
                           "tuple of ints, not " +
                           std::string(py::repr(dl_device)));
    }
    const py::tuple wanted = dl_device;
    if (!compare(wanted[0], Py_EQ, py::int_(type)) || !compare(wanted[1], Py_EQ, py::int_(id))) {
      throw py::buffer_error(std::string(b.type_name()) + ".__dlpack__: dl_device (" +
                             text_of(wanted[0]) + ", " + text_of(wanted[1]) +
                             ") differs from the buffer's (" + std::to_string(type) + ", " +
                             std::to_string(id) + ") and copying is not supported");
    }
  }
  std::vector<int64_t> extents;
  if (!shape.is_none()) extents = shape_extents(b, shape);
  make_ready(b, type, stream);
  const int ndim = static_cast<int>(extents.size());
  const int64_t* extents_or_null = shape.is_none() ? nullptr : extents.data();
  if (versioned) {
    // anydev buffers are writable and shared, never copied: flags 0.
    anydev_dlpack_managed_tensor_versioned_t* inner = nullptr;
    const anydev_buffer_t handle = b.get("__dlpack__");
    {
      const WithoutGil unlocked;
      check(anydev_buffer_to_dlpack_versioned(handle, ndim, extents_or_null, 0, &inner));
    }
    return make_capsule(inner);
  }
  DLManagedTensor* inner = nullptr;
  const anydev_buffer_t handle = b.get("__dlpack__");
  {
    const WithoutGil unlocked;
    check(anydev_buffer_to_dlpack(handle, ndim, extents_or_null, &inner));
  }
  return make_capsule(inner);
}

// Calls obj.__dlpack__ asking for a versioned tensor (max_version=(1, 0));
// a producer that does not know the keyword (a TypeError: torch 1.13,
// NumPy < 2) is asked again without it, as the array API says.
py::object ask_producer(const py::object& obj, const py::object& stream) {
  py::object method = obj.attr("__dlpack__");
  const py::tuple max_version =
      py::make_tuple(ANYDEV_DLPACK_MAJOR_VERSION, ANYDEV_DLPACK_MINOR_VERSION);
  try {
    return stream.is_none()
               ? method(py::arg("max_version") = max_version)
               : method(py::arg("stream") = stream, py::arg("max_version") = max_version);
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
  }
  return stream.is_none() ? method() : method(py::arg("stream") = stream);
}

// The exit gate for Python producers' deleters. anydev may call an imported
// tensor's deleter on its reclaimer thread, and a Python producer's deleter
// (NumPy's, PyTorch's) takes the GIL; a thread that waits for the GIL while
// the interpreter finalizes is ended with pthread_exit, whose unwinding
// through anydev aborts the process ("FATAL: exception not rethrown"). So
// every imported tensor is handed to anydev inside a GuardedTensor whose
// deleter calls the producer's only while the gate is open; close_exit_gate
// (an atexit handler, run before finalization) closes it and waits, without
// the GIL, for the deleters already running. A deleter called after that
// leaves the producer's memory to the exiting process. The gate's state is
// atomic: thread-safe.
std::atomic<bool> g_exit_gate_closed{false};
std::atomic<int> g_deleters_running{0};

void close_exit_gate() {
  g_exit_gate_closed.store(true);
  const py::gil_scoped_release no_gil;
  // Bounded only so that a producer's deleter that never returns cannot
  // hang the exit; each one here just waits for the GIL we released.
  for (int i = 0; i < 10000 && g_deleters_running.load() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Owned by anydev after a successful import (its deleter deletes it), by
// import_capsule until then; `inner` stays the producer's tensor.
template <class Managed>
struct GuardedTensor {
  Managed managed{};  // a copy of inner's fields; deleter is guarded_deleter
  Managed* inner = nullptr;
};

template <class Managed>
void guarded_deleter(Managed* self) {
  auto* guard = static_cast<GuardedTensor<Managed>*>(self->manager_ctx);
  Managed* inner = guard->inner;
  delete guard;
  if (inner->deleter == nullptr) return;
  g_deleters_running.fetch_add(1);
  if (!g_exit_gate_closed.load()) inner->deleter(inner);
  g_deleters_running.fetch_sub(1);
}

// Imports the tensor of a capsule named names.unused and renames it used.
template <class Managed>
py::object import_capsule(const py::object& capsule, const anydev::DeviceContext* ctx) {
  auto* managed =
      static_cast<Managed*>(PyCapsule_GetPointer(capsule.ptr(), names_of<Managed>().unused));
  if (managed == nullptr) throw py::error_already_set();
  auto guard = std::make_unique<GuardedTensor<Managed>>();
  guard->managed = *managed;
  guard->managed.manager_ctx = guard.get();
  guard->managed.deleter = guarded_deleter<Managed>;
  guard->inner = managed;
  anydev_buffer_t out = nullptr;
  const anydev_context_t handle = ctx != nullptr ? ctx->handle() : nullptr;
  {
    // Without a context this creates the cpu one (the registry's lock).
    const WithoutGil unlocked;
    if constexpr (std::is_same_v<Managed, DLManagedTensor>) {
      check(anydev_buffer_from_dlpack(handle, &guard->managed, &out));
    } else {
      check(anydev_buffer_from_dlpack_versioned(handle, &guard->managed, &out));
    }
  }
  guard.release();  // anydev owns it now
  // anydev owns the tensor now: the capsule must not delete it.
  PyCapsule_SetName(capsule.ptr(), names_of<Managed>().used);
  return wrap_buffer(out);
}

// anydev.from_dlpack(obj, ctx=None).
py::object from_dlpack(const py::object& obj, const py::object& ctx_arg) {
  if (!ctx_arg.is_none() && !py::isinstance<anydev::DeviceContext>(ctx_arg)) {
    throw py::type_error("anydev.from_dlpack: ctx must be None or a DeviceContext, not " +
                         std::string(py::str(ctx_arg.get_type().attr("__name__"))));
  }
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
      const py::object reported = obj.attr("__dlpack_device__")();
      if (!is_int_pair(reported)) {
        throw py::type_error(
            "anydev.from_dlpack: __dlpack_device__() must give a (device_type, device_id) tuple "
            "of ints, not " +
            std::string(py::repr(reported)));
      }
      const py::tuple pair = reported;
      const py::int_ type_number = pair[0];
      const py::int_ id_number = pair[1];
      const bool type_fits = compare(type_number, Py_GE, py::int_(INT_MIN)) &&
                             compare(type_number, Py_LE, py::int_(INT_MAX));
      const int type = type_fits ? type_number.cast<int>() : -1;
      if (!importable(type)) {
        // Known before export: ask for no capsule anydev cannot take.
        throw Error(Status::unsupported,
                    "anydev.from_dlpack: cannot import memory of DLPack device type " +
                        text_of(type_number) +
                        (type == kDLOpenCL
                             ? " (kDLOpenCL): anydev's opencl backend can use only the cl_mem "
                               "objects it allocated"
                             : ": anydev imports kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDA and "
                               "kDLROCM") +
                        "; nothing was exported");
      }
      if (compare(id_number, Py_LT, py::int_(0)) || compare(id_number, Py_GT, py::int_(INT_MAX))) {
        throw Error(Status::out_of_range,
                    "anydev.from_dlpack: __dlpack_device__() gave device id " + text_of(id_number) +
                        ", outside 0 .. " + std::to_string(INT_MAX));
      }
      const std::pair<int, int> device{type, id_number.cast<int>()};
      const char* api = device.first == kDLCUDA   ? "cuda"
                        : device.first == kDLROCM ? "hip"
                                                  : nullptr;
      if (ctx == nullptr && api != nullptr) {
        // The context anydev_buffer_from_dlpack would make, made here so that
        // the producer can order its work before this context's stream.
        const WithoutGil unlocked;
        made.emplace(device.second, api);
        ctx = &*made;
      }
      if (!is_host_side(device.first) && ctx != nullptr) {
        // The producer makes anydev's stream wait for its work.
        void* native = nullptr;
        {
          const WithoutGil unlocked;
          native = ctx->stream().native_handle();
        }
        if (native != nullptr) stream = py::int_(reinterpret_cast<std::uintptr_t>(native));
      }
    }
    capsule = ask_producer(obj, stream);
  }
  if (PyCapsule_IsValid(capsule.ptr(), kVersioned.unused)) {
    return import_capsule<anydev_dlpack_managed_tensor_versioned_t>(capsule, ctx);
  }
  if (PyCapsule_IsValid(capsule.ptr(), kUnversioned.unused)) {
    return import_capsule<DLManagedTensor>(capsule, ctx);
  }
  throw py::value_error(
      "anydev.from_dlpack: not a usable DLPack capsule (already consumed, or named neither "
      "'dltensor' nor 'dltensor_versioned')");
}

}  // namespace

void bind_dlpack(py::module_& m, py::class_<Buffer>& buffer) {
  buffer
      .def("__dlpack__", &to_capsule, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
           py::arg("copy") = py::none(), py::arg("shape") = py::none(),
           "A DLPack capsule sharing this buffer's memory (1-D unless `shape`, an anydev "
           "extension, is given): 'dltensor_versioned' (DLPack 1.0, flags 0, bool as kDLBool) "
           "when max_version is (1, 0) or newer, else the unversioned 'dltensor' (DLPack 0.x). "
           "`stream` orders the consumer after the buffer's work (see docs/python.md). "
           "copy=True and a dl_device other than the buffer's raise BufferError.")
      .def(
          "__dlpack_device__",
          [](const Buffer& b) {
            const auto [type, id] = dlpack_device(b);
            return py::make_tuple(type, id);
          },
          "(DLPack device type, device id): 1 kDLCPU, 2 kDLCUDA, 3 kDLCUDAHost, 4 kDLOpenCL, ...");
  py::module_::import("atexit").attr("register")(py::cpp_function(&close_exit_gate));
  m.def("from_dlpack", &from_dlpack, py::arg("obj"), py::arg("ctx") = py::none(),
        "An anydev buffer sharing the memory of `obj` (anything with __dlpack__, e.g. a NumPy "
        "array or a torch tensor, or a DLPack capsule). Host memory becomes a HostBuffer (on "
        "`ctx`, default the cpu backend), device memory a DeviceBuffer (on `ctx`, default a new "
        "context on its device). It keeps `obj`'s memory alive. Producers are asked for "
        "max_version=(1, 0) (again without it when they refuse the keyword); both capsule "
        "kinds are taken, and a read-only versioned tensor is refused (UnsupportedError).");
}

}  // namespace anydev::python
