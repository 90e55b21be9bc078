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

from typing import Any, Iterable, Literal, Optional, Tuple

# `X as X`: re-exported names, which type checkers (mypy --strict) see as
# the package's own; __all__ below lists them too.
from ._anydev import BackendInfo as BackendInfo
from ._anydev import BackendUnavailableError as BackendUnavailableError
from ._anydev import Buffer as Buffer
from ._anydev import Communicator as Communicator
from ._anydev import DeviceBuffer as DeviceBuffer
from ._anydev import DeviceContext as DeviceContext
from ._anydev import DeviceError as DeviceError
from ._anydev import DeviceEvent as DeviceEvent
from ._anydev import DeviceGraph as DeviceGraph
from ._anydev import StreamCapture as StreamCapture
from ._anydev import DeviceStream as DeviceStream
from ._anydev import Error as Error
from ._anydev import ExposedRegion as ExposedRegion
from ._anydev import GraphNode as GraphNode
from ._anydev import HostBuffer as HostBuffer
from ._anydev import InternalError as InternalError
from ._anydev import NotReadyError as NotReadyError
from ._anydev import InvalidArgumentError as InvalidArgumentError
from ._anydev import InvalidStateError as InvalidStateError
from ._anydev import MemoryInfo as MemoryInfo
from ._anydev import OutOfMemoryError as OutOfMemoryError
from ._anydev import OutOfRangeError as OutOfRangeError
from ._anydev import RemoteRegion as RemoteRegion
from ._anydev import ShareHandle as ShareHandle
from ._anydev import UnsupportedError as UnsupportedError
from ._anydev import __version__ as __version__
from ._anydev import backends as backends
from ._anydev import from_dlpack as from_dlpack
from ._logging import TRACE as TRACE
from ._logging import log_level as log_level
from ._logging import set_log_handler as set_log_handler
from ._logging import set_log_level as set_log_level
from ._sharing import _install as _install_sharing

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

    def __init__(self, buffer: Buffer, shape: Iterable[int]) -> None:
        self.buffer = buffer
        self.shape: Tuple[int, ...] = tuple(int(n) for n in shape)

    def __dlpack__(self, *, stream: Optional[int] = None,
                   max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None,
                   copy: Optional[bool] = None) -> Any:
        """The buffer's capsule with this view's shape (see Buffer.__dlpack__)."""
        return self.buffer.__dlpack__(stream=stream, max_version=max_version,
                                      dl_device=dl_device, copy=copy, shape=self.shape)

    def __dlpack_device__(self) -> Tuple[int, int]:
        """The buffer's (DLPack device type, device id)."""
        return self.buffer.__dlpack_device__()

    def __repr__(self) -> str:
        return f"ShapedView({self.buffer!r}, shape={self.shape})"


def _shaped(self: Buffer, shape: Iterable[int]) -> ShapedView:
    """This buffer with a row-major shape, for DLPack consumers."""
    return ShapedView(self, shape)


# setattr: type checkers see Buffer.shaped in the stub (_anydev.pyi).
setattr(Buffer, "shaped", _shaped)


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

    def __init__(self, device_buffer: DeviceBuffer) -> None:
        ctx = device_buffer.context()
        host = ctx.enqueue_create_host_buffer(len(device_buffer), dtype=device_buffer.dtype)
        host.enqueue_copy_from(device_buffer)
        ctx.synchronize()
        self._device = device_buffer
        self._host: Optional[HostBuffer] = host

    @property
    def host(self) -> HostBuffer:
        """The HostBuffer copy; InvalidStateError after unmap()."""
        if self._host is None:
            raise InvalidStateError("HostMapping.host: the mapping is already unmapped")
        return self._host

    def unmap(self) -> None:
        """Copies the host copy back into the device buffer and synchronizes;
        then drops the host copy. InvalidStateError when already unmapped."""
        host = self.host
        self._host = None
        self._device.enqueue_copy_from(host)
        self._device.context().synchronize()

    def __enter__(self) -> HostBuffer:
        """The HostBuffer copy."""
        return self.host

    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> Literal[False]:
        """unmap(), unless already unmapped; does not suppress exceptions."""
        if self._host is not None:
            self.unmap()
        return False

    def __repr__(self) -> str:
        state = "unmapped" if self._host is None else f"{len(self._host)} elements"
        return f"HostMapping({self._device.dtype}, {state})"


def _map_to_host(self: DeviceBuffer) -> HostMapping:
    """A HostMapping of this buffer: `with d.map_to_host() as h:` gives a
    HostBuffer copy that is written back when the block ends."""
    return HostMapping(self)


setattr(DeviceBuffer, "map_to_host", _map_to_host)

# multiprocessing reducers and the fork() handlers (anydev/_sharing.py).
_install_sharing()

# Spelled out (not computed) so that type checkers can read it.
__all__ = [
    "BackendInfo", "BackendUnavailableError", "Buffer", "Communicator", "DeviceBuffer",
    "DeviceContext", "DeviceError", "DeviceEvent", "DeviceGraph", "DeviceStream", "Error",
    "ExposedRegion", "GraphNode",
    "HostBuffer", "HostMapping", "InternalError", "InvalidArgumentError", "InvalidStateError",
    "MemoryInfo", "NotReadyError",
    "OutOfMemoryError", "OutOfRangeError", "RemoteRegion", "ShapedView", "ShareHandle",
    "StreamCapture", "TRACE", "UnsupportedError",
    "backends", "from_dlpack", "kDLCPU", "kDLCUDA", "kDLCUDAHost", "kDLOpenCL",
    "kDLROCM", "kDLROCMHost", "log_level", "set_log_handler", "set_log_level",
]
