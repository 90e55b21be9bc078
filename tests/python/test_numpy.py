# SPDX-License-Identifier: Apache-2.0
"""anydev <-> NumPy through DLPack: zero copy both ways, lifetimes in both
orders, errors for exchanges that cannot work."""
import gc
import os
import weakref

import pytest

import anydev
from conftest import wait_until

numpy = pytest.importorskip("numpy", reason="NumPy is not installed (Debian: python3-numpy)")


def test_host_buffer_to_numpy_is_zero_copy(ctx):
    h = ctx.enqueue_create_host_buffer(1024, dtype="float32")
    h.enqueue_fill(1.5)
    a = numpy.from_dlpack(h)  # __dlpack__ waits for the fill
    assert a.dtype == numpy.float32 and a.shape == (1024,)
    assert a.ctypes.data == h.unsafe_ptr()
    assert (a == 1.5).all()
    assert not a.flags.writeable  # NumPy marks every DLPack import read-only (DLPack 0.6)
    w = numpy.asarray(h)  # the buffer protocol gives a writable zero-copy view
    assert w.ctypes.data == h.unsafe_ptr() and w.dtype == numpy.float32
    w[7] = 3.0
    assert h[7] == 3.0 and a[7] == 3.0  # numpy's write is visible to anydev
    h[8] = 4.0
    assert a[8] == 4.0  # and anydev's to numpy
    h.enqueue_fill(2.5)
    ctx.synchronize()
    assert (a == 2.5).all()


@pytest.mark.cpu_only(reason="only the cpu backend's device memory is host memory")
def test_device_buffer_of_cpu_backend_to_numpy(ctx):
    d = ctx.enqueue_create_buffer(6, dtype="int16")
    d.enqueue_fill(-2)
    a = numpy.from_dlpack(d)
    assert a.ctypes.data == d.unsafe_ptr()
    assert a.tolist() == [-2] * 6


def test_shapes_views_and_dtypes(ctx):
    h = ctx.enqueue_create_host_buffer(12, dtype="int64")
    for i in range(12):
        h[i] = i
    a = numpy.from_dlpack(h.shaped((3, 4)))
    assert a.shape == (3, 4) and a[2, 3] == 11
    v = numpy.from_dlpack(h[4:8])
    assert v.ctypes.data == h.unsafe_ptr() + 4 * 8 and v.tolist() == [4, 5, 6, 7]
    for dtype in ["int8", "uint16", "int32", "uint64", "float16", "float64", "complex64",
                  "complex128"]:
        b = ctx.enqueue_create_host_buffer(3, dtype=dtype)
        b.enqueue_fill(1)
        assert numpy.from_dlpack(b).dtype == numpy.dtype(dtype)


def test_numpy_array_to_anydev_is_zero_copy(ctx):
    a = numpy.arange(10, dtype=numpy.float64)
    x = anydev.from_dlpack(a, ctx)  # host memory, used on ctx's backend
    assert isinstance(x, anydev.HostBuffer) and x.dtype == "float64" and len(x) == 10
    assert x.unsafe_ptr() == a.ctypes.data
    a[3] = 30.0
    assert x[3] == 30.0
    x.enqueue_fill(7.0)  # anydev work on numpy's memory
    ctx.synchronize()
    assert (a == 7.0).all()
    # Used with other anydev buffers: copy into device memory and back.
    d = ctx.enqueue_create_buffer(10, dtype="float64")
    x.enqueue_copy_to(d)
    back = numpy.zeros(10)
    d.enqueue_copy_to(back)
    assert (back == 7.0).all()


def test_2d_and_offset_numpy_views_import(ctx):
    a = numpy.arange(12, dtype=numpy.int32).reshape(3, 4)
    x = anydev.from_dlpack(a)
    assert len(x) == 12 and x[11] == 11
    row = anydev.from_dlpack(a[1])
    assert row.unsafe_ptr() == a.ctypes.data + 16 and row[0] == 4


def test_lifetime_anydev_released_first_then_array_used(ctx):
    h = ctx.enqueue_create_host_buffer(4096, dtype="float32")
    h.enqueue_fill(1.25)
    a = numpy.from_dlpack(h)
    del h, ctx
    gc.collect()
    assert (a == 1.25).all()  # the array still owns a reference to the memory
    assert a.sum() == 1.25 * 4096


def test_lifetime_array_released_first_then_anydev_used(ctx):
    h = ctx.enqueue_create_host_buffer(16, dtype="int32")
    a = numpy.from_dlpack(h)
    assert a.ctypes.data == h.unsafe_ptr()
    del a
    gc.collect()
    h.enqueue_fill(4)
    ctx.synchronize()
    assert h[15] == 4


def test_lifetime_imported_array_kept_alive_by_anydev(ctx):
    a = numpy.full(32, 6, dtype=numpy.int32)
    alive = weakref.ref(a)
    x = anydev.from_dlpack(a)
    del a
    gc.collect()
    assert alive() is not None  # anydev holds the producer's tensor
    assert x[31] == 6
    x.enqueue_fill(8)  # work in flight: the release waits for it
    view = x[0:4]
    del x
    gc.collect()
    assert alive() is not None  # a view keeps it too
    ctx.synchronize()
    assert view[3] == 8
    del view
    wait_until(lambda: alive() is None, "anydev to release the NumPy array")


def test_lifetime_imported_then_array_used_after_anydev_gone(ctx):
    a = numpy.zeros(8, dtype=numpy.float32)
    x = anydev.from_dlpack(a)
    x.enqueue_fill(0.5)
    ctx.synchronize()
    del x
    gc.collect()
    assert (a == 0.5).all()


def test_errors_for_unsupported_exchanges(ctx):
    b = ctx.enqueue_create_host_buffer(4, dtype="bool")
    with pytest.raises(anydev.UnsupportedError, match="dtype bool has no DLPack"):
        numpy.from_dlpack(b)
    # ... but a uint8 view of it works.
    assert numpy.from_dlpack(b.create_sub_buffer(0, 4, dtype="uint8")).dtype == numpy.uint8
    with pytest.raises(anydev.UnsupportedError, match="not row-major contiguous"):
        anydev.from_dlpack(numpy.arange(12.0).reshape(3, 4).T)
    with pytest.raises(anydev.UnsupportedError, match="not row-major contiguous"):
        anydev.from_dlpack(numpy.arange(12.0)[::2])
    h = ctx.enqueue_create_host_buffer(4, dtype="bfloat16")
    with pytest.raises(BufferError, match="bfloat16"):
        memoryview(h)


def test_numpy_copies_refuse_another_dtype(ctx):
    h = ctx.enqueue_create_host_buffer(4, dtype="float32")
    h.enqueue_fill(0.5)
    ctx.synchronize()
    for wrong in [numpy.arange(4, dtype=numpy.float64), numpy.arange(4, dtype=numpy.int32),
                  numpy.arange(4, dtype=">f4"), numpy.zeros(16, dtype=numpy.int8)]:
        with pytest.raises(anydev.InvalidArgumentError, match="enqueue_copy_from.*float32"):
            h.enqueue_copy_from(wrong)
        with pytest.raises(anydev.InvalidArgumentError, match="enqueue_copy_to.*float32"):
            h.enqueue_copy_to(wrong)
    assert [h[i] for i in range(4)] == [0.5] * 4  # refused without change
    values = numpy.arange(4, dtype=numpy.float32)
    h.enqueue_copy_from(values)
    assert [h[i] for i in range(4)] == [0.0, 1.0, 2.0, 3.0]
    h.enqueue_copy_from(values.view(numpy.uint8))  # a byte view copies raw bytes
    h.enqueue_copy_from(memoryview(numpy.ones(2, numpy.float64)).cast("B"))
    for dtype in ["int8", "uint16", "int32", "int64", "uint64", "float16", "float64", "complex64",
                  "complex128", "bool"]:
        b = ctx.enqueue_create_host_buffer(3, dtype=dtype)
        src = numpy.ones(3, dtype=dtype)
        b.enqueue_copy_from(src)
        dst = numpy.zeros(3, dtype=dtype)
        b.enqueue_copy_to(dst)
        assert (dst == src).all(), dtype
    longs = ctx.enqueue_create_host_buffer(2, dtype="int64")
    longs.enqueue_copy_from(numpy.array([7, 8], dtype=numpy.int_))  # format 'l'
    longs.enqueue_copy_from(numpy.array([7, 8], dtype=numpy.longlong))  # format 'q'
    assert longs[1] == 8


# Device fills of every pattern width (1, 2, 4, 8 and 16 bytes: the 8- and
# 16-byte ones are planned by each GPU backend), whole and on a slice, and
# copies both ways through host buffers read by NumPy. From the former
# tests/emulators/hip/test_hip.py, now on every backend.
@pytest.mark.parametrize("dtype,value", [("uint8", 0xA5), ("int16", -2), ("float32", 1.5),
                                         ("float64", -0.25), ("complex128", 1 - 2j)])
def test_device_fill_and_copies_round_trip(ctx, dtype, value):
    d = ctx.enqueue_create_buffer(1000, dtype=dtype)
    d.enqueue_fill(value)
    h = ctx.enqueue_create_host_buffer(1000, dtype=dtype)
    d.enqueue_copy_to(h)
    ctx.synchronize()
    assert (numpy.asarray(h) == value).all()
    h.enqueue_fill(0)
    d.enqueue_copy_from(h)
    d[10:20].enqueue_fill(value)
    d.enqueue_copy_to(h)
    ctx.synchronize()
    a = numpy.asarray(h)
    assert (a[10:20] == value).all() and (a[:10] == 0).all() and (a[20:] == 0).all()


# A NumPy array's deleter that anydev calls while the interpreter exits (the
# fill below is on the context from_dlpack makes, so the release waits for it
# on anydev's reclaimer thread) would wait for the GIL there and be ended by
# pthread_exit, aborting the process ("FATAL: exception not rethrown"). The
# exit gate of python/src/py_dlpack.cpp closes first.
EXIT_SCRIPT = """
import gc, numpy, anydev
ctx = anydev.DeviceContext(0, api="cpu")
a = numpy.zeros(8, dtype=numpy.float32)
x = anydev.from_dlpack(a)
x.enqueue_fill(0.5)
ctx.synchronize()
del x
gc.collect()
"""


@pytest.mark.cpu_only(reason="the exit race is the binding's, the same on every backend")
def test_imported_array_released_while_the_interpreter_exits():
    import subprocess
    import sys
    for _ in range(5):
        run = subprocess.run([sys.executable, "-c", EXIT_SCRIPT], capture_output=True, text=True,
                             timeout=120, env=dict(os.environ, ANYDEV_BACKEND="cpu"))
        assert run.returncode == 0, run.stderr
