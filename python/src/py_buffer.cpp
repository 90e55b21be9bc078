// SPDX-License-Identifier: Apache-2.0
#include "py_buffer.h"

#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "py_errors.h"
#include "py_register.h"
#include "py_share.h"
#include "py_values.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

// The C-contiguous view that enqueue_copy_to/_from (`method`) copy with.
PyView copy_view(py::handle object, bool writable, const char* method) {
  return PyView(object, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0),
                std::string(method) + ": expected a HostBuffer, a DeviceBuffer or a " +
                    (writable ? "writable " : "") + "C-contiguous object with the buffer protocol");
}

// Waits for the buffer's context (copies to/from Python objects are
// synchronous, so the object may be dropped at once). Releases the GIL.
void synchronize_context(anydev_buffer_t buf) {
  anydev_context_t ctx = nullptr;
  check(anydev_buffer_context(buf, &ctx));
  const anydev::DeviceContext context = anydev::DeviceContext::adopt(ctx);
  const WithoutGil unlocked;
  context.synchronize();
}

void require_same_dtype(const char* method, const Buffer& a, const Buffer& b) {
  if (a.dtype != b.dtype) {
    throw Error(Status::invalid_argument,
                std::string(a.type_name()) + "." + method + ": a " + dtype_name(a.dtype) +
                    " buffer and a " + dtype_name(b.dtype) + " buffer (the dtypes must match)");
  }
}

// A copy between a buffer and a Python object moves bytes: the object's
// elements must be the buffer's dtype (or plain bytes, copied as the
// buffer's raw bytes), else InvalidArgumentError naming both -- float64
// values copied into a float32 buffer would be silently reinterpreted.
void require_matching_elements(const char* method, const Buffer& buf, const PyView& view,
                               const char* role) {
  const FormatElements elements = format_elements(view.format(), view.itemsize());
  if (elements.raw_bytes || elements.dtype == buf.dtype) return;
  const std::string format = view.format() == nullptr ? "B" : view.format();
  throw Error(Status::invalid_argument,
              std::string(buf.type_name()) + "." + method + ": the " + role + "'s elements are " +
                  (elements.dtype ? dtype_name(*elements.dtype) : "not an anydev dtype") +
                  " (buffer format '" + format + "', " + std::to_string(view.itemsize()) +
                  " bytes each) but the buffer's are " + dtype_name(buf.dtype) +
                  "; convert it first (NumPy: a.astype('" + dtype_name(buf.dtype) +
                  "')) or pass a byte view (memoryview(a).cast('B')) to copy raw bytes");
}

std::size_t normalize_index(const Buffer& buf, const char* method, Py_ssize_t index) {
  buf.get(method);  // a taken buffer says so, not "0 elements"
  const auto size = static_cast<Py_ssize_t>(buf.count);
  const Py_ssize_t i = index < 0 ? index + size : index;
  if (i < 0 || i >= size) {
    // anydev.OutOfRangeError (an IndexError too) with its status.
    throw Error(Status::out_of_range,
                std::string(buf.type_name()) + "." + method + ": index " + std::to_string(index) +
                    " is out of range for a buffer of " + std::to_string(buf.count) + " elements");
  }
  return static_cast<std::size_t>(i);
}

// A one-element (or n-element) view of buf starting at element `offset`.
anydev::detail::BufferHandle view_of(const Buffer& buf, std::size_t offset, std::size_t n,
                                     const char* method) {
  anydev_buffer_t out = nullptr;
  check(anydev_buffer_create_sub_buffer(buf.get(method), buf.dtype, offset, n, &out));
  return anydev::detail::BufferHandle(out);
}

py::object get_item(const Buffer& buf, Py_ssize_t index) {
  const std::size_t i = normalize_index(buf, "__getitem__", index);
  const std::size_t size = anydev_dtype_size(buf.dtype);
  if (buf.is_host()) {
    const anydev_buffer_info_t info = buf.info("__getitem__");
    return decode(buf.dtype, static_cast<const char*>(info.address) + i * size);
  }
  std::array<unsigned char, 16> bytes{};
  const auto view = view_of(buf, i, 1, "__getitem__");
  check(anydev_enqueue_copy_to_host(nullptr, bytes.data(), size, view.get()));
  synchronize_context(view.get());
  return decode(buf.dtype, bytes.data());
}

void set_item(const Buffer& buf, Py_ssize_t index, py::handle value) {
  const std::size_t i = normalize_index(buf, "__setitem__", index);
  const Element e = encode(buf.dtype, value);
  if (buf.is_host()) {
    const anydev_buffer_info_t info = buf.info("__setitem__");
    std::memcpy(static_cast<char*>(info.address) + i * e.size, e.bytes.data(), e.size);
    return;
  }
  const auto view = view_of(buf, i, 1, "__setitem__");
  check(anydev_enqueue_copy_from_host(nullptr, view.get(), e.bytes.data(), e.size));
  synchronize_context(view.get());
}

py::object get_slice(const Buffer& buf, const py::slice& slice) {
  buf.get("__getitem__");  // a taken buffer says so
  Py_ssize_t start = 0, stop = 0, step = 0, length = 0;
  if (!slice.compute(static_cast<Py_ssize_t>(buf.count), &start, &stop, &step, &length)) {
    throw py::error_already_set();
  }
  if (step != 1) {
    throw py::index_error(std::string(buf.type_name()) +
                          ".__getitem__: a slice is a view, so its step must be 1, not " +
                          std::to_string(step));
  }
  anydev_buffer_t out = nullptr;
  check(anydev_buffer_create_sub_buffer(buf.get("__getitem__"), buf.dtype,
                                        static_cast<std::size_t>(start),
                                        static_cast<std::size_t>(length), &out));
  return wrap_buffer(out);
}

// anydev_buffer_format of `handle` (a device buffer is copied synchronously).
std::string format_handle(anydev_buffer_t handle) {
  std::vector<char> text(256);
  size_t needed = 0;
  anydev_status_t status = ANYDEV_SUCCESS;
  {
    const WithoutGil unlocked;
    status = anydev_buffer_format(handle, text.data(), text.size(), &needed);
    if (status == ANYDEV_ERROR_OUT_OF_RANGE && needed > text.size()) {
      text.resize(needed);
      status = anydev_buffer_format(handle, text.data(), text.size(), &needed);
    }
  }
  check(status);
  return std::string(text.data());
}

// The elements between "Name([" and "])" of a formatted buffer.
std::string inner_text(const std::string& formatted) {
  const std::size_t open = formatted.find("([");
  if (open == std::string::npos || formatted.size() < open + 4) return formatted;
  return formatted.substr(open + 2, formatted.size() - open - 4);
}

// Buffers of this many elements or more print as their first and last
// kReprEdge elements (anydev_buffer_format's elision, src/support/format.cpp).
constexpr std::size_t kReprElideFrom = 1000;
constexpr std::size_t kReprEdge = 3;

// repr(): the C ABI's text. A large DeviceBuffer is not copied whole to the
// host for it: only the kReprEdge elements at each end are (two views), and
// the text is the one anydev_buffer_format would give.
std::string format(const Buffer& buf) {
  const anydev_buffer_t handle = buf.get("__repr__");
  if (buf.is_host() || buf.count < kReprElideFrom) return format_handle(handle);
  const auto head = view_of(buf, 0, kReprEdge, "__repr__");
  const auto tail = view_of(buf, buf.count - kReprEdge, kReprEdge, "__repr__");
  return std::string(buf.type_name()) + "([" + inner_text(format_handle(head.get())) + ", ..., " +
         inner_text(format_handle(tail.get())) + "])";
}

void copy_to(const Buffer& src, py::handle dst) {
  if (py::isinstance<Buffer>(dst)) {
    const Buffer& d = dst.cast<const Buffer&>();
    require_same_dtype("enqueue_copy_to", src, d);
    const anydev_buffer_t to = d.get("enqueue_copy_to"), from = src.get("enqueue_copy_to");
    const WithoutGil unlocked;
    check(anydev_enqueue_copy(nullptr, to, from));
    return;
  }
  const PyView view = copy_view(dst, true, "enqueue_copy_to");
  const anydev_buffer_t s = src.get("enqueue_copy_to");
  require_matching_elements("enqueue_copy_to", src, view, "destination");
  {
    const WithoutGil unlocked;  // the view stays ours meanwhile
    check(anydev_enqueue_copy_to_host(nullptr, view.data(), view.bytes(), s));
  }
  synchronize_context(s);
}

void copy_from(const Buffer& dst, py::handle src) {
  if (py::isinstance<Buffer>(src)) {
    const Buffer& s = src.cast<const Buffer&>();
    require_same_dtype("enqueue_copy_from", dst, s);
    const anydev_buffer_t to = dst.get("enqueue_copy_from"), from = s.get("enqueue_copy_from");
    const WithoutGil unlocked;
    check(anydev_enqueue_copy(nullptr, to, from));
    return;
  }
  const PyView view = copy_view(src, false, "enqueue_copy_from");
  const anydev_buffer_t d = dst.get("enqueue_copy_from");
  require_matching_elements("enqueue_copy_from", dst, view, "source");
  {
    const WithoutGil unlocked;
    check(anydev_enqueue_copy_from_host(nullptr, d, view.data(), view.bytes()));
  }
  synchronize_context(d);
}

// What a buffer-protocol export of a HostBuffer holds until the consumer
// releases the view (view->internal): the shape and stride the view points
// to, and one reference to the C handle, so that take_ptr refuses while the
// view lives exactly as while a DLPack tensor lives (the Python reference in
// view->obj alone would not stop take_ptr). Owned by the view; touched only
// with the GIL held.
struct HostExport {
  Py_ssize_t extents[2] = {0, 0};  // shape[0], strides[0]
  anydev_buffer_t held = nullptr;  // one reference, released with the view
};

// The buffer protocol of HostBuffer, written against the C API so that a
// refusal (bfloat16 has no format code; a taken buffer has no memory) is a
// Python BufferError rather than an exception escaping a C callback.
extern "C" int host_getbuffer(PyObject* obj, Py_buffer* view, int flags) {
  view->obj = nullptr;
  try {
    const HostBuffer& buf = py::handle(obj).cast<const HostBuffer&>();
    const anydev_buffer_info_t info = buf.info("buffer protocol");
    const char* format = buffer_format(buf.dtype);
    if (format == nullptr) {
      PyErr_SetString(PyExc_BufferError,
                      ("HostBuffer: " + dtype_name(buf.dtype) +
                       " has no buffer-protocol format; use numpy.from_dlpack or torch.from_dlpack "
                       "instead")
                          .c_str());
      return -1;
    }
    const auto item = static_cast<Py_ssize_t>(anydev_dtype_size(buf.dtype));
    static char empty = 0;  // an empty buffer has no address; hand out a valid one
    auto exported = std::make_unique<HostExport>();
    exported->extents[0] = static_cast<Py_ssize_t>(info.count);
    exported->extents[1] = item;
    check(anydev_buffer_retain(buf.get("buffer protocol")));
    exported->held = buf.get("buffer protocol");
    view->buf = info.address != nullptr ? info.address : &empty;
    view->len = exported->extents[0] * item;
    view->readonly = 0;
    view->itemsize = item;
    view->format = (flags & PyBUF_FORMAT) != 0 ? const_cast<char*>(format) : nullptr;
    view->ndim = 1;
    view->shape = (flags & PyBUF_ND) != 0 ? &exported->extents[0] : nullptr;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? &exported->extents[1] : nullptr;
    view->suboffsets = nullptr;
    view->internal = exported.release();
    view->obj = obj;
    Py_INCREF(obj);
    return 0;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const anydev::Error& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
  }
  return -1;
}

// Never fails: releasing a reference reports nothing worth raising here.
extern "C" void host_releasebuffer(PyObject*, Py_buffer* view) {
  auto* exported = static_cast<HostExport*>(view->internal);
  view->internal = nullptr;
  if (exported == nullptr) return;
  static_cast<void>(anydev_buffer_release(exported->held));
  delete exported;
}

}  // namespace

PyView::PyView(py::handle object, int flags, const std::string& expected) {
  if (PyObject_GetBuffer(object.ptr(), &view_, flags) != 0) {
    PyErr_Clear();
    throw py::type_error(expected + ", not " +
                         std::string(py::str(object.get_type().attr("__name__"))));
  }
}

anydev_buffer_t Buffer::get(const char* method) const {
  if (handle.get() == nullptr) anydev::detail::throw_empty(type_name(), method, "buffer");
  if (taken) {
    throw Error(Status::invalid_state,
                std::string(type_name()) + "." + method +
                    ": the buffer is empty: its memory was handed to the caller with take_ptr()");
  }
  return handle.get();
}

anydev_buffer_info_t Buffer::info(const char* method) const {
  anydev_buffer_info_t out{};
  out.struct_size = sizeof(out);
  check(anydev_buffer_get_info(get(method), &out));
  return out;
}

py::object wrap_buffer(anydev_buffer_t owned) {
  anydev::detail::BufferHandle handle(owned);
  anydev_buffer_info_t info{};
  info.struct_size = sizeof(info);
  check(anydev_buffer_get_info(owned, &info));
  if (info.kind == ANYDEV_MEMORY_HOST) {
    HostBuffer buf;
    buf.handle = std::move(handle);
    buf.kind = info.kind;
    buf.dtype = info.dtype;
    buf.count = info.count;
    return py::cast(std::move(buf));
  }
  DeviceBuffer buf;
  buf.handle = std::move(handle);
  buf.kind = info.kind;
  buf.dtype = info.dtype;
  buf.count = info.count;
  return py::cast(std::move(buf));
}

void bind_buffers(py::module_& m) {
  // Weak references: anydev._sharing tracks shareable buffers across fork().
  py::class_<Buffer> buffer(m, "Buffer", py::dynamic_attr(),
                            "What HostBuffer and DeviceBuffer share; not created directly.");
  buffer
      .def_property_readonly(
          "dtype", [](const Buffer& b) { return dtype_name(b.dtype); }, "The element type's name.")
      .def_property_readonly(
          "shape", [](const Buffer& b) { return py::make_tuple(b.count); },
          "(elements,): a buffer is one-dimensional (shaped() gives DLPack consumers a shape).")
      .def_property_readonly(
          "ndim", [](const Buffer&) { return 1; }, "1: a buffer is one-dimensional.")
      .def_property_readonly(
          "device",
          [](const Buffer& b) {
            anydev_context_t out = nullptr;
            check(anydev_buffer_context(b.get("device"), &out));
            return anydev::DeviceContext::adopt(out);
          },
          "The DeviceContext the buffer belongs to (its backend, device and stream).")
      .def(
          "size", [](const Buffer& b) { return b.count; }, "Elements.")
      .def(
          "size_bytes", [](const Buffer& b) { return b.count * anydev_dtype_size(b.dtype); },
          "Bytes (elements times the dtype's size).")
      .def(
          "__len__", [](const Buffer& b) { return b.count; }, "Elements (0 after take_ptr).")
      .def(
          "unsafe_ptr",
          [](const Buffer& b) {
            return reinterpret_cast<std::uintptr_t>(b.info("unsafe_ptr").address);
          },
          "Host address of a HostBuffer, device address of a DeviceBuffer (an OpenCL device "
          "buffer's is an opaque token), as an int.")
      .def(
          "create_sub_buffer",
          [](const Buffer& b, std::size_t offset, std::size_t size, py::object dtype) {
            const anydev_dtype_t t = dtype.is_none() ? b.dtype : dtype_from_object(dtype);
            anydev_buffer_t out = nullptr;
            check(
                anydev_buffer_create_sub_buffer(b.get("create_sub_buffer"), t, offset, size, &out));
            return wrap_buffer(out);
          },
          py::arg("offset"), py::arg("size"), py::arg("dtype") = py::none(),
          "A view of `size` elements of dtype (default: this buffer's) from element `offset` "
          "(counted in that dtype); shares memory and keeps it alive.")
      .def("enqueue_copy_to", &copy_to, py::arg("dst"),
           "Copies into a HostBuffer or DeviceBuffer of the same dtype (its size; on its context), "
           "or into a writable C-contiguous Python object of the same dtype or of bytes (this "
           "buffer's size; synchronous).")
      .def("enqueue_copy_from", &copy_from, py::arg("src"),
           "Copies from a HostBuffer or DeviceBuffer of the same dtype (this buffer's size; on "
           "this buffer's context), or from a C-contiguous Python object of the same dtype or of "
           "bytes (synchronous).")
      .def(
          "enqueue_fill",
          [](const Buffer& b, py::handle value) {
            const Element e = encode(b.dtype, value);
            const anydev_buffer_t handle = b.get("enqueue_fill");
            const WithoutGil unlocked;
            check(anydev_enqueue_fill(nullptr, handle, e.bytes.data(), e.size));
          },
          py::arg("value"), "Writes value (as this buffer's dtype) into every element.")
      .def(
          "reassign_ownership_to",
          [](const Buffer& b, const anydev::DeviceContext& ctx) {
            const anydev_buffer_t handle = b.get("reassign_ownership_to");
            const WithoutGil unlocked;
            check(anydev_buffer_reassign_ownership(handle, ctx.handle()));
          },
          py::arg("ctx"),
          "Later operations on this buffer, and its release, run on ctx's stream (same backend "
          "and device).")
      .def(
          "take_ptr",
          [](Buffer& b) {
            void* out = nullptr;
            const anydev_buffer_t handle = b.get("take_ptr");
            anydev_status_t status = ANYDEV_SUCCESS;
            {
              const WithoutGil unlocked;
              status = anydev_buffer_take_ptr(handle, &out);
            }
            if (status == ANYDEV_ERROR_INVALID_STATE) {
              throw Error(Status::invalid_state,
                          std::string(b.type_name()) + ".take_ptr: " + anydev_last_error_message() +
                              " (every export holds a reference until it is released: a "
                              "memoryview, a NumPy array of the buffer protocol, a DLPack "
                              "capsule or the tensor made from it)");
            }
            check(status);
            b.count = 0;
            b.taken = true;
            return reinterpret_cast<std::uintptr_t>(out);
          },
          "Hands the memory to the caller (release it with ctx.free(address)); needs the only "
          "handle to it, so it fails while an export (memoryview, NumPy array, DLPack capsule or "
          "tensor) lives. The buffer is empty afterwards.")
      .def(
          "context",
          [](const Buffer& b) {
            anydev_context_t out = nullptr;
            check(anydev_buffer_context(b.get("context"), &out));
            return anydev::DeviceContext::adopt(out);
          },
          "The DeviceContext the buffer belongs to (the same as .device).")
      .def(
          "native_handle",
          [](const Buffer& b) {
            void* out = nullptr;
            check(anydev_buffer_native_handle(b.get("native_handle"), &out));
            return reinterpret_cast<std::uintptr_t>(out);
          },
          "The backend's memory object (CUdeviceptr, cl_mem, ...) of the whole allocation, as an "
          "int; the buffer starts native_offset() bytes into it.")
      .def(
          "native_offset",
          [](const Buffer& b) {
            anydev_buffer_info_t info{};
            info.struct_size = sizeof info;
            check(anydev_buffer_get_info(b.get("native_offset"), &info));
            return info.native_offset_bytes;
          },
          "Where the buffer's first byte lies in native_handle()'s object, in bytes: the view's "
          "offset, plus the block's where the pool carved small buffers out of one object "
          "(OpenCL's cl_mem).")
      .def("__repr__", &format,
           "'HostBuffer([0, 1, 2])'; 1000 elements or more print as the first and last three "
           "(a DeviceBuffer copies only those to the host).")
      .def("__str__", &format)
      .def("__getitem__", &get_item, py::arg("index"),
           "Element `index` (negative counts from the end); OutOfRangeError (an IndexError) "
           "outside the buffer. A DeviceBuffer copies it synchronously.")
      .def("__getitem__", &get_slice, py::arg("slice"),
           "A view of elements start:stop (step 1), sharing memory.")
      .def("__setitem__", &set_item, py::arg("index"), py::arg("value"),
           "Writes element `index`; OutOfRangeError (an IndexError) outside the buffer.");

  py::class_<HostBuffer, Buffer>(
      m, "HostBuffer", py::custom_type_setup([](PyHeapTypeObject* heap_type) {
        heap_type->as_buffer.bf_getbuffer = host_getbuffer;
        heap_type->as_buffer.bf_releasebuffer = host_releasebuffer;
        heap_type->ht_type.tp_as_buffer = &heap_type->as_buffer;
      }),
      "Pinned host memory (DeviceContext.enqueue_create_host_buffer). Indexing reads and writes "
      "memory directly (synchronize first); supports the buffer protocol and DLPack.")
      .def(
          "is_locked",
          [](const HostBuffer& b) {
            int locked = 0;
            check(anydev_buffer_is_locked(b.get("is_locked"), &locked));
            return locked != 0;
          },
          "True when the memory is page-locked (pinned); False past RLIMIT_MEMLOCK, with a "
          "backend that does not lock host memory (opencl), for imported memory and size 0.");
  py::class_<DeviceBuffer, Buffer>(
      m, "DeviceBuffer",
      "Device memory (DeviceContext.enqueue_create_buffer). Indexing copies one element "
      "synchronously; supports DLPack.");
  bind_dlpack(m, buffer);
  bind_share_buffer(buffer);
  bind_register_buffer(buffer);
}

}  // namespace anydev::python
