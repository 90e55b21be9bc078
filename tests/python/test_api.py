# SPDX-License-Identifier: Apache-2.0
"""The anydev package without other libraries: names, buffers, errors,
printing, indexing, the buffer protocol, native handles."""
import array

import pytest

import anydev
from conftest import BACKEND, DEVICE_DLPACK, HOST_DLPACK, IS_CPU


def test_snippet_names_exist():
    for name in ["DeviceContext", "HostBuffer", "DeviceBuffer", "DeviceStream", "DeviceEvent",
                 "Error", "backends", "from_dlpack"]:
        assert hasattr(anydev, name), name


def test_default_context_and_explicit_backend(ctx):
    # ctest sets ANYDEV_BACKEND to the backend under test.
    assert anydev.DeviceContext().api() == BACKEND
    assert ctx.api() == BACKEND and ctx.id() == 0
    assert repr(ctx) == f"DeviceContext(0, api='{BACKEND}')"
    assert ctx.memory_info().total > 0


def test_backends_lists_cpu_available():
    infos = {b.name: b for b in anydev.backends()}
    assert infos["cpu"].available and infos["cpu"].device_count == 1
    assert "cuda" in infos


def test_fill_copy_and_read_back(ctx):
    h = ctx.enqueue_create_host_buffer(1024, dtype="float32")
    d = ctx.enqueue_create_buffer(1024, dtype="float32")
    h.enqueue_fill(1.5)
    h.enqueue_copy_to(d)
    back = ctx.enqueue_create_host_buffer(1024, dtype="float32")
    d.enqueue_copy_to(back)
    ctx.synchronize()
    assert isinstance(h, anydev.HostBuffer) and isinstance(d, anydev.DeviceBuffer)
    assert len(h) == 1024 and h.size() == 1024 and h.size_bytes() == 4096
    assert h.dtype == "float32"
    assert back[0] == 1.5 and back[-1] == 1.5
    assert d[1023] == 1.5  # a device element is copied synchronously


def test_repr_is_mojos_format(ctx):
    h = ctx.enqueue_create_host_buffer(3, dtype="int32")
    for i in range(3):
        h[i] = i
    assert repr(h) == "HostBuffer([0, 1, 2])"
    f = ctx.enqueue_create_host_buffer(1001, dtype="float64")
    f.enqueue_fill(2.0)
    ctx.synchronize()
    assert str(f) == "HostBuffer([2.0, 2.0, 2.0, ..., 2.0, 2.0, 2.0])"
    d = ctx.enqueue_create_buffer(2, dtype="int8")
    d.enqueue_fill(-3)
    assert repr(d) == "DeviceBuffer([-3, -3])"


def test_indexing_and_slices(ctx):
    h = ctx.enqueue_create_host_buffer(8, dtype="int64")
    h.enqueue_fill(0)
    ctx.synchronize()
    h[2] = 5
    h[-1] = 9
    assert h[2] == 5 and h[7] == 9 and h[-8] == 0
    view = h[2:4]
    assert isinstance(view, anydev.HostBuffer) and len(view) == 2 and view[0] == 5
    view[1] = 6
    assert h[3] == 6  # a slice shares memory
    with pytest.raises(IndexError, match="index 8 is out of range for a buffer of 8 elements"):
        h[8]
    with pytest.raises(IndexError, match="step must be 1"):
        h[::2]
    d = ctx.enqueue_create_buffer(4, dtype="float16")
    d[3] = 0.5
    assert d[3] == 0.5
    with pytest.raises(IndexError):
        d[4]


def test_element_types_round_trip(ctx):
    values = {"bool": True, "int8": -128, "uint8": 255, "int16": -3, "uint16": 65535,
              "int32": -7, "uint32": 2**32 - 1, "int64": -2**63, "uint64": 2**64 - 1,
              "float16": 1.5, "bfloat16": 2.0, "float32": 0.25, "float64": 1e300,
              "complex64": 1 + 2j, "complex128": -1.5 + 0.5j}
    for dtype, value in values.items():
        h = ctx.enqueue_create_host_buffer(2, dtype=dtype)
        h.enqueue_fill(value)
        ctx.synchronize()
        assert h[1] == value, dtype
    h = ctx.enqueue_create_host_buffer(1, dtype="uint8")
    with pytest.raises(ValueError, match="256 does not fit in uint8"):
        h.enqueue_fill(256)
    with pytest.raises(TypeError, match="needs an int"):
        h[0] = 1.5
    with pytest.raises(TypeError, match="unknown dtype"):
        ctx.enqueue_create_host_buffer(1, dtype="float128")


def test_errors_carry_status_and_message(ctx):
    with pytest.raises(anydev.OutOfRangeError) as info:
        ctx.enqueue_create_host_buffer(2**62, dtype="float64")
    assert info.value.status == "out_of_range"
    assert isinstance(info.value, anydev.Error) and isinstance(info.value, IndexError)
    assert "anydev_buffer_create" in str(info.value)
    # A backend unavailable here (which one depends on the run: every run
    # leaves at least one vendor backend without its library or device).
    unavailable = [b.name for b in anydev.backends() if not b.available]
    assert unavailable
    with pytest.raises(anydev.BackendUnavailableError, match=unavailable[0]):
        anydev.DeviceContext(0, api=unavailable[0])
    with pytest.raises(anydev.InvalidArgumentError, match="unknown backend"):
        anydev.DeviceContext(0, api="nonsense")
    h = ctx.enqueue_create_host_buffer(4, dtype="float32")
    small = ctx.enqueue_create_host_buffer(2, dtype="float32")
    with pytest.raises(anydev.OutOfRangeError):
        small.enqueue_copy_to(h)  # the source is shorter than the destination
    other = ctx.enqueue_create_host_buffer(4, dtype="int32")
    with pytest.raises(anydev.InvalidArgumentError, match="dtypes must match"):
        h.enqueue_copy_to(other)


def test_buffer_protocol_is_zero_copy(ctx):
    h = ctx.enqueue_create_host_buffer(4, dtype="int32")
    h.enqueue_fill(3)
    ctx.synchronize()
    view = memoryview(h)
    assert view.format == "i" and view.itemsize == 4 and view.shape == (4,)
    view[1] = 42
    assert h[1] == 42
    assert list(view) == [3, 42, 3, 3]


def test_copies_with_python_objects_are_synchronous(ctx):
    d = ctx.enqueue_create_buffer(4, dtype="int32")
    d.enqueue_copy_from(array.array("i", [1, 2, 3, 4]))
    out = array.array("i", [0, 0, 0, 0])
    d.enqueue_copy_to(out)
    assert list(out) == [1, 2, 3, 4]
    with pytest.raises(TypeError, match="writable"):
        d.enqueue_copy_to(b"immutable bytes!")


def test_take_ptr_and_free(ctx):
    h = ctx.enqueue_create_host_buffer(4, dtype="float32")
    address = h.unsafe_ptr()
    assert h.take_ptr() == address
    with pytest.raises(anydev.InvalidStateError):
        h.enqueue_fill(1.0)
    ctx.free(address)


def test_streams_events_and_native_handles(ctx):
    stream = ctx.create_stream()
    other = ctx.with_stream(stream)
    event = ctx.create_event()
    h = other.enqueue_create_host_buffer(16, dtype="float32")
    h.enqueue_fill(1.0)
    stream.record_event(event)
    ctx.stream().enqueue_wait_for(event)
    event.synchronize()
    assert event.is_complete()
    ctx.enqueue_wait_for(other)
    ctx.synchronize()
    assert h[15] == 1.0
    if not IS_CPU:
        assert stream.native_handle() != 0  # a native stream of the backend
        return
    # The cpu backend has no native objects: a clear error, not a fake value.
    with pytest.raises(anydev.UnsupportedError, match="cpu"):
        stream.native_handle()
    with pytest.raises(anydev.UnsupportedError):
        ctx.native_handle("context")
    with pytest.raises(ValueError, match="'context' or 'device'"):
        ctx.native_handle("queue")
    with pytest.raises(anydev.Error, match="cpu"):
        anydev.DeviceContext.wrap_native_stream("cpu", 0, 1234)


def test_dlpack_capsule_protocol(ctx):
    h = ctx.enqueue_create_host_buffer(4, dtype="float32")
    assert h.__dlpack_device__() == (HOST_DLPACK, 0)
    d = ctx.enqueue_create_buffer(4, dtype="float32")
    # cpu "device" memory is host memory (kDLCPU)
    assert d.__dlpack_device__() == (DEVICE_DLPACK, 0)
    capsule = h.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule"
    del capsule  # an unconsumed capsule releases its reference
    with pytest.raises(BufferError, match="copy=True"):
        h.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="stream 0"):
        d.__dlpack__(stream=0)
    with pytest.raises(anydev.InvalidArgumentError, match="holds 6 elements"):
        h.__dlpack__(shape=(2, 3))
    # anydev -> anydev through a capsule shares memory.
    x = anydev.from_dlpack(h.__dlpack__())
    assert x.unsafe_ptr() == h.unsafe_ptr()
    with pytest.raises(TypeError, match="__dlpack__"):
        anydev.from_dlpack(42)


@pytest.mark.parametrize("index", [-1, -5, -(2**31)])
def test_negative_device_index_is_refused(index):
    # DeviceContext(-5) must not pick device 0 in silence; DeviceContext() is
    # the default device.
    with pytest.raises(anydev.InvalidArgumentError, match=f"device index {index} is negative"):
        anydev.DeviceContext(index, api="cpu")
    with pytest.raises(anydev.InvalidArgumentError, match=f"device index {index}"):
        anydev.DeviceContext(index)
    with pytest.raises(anydev.InvalidArgumentError, match=f"device index {index}"):
        anydev.DeviceContext.wrap_native_stream("cpu", index, 1 << 20)


def test_copies_with_python_objects_refuse_another_dtype(ctx):
    # float64 values copied into a float32 buffer would be reinterpreted
    # ([0.0, 1.875, 0.0, 2.0]) and int32 ones read as denormals: refused.
    d = ctx.enqueue_create_buffer(4, dtype="float32")
    d.enqueue_fill(0.5)
    with pytest.raises(anydev.InvalidArgumentError, match="float64.*float32.*enqueue_copy_from|"
                       "enqueue_copy_from.*float64.*float32"):
        d.enqueue_copy_from(array.array("d", [1.0, 2.0]))
    with pytest.raises(anydev.InvalidArgumentError, match="enqueue_copy_from.*int32.*float32"):
        d.enqueue_copy_from(array.array("i", [1, 2, 3, 4]))
    out = array.array("i", [0, 0, 0, 0])
    with pytest.raises(anydev.InvalidArgumentError, match="enqueue_copy_to.*int32.*float32"):
        d.enqueue_copy_to(out)
    assert list(out) == [0, 0, 0, 0]  # refused without change
    check = array.array("f", [0.0] * 4)
    d.enqueue_copy_to(check)
    assert list(check) == [0.5] * 4
    # Plain bytes copy as the buffer's raw bytes (an explicit byte view).
    raw = array.array("f", [1.0, 2.0, 3.0, 4.0]).tobytes()
    d.enqueue_copy_from(raw)
    d.enqueue_copy_from(bytearray(raw))
    back = bytearray(16)
    d.enqueue_copy_to(back)
    assert bytes(back) == raw
    d.enqueue_copy_from(memoryview(array.array("d", [1.0, 2.0])).cast("B"))


def test_host_buffer_says_whether_it_is_locked():
    cpu = anydev.DeviceContext(0, "cpu")
    host = cpu.enqueue_create_host_buffer(16, "uint8")
    assert isinstance(host.is_locked(), bool)
    taken = cpu.enqueue_create_host_buffer(16, "uint8")
    address = taken.take_ptr()
    with pytest.raises(anydev.InvalidStateError, match="take_ptr"):
        taken.is_locked()
    cpu.free(address)
