# SPDX-License-Identifier: Apache-2.0
"""DeviceContext.register_host_memory: NumPy arrays, torch tensors and raw
addresses registered as HostBuffers over the caller's memory (no copy),
copies through the device landing in that memory, the object kept alive
until the registration is undone, and errors that register nothing."""
import ctypes
import gc
import weakref

import pytest

import anydev
from conftest import wait_until

numpy = pytest.importorskip("numpy", reason="NumPy is not installed (Debian: python3-numpy)")


def test_numpy_array_is_registered_in_place(ctx):
    a = numpy.arange(4096, dtype=numpy.float32)
    h = ctx.register_host_memory(a)
    assert isinstance(h, anydev.HostBuffer)
    assert h.is_registered
    assert len(h) == 4096 and h.dtype == "float32"
    assert h.unsafe_ptr() == a.ctypes.data  # the array's own memory, not a copy
    d = ctx.enqueue_create_buffer(4096, dtype="float32")
    d.enqueue_copy_from(h)
    h.enqueue_fill(0.0)
    d.enqueue_copy_to(h)
    ctx.synchronize()
    assert (a == numpy.arange(4096, dtype=numpy.float32)).all()
    h.enqueue_fill(2.5)
    ctx.synchronize()
    assert (a == 2.5).all()  # anydev's writes land in the array


def test_dtype_argument_reinterprets_the_bytes(ctx):
    a = numpy.zeros(64, dtype=numpy.uint8)
    h = ctx.register_host_memory(a, dtype="uint32")
    assert len(h) == 16 and h.dtype == "uint32"
    h.enqueue_fill(0x01020304)
    ctx.synchronize()
    assert list(a[:4]) == [4, 3, 2, 1]


def test_the_buffer_keeps_the_array_alive_until_unregistered(ctx):
    a = numpy.ones(1000, dtype=numpy.int64)
    alive = weakref.ref(a)
    h = ctx.register_host_memory(a)
    del a
    gc.collect()
    assert alive() is not None  # the registration holds the array
    h.enqueue_fill(7)
    ctx.synchronize()
    assert (alive() == 7).all()
    del h
    wait_until(lambda: alive() is None, "the unregistered array to be freed")


def test_errors_register_nothing(ctx):
    a = numpy.zeros(4096, dtype=numpy.uint8)
    h = ctx.register_host_memory(a)
    with pytest.raises(anydev.InvalidArgumentError, match="registered"):
        ctx.register_host_memory(a[100:200])  # shares a page with `a`
    with pytest.raises(anydev.InvalidArgumentError, match="aligned"):
        ctx.register_host_memory(a[1:9], dtype="uint32")
    with pytest.raises(anydev.InvalidArgumentError, match="0"):
        ctx.register_host_memory(numpy.zeros(0, dtype=numpy.uint8))
    with pytest.raises(anydev.InvalidArgumentError, match="NULL"):
        ctx.register_host_pointer(0, 64)
    with pytest.raises(anydev.OutOfRangeError, match="address space"):
        ctx.register_host_pointer(2**64 - 16, 64)
    with pytest.raises(ValueError, match="contiguous"):  # NumPy's own refusal
        ctx.register_host_memory(numpy.zeros((8, 8))[:, ::2])
    with pytest.raises(TypeError, match="NumPy array"):
        ctx.register_host_memory(object())
    del h
    ctx.synchronize()
    # Once released, the same memory registers again (after the undoing).
    h = ctx.register_host_memory(a)
    assert h.is_registered


def test_raw_address_registration(ctx):
    memory = (ctypes.c_uint8 * 8192)()
    h = ctx.register_host_pointer(ctypes.addressof(memory), 8192)
    assert h.unsafe_ptr() == ctypes.addressof(memory)
    h.enqueue_fill(3)
    ctx.synchronize()
    assert memory[0] == 3 and memory[8191] == 3
    del h
    gc.collect()
    # The caller's memory must outlive the registration: register it again,
    # which waits for the first one to be undone, then release it.
    h = ctx.register_host_pointer(ctypes.addressof(memory), 8192)
    del h


def test_pinned_buffers_are_not_registered(ctx):
    assert not ctx.enqueue_create_host_buffer(4).is_registered


def test_torch_cpu_tensor_is_registered_in_place(ctx):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch)")
    t = torch.arange(256, dtype=torch.int32)
    h = ctx.register_host_memory(t)
    assert h.dtype == "int32" and len(h) == 256
    assert h.unsafe_ptr() == t.data_ptr()
    h.enqueue_fill(-1)
    ctx.synchronize()
    assert bool((t == -1).all())
    with pytest.raises(anydev.InvalidArgumentError, match="contiguous"):
        ctx.register_host_memory(torch.zeros(8, 8).t())
