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

Errors are anydev.Error subclasses carrying .status and .code;
OutOfRangeError is also an IndexError, InvalidArgumentError a ValueError.
DeviceContext and DeviceStream are context managers that synchronize on
exit, and DeviceBuffer.map_to_host() one that copies back on exit.
`python -m anydev` prints the system report. See docs/python.md.
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
        """The buffer's capsule with this view's shape (see Buffer.__dlpack__)."""
        return self.buffer.__dlpack__(stream=stream, max_version=max_version,
                                      dl_device=dl_device, copy=copy, shape=self.shape)

    def __dlpack_device__(self):
        """The buffer's (DLPack device type, device id)."""
        return self.buffer.__dlpack_device__()

    def __repr__(self):
        return f"ShapedView({self.buffer!r}, shape={self.shape})"


def _shaped(self, shape):
    """This buffer with a row-major shape, for DLPack consumers."""
    return ShapedView(self, shape)


Buffer.shaped = _shaped


class HostMapping:
    """A host copy of a DeviceBuffer (DeviceBuffer.map_to_host()), as the C++
    HostMapping: on creation the buffer is copied into a new HostBuffer on its
    context and synchronized; unmap() -- or leaving the with-block -- copies
    the host copy back and synchronizes, once. Owns the host copy and a
    reference to the device buffer; not for concurrent use.

        with d.map_to_host() as h:   # h is a HostBuffer
            h[0] = 1.0
        # d[0] is 1.0 here
    """

    def __init__(self, device_buffer):
        ctx = device_buffer.context()
        host = ctx.enqueue_create_host_buffer(len(device_buffer), dtype=device_buffer.dtype)
        host.enqueue_copy_from(device_buffer)
        ctx.synchronize()
        self._device = device_buffer
        self._host = host

    @property
    def host(self):
        """The HostBuffer copy; InvalidStateError after unmap()."""
        if self._host is None:
            raise InvalidStateError("HostMapping.host: the mapping is already unmapped")
        return self._host

    def unmap(self):
        """Copies the host copy back into the device buffer and synchronizes;
        then drops the host copy. InvalidStateError when already unmapped."""
        host = self.host
        self._host = None
        self._device.enqueue_copy_from(host)
        self._device.context().synchronize()

    def __enter__(self):
        """The HostBuffer copy."""
        return self.host

    def __exit__(self, exc_type, exc, traceback):
        """unmap(), unless already unmapped; does not suppress exceptions."""
        if self._host is not None:
            self.unmap()
        return False

    def __repr__(self):
        state = "unmapped" if self._host is None else f"{len(self._host)} elements"
        return f"HostMapping({self._device.dtype}, {state})"


def _map_to_host(self):
    """A HostMapping of this buffer: `with d.map_to_host() as h:` gives a
    HostBuffer copy that is written back when the block ends."""
    return HostMapping(self)


DeviceBuffer.map_to_host = _map_to_host

__all__ = [name for name in dir() if not name.startswith("_")]
