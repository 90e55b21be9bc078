# SPDX-License-Identifier: Apache-2.0
"""DLPack 1.x from Python: __dlpack__(max_version=...) picks the capsule
kind, a pure-ctypes consumer reads the versioned tensor (version, flags,
bool as kDLBool) and follows the capsule protocol (rename to
used_dltensor_versioned, call the deleter once), and anydev.from_dlpack
asks producers for max_version=(1, 0), falling back for producers that do
not know the keyword, and takes both capsule kinds."""
import ctypes

import pytest

import anydev
from conftest import HOST_DLPACK, skip_unless_host_memory_is_kdlcpu

# ---- a DLPack 1.0 consumer written with ctypes (no anydev code) -----------


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


VERSIONED_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                                     ("deleter", VERSIONED_DELETER), ("flags", ctypes.c_uint64),
                                     ("dl_tensor", DLTensor)]

_api = ctypes.pythonapi
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_USED = ctypes.c_char_p(b"used_dltensor_versioned")  # must outlive the capsule

READ_ONLY, IS_COPIED = 1, 2
KDL_BOOL, KDL_FLOAT = 6, 2


def capsule_name(capsule):
    return _api.PyCapsule_GetName(capsule).decode()


class VersionedConsumer:
    """Takes a dltensor_versioned capsule as a DLPack 1.0 consumer does: reads
    the tensor, renames the capsule so that it no longer owns it, and calls the
    deleter when done (release())."""

    def __init__(self, capsule):
        assert capsule_name(capsule) == "dltensor_versioned"
        address = _api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        self.managed = ctypes.cast(address, ctypes.POINTER(DLManagedTensorVersioned)).contents
        assert _api.PyCapsule_SetName(capsule, _USED) == 0
        self.released = False

    def values(self, ctype):
        t = self.managed.dl_tensor
        count = 1
        for i in range(t.ndim):
            count *= t.shape[i]
        return list((ctype * count).from_address(t.data + t.byte_offset))

    def release(self):
        assert not self.released
        self.released = True
        self.managed.deleter(ctypes.pointer(self.managed))


# ---- the tests -------------------------------------------------------------


def test_max_version_picks_the_capsule_kind(ctx):
    h = ctx.enqueue_create_host_buffer(4, dtype="float32")
    assert capsule_name(h.__dlpack__()) == "dltensor"
    assert capsule_name(h.__dlpack__(max_version=None)) == "dltensor"
    assert capsule_name(h.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert capsule_name(h.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert capsule_name(h.__dlpack__(max_version=(1, 3))) == "dltensor_versioned"
    assert capsule_name(h.__dlpack__(max_version=(2, 0))) == "dltensor_versioned"
    assert capsule_name(h.shaped((2, 2)).__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    for bad in [1, (1,), "1.0", (1.0, 0)]:
        with pytest.raises(TypeError, match="max_version must be None or a"):
            h.__dlpack__(max_version=bad)


def test_ctypes_consumer_reads_a_versioned_tensor_and_releases_it(ctx):
    h = ctx.enqueue_create_host_buffer(6, dtype="float32")
    h.enqueue_fill(2.5)
    capsule = h.shaped((2, 3)).__dlpack__(max_version=(1, 0))  # waits for the fill
    consumer = VersionedConsumer(capsule)
    m = consumer.managed
    assert (m.version.major, m.version.minor) == (1, 0)
    assert m.flags & (READ_ONLY | IS_COPIED) == 0  # writable, shared
    t = m.dl_tensor
    assert (t.device.device_type, t.device.device_id) == (HOST_DLPACK, 0)
    assert t.ndim == 2 and (t.shape[0], t.shape[1]) == (2, 3)
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (KDL_FLOAT, 32, 1)
    assert t.data == h.unsafe_ptr()
    assert consumer.values(ctypes.c_float) == [2.5] * 6
    # The consumer owns the tensor: it holds the buffer until the deleter.
    del capsule  # a renamed capsule does not delete the tensor
    with pytest.raises(anydev.InvalidStateError):
        h.take_ptr()
    consumer.release()
    address = h.take_ptr()
    ctx.free(address)


def test_bool_is_kdlbool_in_the_versioned_capsule_only(ctx):
    flags = ctx.enqueue_create_host_buffer(3, dtype="bool")
    flags.enqueue_fill(False)
    ctx.synchronize()
    flags[1] = True
    consumer = VersionedConsumer(flags.__dlpack__(max_version=(1, 0)))
    t = consumer.managed.dl_tensor
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (KDL_BOOL, 8, 1)
    assert consumer.values(ctypes.c_uint8) == [0, 1, 0]
    consumer.release()
    with pytest.raises(anydev.UnsupportedError, match="dtype bool has no DLPack 0.6 type"):
        flags.__dlpack__()


def test_unconsumed_versioned_capsule_releases_the_buffer(ctx):
    h = ctx.enqueue_create_host_buffer(4, dtype="int32")
    capsule = h.__dlpack__(max_version=(1, 0))
    with pytest.raises(anydev.InvalidStateError):
        h.take_ptr()
    del capsule  # never consumed: its destructor calls the deleter
    ctx.free(h.take_ptr())


def test_from_dlpack_round_trips_bool_through_the_versioned_capsule(ctx):
    flags = ctx.enqueue_create_host_buffer(4, dtype="bool")
    flags.enqueue_fill(False)
    ctx.synchronize()
    flags[2] = True
    back = anydev.from_dlpack(flags)  # asks max_version=(1, 0): bool needs it
    assert back.dtype == "bool" and back.unsafe_ptr() == flags.unsafe_ptr()
    assert [back[i] for i in range(4)] == [False, False, True, False]


class _Producer:
    """A producer of either protocol generation, recording how it was asked."""

    def __init__(self, buffer, knows_max_version):
        self.buffer = buffer
        self.knows_max_version = knows_max_version
        self.calls = []

    def __dlpack__(self, stream=None, **kwargs):
        self.calls.append(dict(kwargs))
        if "max_version" in kwargs and not self.knows_max_version:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        return self.buffer.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self.buffer.__dlpack_device__()


def test_from_dlpack_asks_for_max_version_and_falls_back(ctx):
    h = ctx.enqueue_create_host_buffer(5, dtype="float64")
    h.enqueue_fill(0.5)
    ctx.synchronize()
    new = _Producer(h, knows_max_version=True)
    assert anydev.from_dlpack(new).unsafe_ptr() == h.unsafe_ptr()
    assert new.calls == [{"max_version": (1, 0)}]
    old = _Producer(h, knows_max_version=False)
    view = anydev.from_dlpack(old)  # torch 1.13 and NumPy < 2 refuse the keyword
    assert view.unsafe_ptr() == h.unsafe_ptr() and view[4] == 0.5
    assert old.calls == [{"max_version": (1, 0)}, {}]


def test_from_dlpack_takes_both_capsule_kinds_and_marks_them_used(ctx):
    h = ctx.enqueue_create_host_buffer(3, dtype="int16")
    for capsule, used in [(h.__dlpack__(), "used_dltensor"),
                          (h.__dlpack__(max_version=(1, 0)), "used_dltensor_versioned")]:
        view = anydev.from_dlpack(capsule)
        assert view.unsafe_ptr() == h.unsafe_ptr()
        assert capsule_name(capsule) == used
        with pytest.raises(ValueError, match="not a usable DLPack capsule"):
            anydev.from_dlpack(capsule)  # consumed: refused, nothing freed twice


def test_debians_numpy_and_torch_use_the_unversioned_path(ctx):
    """NumPy 1.24 and PyTorch 1.13 know neither max_version as producers nor
    versioned capsules as consumers: both directions keep working through the
    0.6 capsule (and through the versioned one with newer releases)."""
    numpy = pytest.importorskip("numpy", reason="NumPy is not installed (Debian: python3-numpy)")
    h = ctx.enqueue_create_host_buffer(4, dtype="float32")
    h.enqueue_fill(1.25)
    a = numpy.from_dlpack(h)  # consumer: calls __dlpack__(stream=None), no max_version
    assert a.tolist() == [1.25] * 4 and a.ctypes.data == h.unsafe_ptr()
    source = numpy.arange(6, dtype=numpy.int32)
    view = anydev.from_dlpack(source)  # producer: max_version refused, asked again
    assert view.unsafe_ptr() == source.ctypes.data and view[5] == 5
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch)")
    skip_unless_host_memory_is_kdlcpu()
    t = torch.from_dlpack(h)
    assert t.tolist() == [1.25] * 4 and t.data_ptr() == h.unsafe_ptr()
    tensor = torch.arange(3, dtype=torch.int64)
    back = anydev.from_dlpack(tensor)
    assert back.unsafe_ptr() == tensor.data_ptr() and back[2] == 2
