// SPDX-License-Identifier: Apache-2.0
// The Python Communicator, ExposedRegion and RemoteRegion (the C++ API's,
// comm.hpp; docs/distributed.md): transfers between processes over UCX.
// Each Python object owns one reference to its C handle until close(), the
// end of a with-block or garbage collection drops it; after that its calls
// raise InvalidStateError. Every call that enters anydev releases the GIL
// (the last release of a communicator waits for its transfers). Thread-safe
// as the C ABI: a call works on its own copy of the reference (taken with
// the GIL held), so a close() on another thread never pulls it away.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "anydev/anydev.hpp"
#include "anydev/comm.hpp"
#include "py_buffer.h"
#include "py_errors.h"
#include "py_values.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

// One reference to a C++ comm object, owned by the Python object and dropped
// once. `T` is Communicator, ExposedRegion or RemoteRegion; `name` is the
// Python class's. get() and close() run with the GIL held, which serializes
// them.
template <class T>
struct Held {
  std::optional<T> value;
  const char* name;

  Held(T v, const char* n) : value(std::move(v)), name(n) {}
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() { close(); }

  // A copy of the reference, or InvalidStateError naming `method` once
  // closed.
  T get(const char* method) const {
    if (!value) {
      throw Error(Status::invalid_state,
                  std::string(name) + "." + method + ": the " + name + " is closed");
    }
    return *value;
  }
  // Drops the reference without the GIL: the last one of a communicator
  // waits for its transfers. At interpreter exit, or on a thread without
  // the GIL, it is dropped as it is.
  void close() {
    std::optional<T> gone;
    gone.swap(value);
    if (!gone) return;
    if (Py_IsInitialized() != 0 && _Py_IsFinalizing() == 0 && PyGILState_Check() != 0) {
      const WithoutGil unlocked;
      gone.reset();
    }
  }
};
using PyCommunicator = Held<anydev::Communicator>;
using PyExposedRegion = Held<anydev::ExposedRegion>;
using PyRemoteRegion = Held<anydev::RemoteRegion>;

// The contiguous bytes of a bytes-like object (bytes, bytearray,
// memoryview, a NumPy array), held while `view` lives; TypeError otherwise.
PyView bytes_argument(py::handle object, const std::string& where) {
  return PyView(object, PyBUF_C_CONTIGUOUS,
                where + " must be bytes-like (bytes, bytearray, memoryview)");
}

std::span<const std::uint8_t> span_of(const PyView& view) {
  return {static_cast<const std::uint8_t*>(view.data()), view.bytes()};
}

// The bytes `get()` returns (an address, a key), called without the GIL.
template <class Get>
py::bytes bytes_without_gil(Get&& get) {
  std::vector<std::uint8_t> bytes;
  {
    const WithoutGil unlocked;
    bytes = get();
  }
  return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

PyCommunicator* make_communicator(const anydev::DeviceContext& ctx, std::uint32_t timeout_ms) {
  std::optional<anydev::Communicator> made;
  {
    const WithoutGil unlocked;
    made.emplace(ctx, timeout_ms);
  }
  return new PyCommunicator(std::move(*made), "Communicator");
}

// The with-block protocol and close() of one of the Held classes.
template <class Class>
void bind_closing(Class& cls, const char* closes) {
  using H = typename Class::type;
  cls.def("close", &H::close, closes)
      .def_property_readonly(
          "closed", [](const H& h) { return !h.value.has_value(); }, "True after close().")
      .def(
          "__enter__", [](py::object self) { return self; }, "Returns the object itself.")
      .def(
          "__exit__",
          [](H& h, py::handle, py::handle, py::handle) {
            h.close();
            return false;
          },
          "close().");
}

// A C buffer handle in the shape comm.hpp's templates take.
struct BufferRef {
  anydev_buffer_t buffer;
  anydev_buffer_t handle() const { return buffer; }
};

// Runs `call(comm, buffer)` without the GIL, after checking both objects.
template <class Call>
auto with_buffer(const PyCommunicator& c, const char* method, const Buffer& buffer, Call&& call) {
  const anydev::Communicator comm = c.get(method);
  const BufferRef ref{buffer.get(method)};
  const WithoutGil unlocked;
  return call(comm, ref);
}

// The binding of enqueue_send or enqueue_recv: `call(comm, buffer, peer,
// tag)` is the C++ member.
template <class Call>
auto two_sided(const char* method, Call call) {
  return
      [method, call](const PyCommunicator& c, const Buffer& buffer, int peer, std::uint32_t tag) {
        with_buffer(c, method, buffer,
                    [&](const auto& comm, BufferRef b) { call(comm, b, peer, tag); });
      };
}

// The binding of enqueue_put or enqueue_get: `call(comm, buffer, remote,
// offset)` is the C++ member.
template <class Call>
auto one_sided(const char* method, Call call) {
  return [method, call](const PyCommunicator& c, const Buffer& buffer, const PyRemoteRegion& remote,
                        std::size_t offset) {
    const anydev::RemoteRegion r = remote.get(method);
    with_buffer(c, method, buffer,
                [&](const auto& comm, BufferRef b) { call(comm, b, r, offset); });
  };
}

void bind_regions(py::module_& m) {
  py::class_<PyExposedRegion> exposed(
      m, "ExposedRegion",
      "A buffer of this process exposed to peers' enqueue_put and enqueue_get "
      "(Communicator.expose). `key` goes to the peers, which import it with "
      "Communicator.import_region. Keeps the buffer and the communicator alive until closed.");
  exposed.def_property_readonly(
      "key",
      [](const PyExposedRegion& r) {
        const anydev::ExposedRegion region = r.get("key");
        return bytes_without_gil([&] { return region.key(); });
      },
      "The region's remote key (bytes) for a peer's import_region.");
  bind_closing(exposed,
               "Unexposes the region (once no transfer uses it); later calls raise "
               "InvalidStateError.");
  exposed.def("__repr__", [](const PyExposedRegion& r) {
    return std::string(r.value ? "ExposedRegion()" : "ExposedRegion(closed)");
  });

  py::class_<PyRemoteRegion> remote(
      m, "RemoteRegion",
      "A peer's exposed buffer, imported from its key (Communicator.import_region): the target "
      "of enqueue_put and enqueue_get. Keeps the communicator alive until closed.");
  bind_closing(remote, "Releases the imported key; later calls raise InvalidStateError.");
  remote.def("__repr__", [](const PyRemoteRegion& r) {
    return std::string(r.value ? "RemoteRegion()" : "RemoteRegion(closed)");
  });
}

void bind_connections(py::class_<PyCommunicator>& cls) {
  cls.def_property_readonly(
         "address",
         [](const PyCommunicator& c) {
           const anydev::Communicator comm = c.get("address");
           return bytes_without_gil([&] { return comm.address(); });
         },
         "This communicator's address (bytes): what peers pass to connect().")
      .def(
          "connect",
          [](const PyCommunicator& c, py::handle address) {
            const anydev::Communicator comm = c.get("connect");
            const PyView bytes = bytes_argument(address, "Communicator.connect: the address");
            const WithoutGil unlocked;
            return comm.connect(span_of(bytes));
          },
          py::arg("address"),
          "Connects to the peer whose address (bytes) is given and returns its index (0, 1, ... "
          "in connection order). InvalidArgumentError for bytes that are not an address, this "
          "communicator's own, or one already connected.")
      .def_property_readonly(
          "peer_count",
          [](const PyCommunicator& c) {
            const anydev::Communicator comm = c.get("peer_count");
            const WithoutGil unlocked;
            return comm.peer_count();
          },
          "How many peers are connected.")
      .def_property_readonly(
          "memory_types",
          [](const PyCommunicator& c) {
            const anydev::Communicator comm = c.get("memory_types");
            std::string types;
            {
              const WithoutGil unlocked;
              types = comm.memory_types();
            }
            return library_text(types);
          },
          "The memory types UCX reaches directly ('host', 'host,cuda', ...); other device "
          "memory is staged through pinned host buffers.");
}

void bind_transfers(py::class_<PyCommunicator>& cls) {
  cls.def("enqueue_send",
          two_sided("enqueue_send",
                    [](const auto& comm, auto&&... args) { comm.enqueue_send(args...); }),
          py::arg("buffer"), py::arg("peer"), py::arg("tag"),
          "Sends all of `buffer` to `peer` with `tag` (0 .. 2**32-1), after the work already "
          "enqueued on the buffer's stream; later work there waits for it. Its error is raised by "
          "that stream's next synchronize().")
      .def("enqueue_recv",
           two_sided("enqueue_recv",
                     [](const auto& comm, auto&&... args) { comm.enqueue_recv(args...); }),
           py::arg("buffer"), py::arg("peer"), py::arg("tag"),
           "Receives a message with `tag` from `peer` into all of `buffer` (the sizes must "
           "agree), stream-ordered as enqueue_send.")
      .def(
          "expose",
          [](const PyCommunicator& c, const Buffer& buffer) {
            return new PyExposedRegion(
                with_buffer(c, "expose", buffer,
                            [](const auto& comm, BufferRef b) { return comm.expose(b); }),
                "ExposedRegion");
          },
          py::arg("buffer"),
          "Exposes `buffer` (host memory, or device memory UCX reaches directly; else "
          "UnsupportedError) to peers' enqueue_put and enqueue_get; returns an ExposedRegion.")
      .def(
          "expose_new",
          [](const PyCommunicator& c, std::size_t size, py::handle dtype) {
            const anydev::Communicator comm = c.get("expose_new");
            const anydev_dtype_t type = dtype_from_object(dtype);
            anydev_buffer_t buffer = nullptr;
            anydev_comm_region_t region = nullptr;
            {
              const WithoutGil unlocked;
              check(anydev_comm_expose_new(comm.handle(), type, size, &buffer, &region));
            }
            // Each owns its reference from here, whatever throws next.
            auto exposed = std::make_unique<PyExposedRegion>(anydev::ExposedRegion::adopt(region),
                                                             "ExposedRegion");
            py::object host = wrap_buffer(buffer);
            return py::make_tuple(std::move(host), py::cast(std::move(exposed)));
          },
          py::arg("size"), py::arg("dtype") = "float32",
          "Allocates `size` elements of `dtype` through UCX and exposes them at once; returns "
          "(HostBuffer, ExposedRegion). Over shared memory (UCX_TLS=sm,self) peers' puts into it "
          "are plain stores, not messages this process copies in as for expose()d memory. The "
          "memory lives until both the buffer and the region are closed or gone.")
      .def(
          "import_region",
          [](const PyCommunicator& c, int peer, py::handle key) {
            const anydev::Communicator comm = c.get("import_region");
            const PyView bytes = bytes_argument(key, "Communicator.import_region: the key");
            std::optional<anydev::RemoteRegion> out;
            {
              const WithoutGil unlocked;
              out.emplace(comm.import_region(peer, span_of(bytes)));
            }
            return new PyRemoteRegion(std::move(*out), "RemoteRegion");
          },
          py::arg("peer"), py::arg("key"),
          "Imports the key (bytes) of a region that `peer` exposed; returns a RemoteRegion. "
          "InvalidArgumentError for bytes that are not a key or a key of another process.")
      .def("enqueue_put",
           one_sided("enqueue_put",
                     [](const auto& comm, auto&&... args) { comm.enqueue_put(args...); }),
           py::arg("buffer"), py::arg("remote"), py::arg("offset") = 0,
           "Writes all of `buffer` into `remote` at byte `offset` (OutOfRangeError when it does "
           "not fit), stream-ordered; it completes when the bytes are in the peer's memory.")
      .def("enqueue_get",
           one_sided("enqueue_get",
                     [](const auto& comm, auto&&... args) { comm.enqueue_get(args...); }),
           py::arg("buffer"), py::arg("remote"), py::arg("offset") = 0,
           "Reads as many bytes as `buffer` holds from `remote` at byte `offset` into it, "
           "stream-ordered.");
}

}  // namespace

void bind_comm(py::module_& m) {
  bind_regions(m);
  py::class_<PyCommunicator> cls(
      m, "Communicator",
      "Transfers between processes and nodes over UCX (docs/distributed.md): "
      "Communicator(ctx, timeout_ms=0) or ctx.create_communicator(). Exchange `address` with "
      "the other processes by any channel (mpi4py, a pipe), connect() to each, then enqueue "
      "transfers ordered on the buffer's stream; their errors are raised by synchronize(). "
      "close() (or the end of a with-block) drops this reference; the last one waits for the "
      "transfers in flight. BackendUnavailableError where UCX is absent.");
  cls.def(py::init(&make_communicator), py::arg("ctx"), py::arg("timeout_ms") = 0,
          "A communicator on ctx's backend and device. timeout_ms: how long a transfer may take "
          "once started (0: ANYDEV_UCX_TIMEOUT_MS, else 30000).");
  bind_connections(cls);
  bind_transfers(cls);
  bind_closing(cls,
               "Drops this reference to the communicator; the last one (regions hold one too) "
               "waits for the transfers in flight, then closes the connections. Later calls "
               "raise InvalidStateError.");
  cls.def("__repr__", [](const PyCommunicator& c) {
    if (!c.value) return py::str("Communicator(closed)");
    const anydev::Communicator comm = *c.value;
    std::string text;
    {
      const WithoutGil unlocked;
      text = "Communicator(peers=" + std::to_string(comm.peer_count()) + ", memory_types='" +
             comm.memory_types() + "')";
    }
    return library_text(text);
  });

  auto ctx_cls = py::reinterpret_borrow<py::class_<anydev::DeviceContext>>(m.attr("DeviceContext"));
  ctx_cls.def("create_communicator", &make_communicator, py::arg("timeout_ms") = 0,
              "A Communicator on this context (as anydev.Communicator(ctx, timeout_ms)).");
}

}  // namespace anydev::python
