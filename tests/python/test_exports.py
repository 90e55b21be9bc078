# SPDX-License-Identifier: Apache-2.0
"""Exports hold the memory: every way a HostBuffer's memory leaves anydev
(buffer protocol, DLPack) holds the C handle, so take_ptr refuses with
InvalidStateError while an export lives and works once it is gone; a DLPack
capsule's deleter may run twice; a taken buffer says so. See
docs/reliability.md, "Exports hold the memory; caller integers"."""
import ctypes
import gc

import pytest

import anydev
from conftest import skip_unless_host_memory_is_kdlcpu

numpy = pytest.importorskip("numpy", reason="NumPy is not installed (Debian: python3-numpy)")


def _torch_from_dlpack(h):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch)")
    skip_unless_host_memory_is_kdlcpu()
    return torch.from_dlpack(h)


# Every export of a HostBuffer's memory a consumer can keep. HostBuffer has no
# __array_interface__ (checked below): NumPy uses the buffer protocol.
EXPORTS = {
    "memoryview": memoryview,
    "memoryview_slice": lambda h: memoryview(h)[1:3],
    "memoryview_cast": lambda h: memoryview(h).cast("B"),
    "numpy_asarray": numpy.asarray,
    "numpy_frombuffer": lambda h: numpy.frombuffer(h, dtype=numpy.float32),
    "numpy_from_dlpack": numpy.from_dlpack,
    "dlpack_capsule": lambda h: h.__dlpack__(),
    "anydev_from_dlpack": anydev.from_dlpack,
    "torch_from_dlpack": _torch_from_dlpack,
}


def test_host_buffer_has_no_other_export_path():
    # A new export path (e.g. __array_interface__, which takes no reference)
    # must hold the handle like these and join EXPORTS.
    assert not hasattr(anydev.HostBuffer, "__array_interface__")
    assert not hasattr(anydev.HostBuffer, "__array__")


@pytest.mark.parametrize("kind", sorted(EXPORTS))
def test_take_ptr_refuses_while_an_export_holds_the_memory(ctx, kind):
    h = ctx.enqueue_create_host_buffer(4, dtype="float32")
    h.enqueue_fill(1.0)
    ctx.synchronize()
    export = EXPORTS[kind](h)
    with pytest.raises(anydev.InvalidStateError, match="take_ptr"):
        h.take_ptr()
    assert h[0] == 1.0  # refused without change
    del export
    gc.collect()
    address = h.take_ptr()  # the export is gone: it held a reference, nothing more
    ctx.free(address)
    ctx.synchronize()


def test_writes_through_a_buffer_protocol_view_cannot_reach_reused_memory(ctx):
    # The finding: np.asarray(h), then take_ptr and free; a new buffer of the
    # same size got the same block and writes through the array landed in it.
    h = ctx.enqueue_create_host_buffer(256, dtype="float32")
    a = numpy.asarray(h)
    with pytest.raises(anydev.InvalidStateError, match="take_ptr"):
        h.take_ptr()
    a[:] = 5.0
    other = ctx.enqueue_create_host_buffer(256, dtype="float32")
    other.enqueue_fill(0.0)
    ctx.synchronize()
    a[:] = 6.0
    assert other[0] == 0.0 and h[0] == 6.0


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
# DLTensor (data, device, ndim, dtype, shape, strides, byte_offset) is 48
# bytes on 64-bit platforms; manager_ctx and deleter follow.
DLManagedTensor._fields_ = [("dl_tensor", ctypes.c_byte * 48), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _DELETER)]


def _managed_of(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return ctypes.cast(get(capsule, b"dltensor"), ctypes.POINTER(DLManagedTensor))


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_capsule_deleter_called_by_a_consumer_that_keeps_the_name_runs_once(ctx, dtype):
    # torch 1.13 calls the deleter while unwinding a failed import without
    # renaming the capsule; the capsule's destructor then calls it again.
    assert ctypes.sizeof(ctypes.c_void_p) == 8, "the DLTensor layout above is for 64-bit"
    h = ctx.enqueue_create_host_buffer(8, dtype=dtype)
    capsule = h.__dlpack__()
    managed = _managed_of(capsule)
    managed.contents.deleter(managed)  # the consumer gives the tensor back ...
    managed.contents.deleter(managed)  # ... even twice: no effect now
    del capsule  # ... and the destructor of the still-named capsule runs it again
    gc.collect()
    address = h.take_ptr()  # the export held exactly one reference, released once
    ctx.free(address)
    ctx.synchronize()


def test_capsule_deleter_called_after_the_capsule_was_consumed(ctx):
    h = ctx.enqueue_create_host_buffer(8, dtype="float32")
    capsule = h.__dlpack__()
    managed = _managed_of(capsule)
    rename = ctypes.pythonapi.PyCapsule_SetName
    rename.argtypes = [ctypes.py_object, ctypes.c_char_p]
    assert rename(capsule, b"used_dltensor") == 0  # consumed, as the protocol says
    del capsule  # the consumer owns the tensor now
    gc.collect()
    with pytest.raises(anydev.InvalidStateError, match="take_ptr"):
        h.take_ptr()
    managed.contents.deleter(managed)
    ctx.free(h.take_ptr())
    ctx.synchronize()


def test_every_use_of_a_taken_buffer_names_take_ptr(ctx):
    h = ctx.enqueue_create_host_buffer(4, dtype="float32")
    d = ctx.enqueue_create_buffer(4, dtype="float32")
    addresses = [h.take_ptr(), d.take_ptr()]
    uses = {
        "h[0]": lambda: h[0],
        "h[-1]": lambda: h[-1],
        "h[5]": lambda: h[5],
        "h[0] = 1": lambda: h.__setitem__(0, 1.0),
        "h[0:2]": lambda: h[0:2],
        "h[::2]": lambda: h[::2],
        "d[0]": lambda: d[0],
        "d[0] = 1": lambda: d.__setitem__(0, 1.0),
        "repr(h)": lambda: repr(h),
        "h.enqueue_fill": lambda: h.enqueue_fill(1.0),
        "h.enqueue_copy_from(array)": lambda: h.enqueue_copy_from(numpy.zeros(4, numpy.float32)),
        "d.enqueue_copy_to(array)": lambda: d.enqueue_copy_to(numpy.zeros(4, numpy.float32)),
        "h.__dlpack__": lambda: h.__dlpack__(),
        "h.take_ptr": lambda: h.take_ptr(),
        "h.unsafe_ptr": lambda: h.unsafe_ptr(),
    }
    for what, use in uses.items():
        with pytest.raises(anydev.InvalidStateError, match="take_ptr") as info:
            use()
        assert "0 elements" not in str(info.value), what
    with pytest.raises(BufferError, match="take_ptr"):
        memoryview(h)
    assert len(h) == 0
    for address in addresses:
        ctx.free(address)
    ctx.synchronize()
