# SPDX-License-Identifier: Apache-2.0
"""DLPack on the opencl backend (PoCL in CI): host buffers export as kDLCPU
(mapped host memory), device buffers as kDLOpenCL whose data is the cl_mem
and byte_offset the view's offset; NumPy memory imports into an OpenCL
context as plain host memory. Skipped when the backend is unavailable."""
import ctypes

import pytest

import anydev

numpy = pytest.importorskip("numpy", reason="NumPy is not installed (Debian: python3-numpy)")


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def tensor_of(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return DLTensor.from_address(get(capsule, b"dltensor"))  # DLTensor is the first member


@pytest.fixture
def ocl():
    if anydev.DeviceContext.number_of_devices("opencl") == 0:
        pytest.skip("anydev's opencl backend is unavailable: " +
                    next(b.reason for b in anydev.backends() if b.name == "opencl"))
    return anydev.DeviceContext(0, api="opencl")


def test_host_buffer_is_kdlcpu_and_zero_copy(ocl):
    h = ocl.enqueue_create_host_buffer(16, dtype="float32")
    h.enqueue_fill(2.0)
    assert h.__dlpack_device__() == (anydev.kDLCPU, 0)
    a = numpy.from_dlpack(h)
    assert a.ctypes.data == h.unsafe_ptr() and (a == 2.0).all()


def test_device_buffer_is_kdlopencl_with_cl_mem_and_offset(ocl):
    ocl.enqueue_create_buffer(16, dtype="int32")  # d is not the first block of its cl_mem
    d = ocl.enqueue_create_buffer(16, dtype="int32")
    assert d.__dlpack_device__() == (anydev.kDLOpenCL, 0)
    view = d[4:8]
    capsule = view.__dlpack__()
    t = tensor_of(capsule)
    assert t.data == d.native_handle() == view.native_handle()  # the cl_mem holding d
    assert view.native_offset() == d.native_offset() + 16
    assert t.byte_offset == view.native_offset() and t.shape[0] == 4
    assert t.device.device_type == anydev.kDLOpenCL
    with pytest.raises(RuntimeError, match="Unsupported device"):
        numpy.from_dlpack(d)  # NumPy reads host memory only


def test_stream_argument_is_a_command_queue(ocl):
    d = ocl.enqueue_create_buffer(1 << 16, dtype="float32")
    d.enqueue_fill(1.0)
    consumer = ocl.create_stream()
    d.__dlpack__(stream=consumer.native_handle())  # the queue waits on the device
    consumer.synchronize()


def test_numpy_memory_goes_through_an_opencl_context(ocl):
    a = numpy.arange(16, dtype=numpy.float32)
    x = anydev.from_dlpack(a, ctx=ocl)
    assert x.unsafe_ptr() == a.ctypes.data and x.context().api() == "opencl"
    d = ocl.enqueue_create_buffer(16, dtype="float32")
    x.enqueue_copy_to(d)
    x.enqueue_fill(0.0)  # after the upload, on the same stream
    back = numpy.empty(16, dtype=numpy.float32)
    d.enqueue_copy_to(back)
    assert back.tolist() == list(range(16))
    assert (a == 0.0).all()


@pytest.mark.parametrize("stream", [1, 2])
def test_cuda_stream_values_are_refused_for_kdlopencl(ocl, stream):
    # stream=1 must not reach clGetCommandQueueInfo(queue=0x1): a segfault.
    d = ocl.enqueue_create_buffer(1024, dtype="float32")
    d.enqueue_fill(1.0)
    with pytest.raises(BufferError, match=f"stream {stream} has no meaning for kDLOpenCL"):
        d.__dlpack__(stream=stream)
    with pytest.raises(anydev.InvalidArgumentError, match=f"native stream {stream} .*opencl"):
        anydev.DeviceContext.wrap_native_stream("opencl", 0, stream)
    ocl.synchronize()


@pytest.mark.parametrize("stream", [3, 100, 4095])
def test_small_stream_values_are_never_dereferenced(ocl, stream):
    d = ocl.enqueue_create_buffer(1024, dtype="float32")
    d.enqueue_fill(1.0)
    with pytest.raises(anydev.InvalidArgumentError, match=f"native stream {stream} .*below"):
        d.__dlpack__(stream=stream)
    with pytest.raises(anydev.InvalidArgumentError, match=f"native stream {stream}"):
        anydev.DeviceContext.wrap_native_stream("opencl", 0, stream)
    capsule = d.__dlpack__(stream=None)  # None waits on the host
    assert type(capsule).__name__ == "PyCapsule"


def test_anydev_from_dlpack_refuses_kdlopencl_before_exporting(ocl):
    d = ocl.enqueue_create_buffer(16, dtype="float32")
    with pytest.raises(anydev.UnsupportedError, match="kDLOpenCL.*nothing was exported"):
        anydev.from_dlpack(d)
    ocl.free(d.take_ptr())  # no capsule was left holding the memory


def test_torch_import_of_kdlopencl_fails_cleanly(ocl):
    # Debian's torch 1.13 fails an assert, calls the deleter while unwinding
    # and leaves the capsule named "dltensor": the capsule's destructor used
    # to call the deleter a second time (a segfault).
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch)")
    d = ocl.enqueue_create_buffer(16, dtype="float32")
    for _ in range(3):
        with pytest.raises(Exception):
            torch.from_dlpack(d)
    import gc
    gc.collect()
    ocl.free(d.take_ptr())  # every failed import gave its reference back, once
