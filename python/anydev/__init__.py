# SPDX-License-Identifier: Apache-2.0
"""anydev: one API over CUDA, HIP, Level Zero, OpenCL and the CPU.

The names follow the C++ API (and Mojo's gpu.host module): DeviceContext,
HostBuffer, DeviceBuffer, DeviceStream, DeviceEvent. Buffers exchange memory
with NumPy, PyTorch and other array libraries through DLPack without copying:

    import anydev, numpy, torch
    ctx = anydev.DeviceContext()
    h = ctx.enqueue_create_host_buffer(1024, dtype="float32")
    h.enqueue_fill(1.5); ctx.synchronize()
    a = numpy.from_dlpack(h)                     # zero-copy view
    x = anydev.from_dlpack(torch.arange(10.0))   # anydev view of a tensor

See docs/embedding.md.
"""

from ._anydev import (  # noqa: F401
    BackendInfo,
    BackendUnavailableError,
    Buffer,
    DeviceBuffer,
    DeviceContext,
    DeviceError,
    DeviceEvent,
    DeviceStream,
    Error,
    HostBuffer,
    InternalError,
    InvalidArgumentError,
    InvalidStateError,
    MemoryInfo,
    OutOfMemoryError,
    OutOfRangeError,
    UnsupportedError,
    __version__,
    backends,
    from_dlpack,
)
from ._logging import TRACE, log_level, set_log_handler, set_log_level  # noqa: F401

# DLPack device types (DLDeviceType), as __dlpack_device__ reports them.
kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLOpenCL = 4
kDLROCM = 10
kDLROCMHost = 11


class ShapedView:
    """A buffer seen with a shape, for DLPack consumers: numpy.from_dlpack(
    buf.shaped((4, 256))) gives a 4 x 256 array over the same memory. Holds a
    reference to the buffer."""

    def __init__(self, buffer, shape):
        self.buffer = buffer
        self.shape = tuple(int(n) for n in shape)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self.buffer.__dlpack__(stream=stream, max_version=max_version,
                                      dl_device=dl_device, copy=copy, shape=self.shape)

    def __dlpack_device__(self):
        return self.buffer.__dlpack_device__()

    def __repr__(self):
        return f"ShapedView({self.buffer!r}, shape={self.shape})"


def _shaped(self, shape):
    """This buffer with a row-major shape, for DLPack consumers."""
    return ShapedView(self, shape)


Buffer.shaped = _shaped

__all__ = [name for name in dir() if not name.startswith("_")]
