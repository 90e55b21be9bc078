# SPDX-License-Identifier: Apache-2.0
"""anydev <-> PyTorch through DLPack: zero copy both ways, lifetimes in both
orders, errors; CUDA tensors <-> cuda DeviceBuffers when both have a GPU."""
import gc
import weakref

import pytest

import anydev
from conftest import wait_until

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch)")


@pytest.mark.kdlcpu_host
def test_host_buffer_to_torch_is_zero_copy(ctx):
    h = ctx.enqueue_create_host_buffer(1024, dtype="float32")
    h.enqueue_fill(1.5)
    t = torch.from_dlpack(h)
    assert t.dtype == torch.float32 and t.shape == (1024,) and t.device.type == "cpu"
    assert t.data_ptr() == h.unsafe_ptr()
    assert bool((t == 1.5).all())
    t[5] = -1.0
    assert h[5] == -1.0
    h[6] = 8.0
    assert t[6].item() == 8.0


@pytest.mark.kdlcpu_host
def test_dtypes_and_shapes_to_torch(ctx):
    pairs = {"int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16,
             "int32": torch.int32, "int64": torch.int64, "float16": torch.float16,
             "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
             "complex64": torch.complex64, "complex128": torch.complex128}
    for name, dtype in pairs.items():
        h = ctx.enqueue_create_host_buffer(6, dtype=name)
        h.enqueue_fill(1)
        t = torch.from_dlpack(h.shaped((2, 3)))
        assert t.dtype == dtype and t.shape == (2, 3), name
        assert bool((t == 1).all()), name


def test_torch_tensor_to_anydev_is_zero_copy(ctx):
    t = torch.arange(10.0)
    x = anydev.from_dlpack(t)
    assert isinstance(x, anydev.HostBuffer) and x.dtype == "float32" and len(x) == 10
    assert x.unsafe_ptr() == t.data_ptr()
    assert repr(x) == "HostBuffer([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])"
    t[0] = 100.0
    assert x[0] == 100.0
    x.enqueue_fill(-1.0)
    ctx.synchronize()
    assert bool((t == -1.0).all())


def test_torch_views_import_with_their_offset(ctx):
    base = torch.arange(12, dtype=torch.int64)
    part = base[4:]
    x = anydev.from_dlpack(part)
    assert x.unsafe_ptr() == base.data_ptr() + 4 * 8 and x[0] == 4 and len(x) == 8
    scalar = anydev.from_dlpack(torch.tensor(2.5))
    assert len(scalar) == 1 and scalar[0] == 2.5


@pytest.mark.kdlcpu_host
def test_round_trip_anydev_torch_anydev(ctx):
    h = ctx.enqueue_create_host_buffer(8, dtype="int32")
    h.enqueue_fill(3)
    back = anydev.from_dlpack(torch.from_dlpack(h))
    assert back.unsafe_ptr() == h.unsafe_ptr() and back[7] == 3


@pytest.mark.kdlcpu_host
def test_lifetime_anydev_released_first_then_tensor_used(ctx):
    h = ctx.enqueue_create_host_buffer(2048, dtype="float64")
    h.enqueue_fill(0.5)
    t = torch.from_dlpack(h)
    del h, ctx
    gc.collect()
    assert t.sum().item() == 1024.0
    t.mul_(4)
    assert t[2047].item() == 2.0


@pytest.mark.kdlcpu_host
def test_lifetime_tensor_released_first_then_anydev_used(ctx):
    h = ctx.enqueue_create_host_buffer(16, dtype="float32")
    t = torch.from_dlpack(h)
    t.fill_(2.0)
    del t
    gc.collect()
    assert h[0] == 2.0
    h.enqueue_fill(3.0)
    ctx.synchronize()
    assert h[15] == 3.0


def test_lifetime_imported_tensor_kept_alive_by_anydev(ctx):
    t = torch.full((64,), 5, dtype=torch.int32)
    alive = weakref.ref(t)
    x = anydev.from_dlpack(t)
    del t
    gc.collect()
    assert alive() is not None
    x.enqueue_fill(6)
    del x  # the release waits for the fill on anydev's reclaimer thread
    wait_until(lambda: alive() is None, "anydev to release the torch tensor")


def test_errors_for_unsupported_exchanges(ctx):
    with pytest.raises(anydev.UnsupportedError, match="not row-major contiguous"):
        anydev.from_dlpack(torch.arange(12.0).reshape(3, 4).t())
    with pytest.raises(anydev.UnsupportedError, match="dtype bool"):
        torch.from_dlpack(ctx.enqueue_create_host_buffer(2, dtype="bool"))
    with pytest.raises(anydev.InvalidArgumentError, match="holds 5 elements"):
        torch.from_dlpack(ctx.enqueue_create_host_buffer(4, dtype="int8").shaped((5,)))
    # A cuda tensor cannot go into a cpu context.
    if torch.cuda.is_available():
        with pytest.raises(anydev.InvalidArgumentError, match="needs a context on cuda"):
            anydev.from_dlpack(torch.zeros(2, device="cuda"), ctx=ctx)


def _cuda_context():
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    if anydev.DeviceContext.number_of_devices("cuda") == 0:
        pytest.skip("anydev's cuda backend is unavailable: " +
                    next(b.reason for b in anydev.backends() if b.name == "cuda"))
    return anydev.DeviceContext(0, api="cuda")


def test_cuda_device_buffer_to_torch_honours_stream():
    cuda = _cuda_context()
    d = cuda.enqueue_create_buffer(1 << 20, dtype="float32")
    d.enqueue_fill(2.0)  # on anydev's stream; torch's stream must wait for it
    t = torch.from_dlpack(d)  # passes torch's current stream to __dlpack__
    assert t.device.type == "cuda" and t.data_ptr() == d.unsafe_ptr()
    assert t.sum().item() == 2.0 * (1 << 20)
    t.fill_(3.0)
    torch.cuda.synchronize()
    assert d[0] == 3.0


def test_cuda_torch_tensor_to_anydev():
    cuda = _cuda_context()
    t = torch.arange(1024, device="cuda", dtype=torch.float32)
    x = anydev.from_dlpack(t, ctx=cuda)
    assert isinstance(x, anydev.DeviceBuffer) and x.unsafe_ptr() == t.data_ptr()
    h = cuda.enqueue_create_host_buffer(1024, dtype="float32")
    x.enqueue_copy_to(h)
    cuda.synchronize()
    assert h[1023] == 1023.0


def test_cuda_wrap_torch_stream():
    cuda = _cuda_context()
    stream = torch.cuda.Stream()
    wrapped = anydev.DeviceContext.wrap_native_stream("cuda", 0, stream.cuda_stream)
    assert wrapped.stream().native_handle() == stream.cuda_stream
    d = wrapped.enqueue_create_buffer(256, dtype="int32")
    d.enqueue_fill(7)
    stream.synchronize()
    assert d[255] == 7
    del cuda
