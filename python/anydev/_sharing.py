# SPDX-License-Identifier: Apache-2.0
"""Shareable buffers and events through multiprocessing (docs/python.md,
"Sharing between processes"), the way torch.multiprocessing sends tensors.

- Pickled by multiprocessing (a Queue, a Pipe, a spawn/forkserver Process
  argument): ForkingPickler reduces the object to its ShareHandle bytes, its
  backend and device, and its fds wrapped in multiprocessing.reduction.DupFd,
  so the fds travel over SCM_RIGHTS (the resource sharer, or the spawned
  child's inherited fds). The receiver imports into a context of the same
  backend and device, one per process.
- Inherited through fork() (a fork Process argument, a global): handles made
  before fork() are invalid_state in the child, so every live shareable
  object is exported just before fork() and re-opened in the child on the
  same Python object (after_in_child), sharing the parent's memory.

Plain pickle.dumps still refuses buffers: bytes alone would not carry the fds.
"""
import os
import weakref
from multiprocessing import context as _mp_context
from multiprocessing import reduction
from typing import Any, Callable, Dict, List, Tuple, Union

from ._anydev import (Buffer, DeviceBuffer, DeviceContext, DeviceEvent, Error, HostBuffer,
                      ShareHandle, _set_share_tracker)

# One context per (backend, device) in this process for the imports; a
# fork() child starts afresh (the parent's are invalid_state there).
_contexts: Dict[Tuple[str, int], DeviceContext] = {}


def _context(api: str, device: int) -> DeviceContext:
    ctx = _contexts.get((api, device))
    if ctx is None:
        ctx = _contexts[(api, device)] = DeviceContext(device, api=api)
    return ctx


def _wrap_fds(handle: ShareHandle, owned: bool) -> Tuple[Any, ...]:
    """The handle's fds as DupFd objects; closes an owned handle once that
    is safe."""
    wrapped = tuple(reduction.DupFd(fd) for fd in handle.fds)
    if owned:
        popen = _mp_context.get_spawning_popen()
        if popen is None:
            handle.close()  # the resource sharer holds its own dup of each fd
        else:
            # A spawning Process passes these very fds when it starts: keep
            # them open until its Popen object goes.
            weakref.finalize(popen, handle.close)
    return wrapped


def _handle_of(data: bytes, fds: Tuple[Any, ...]) -> ShareHandle:
    return ShareHandle.from_bytes(data, [int(fd.detach()) for fd in fds])


def _rebuild_buffer(api: str, device: int, host: bool, data: bytes,
                    fds: Tuple[Any, ...]) -> Buffer:
    handle = _handle_of(data, fds)
    try:
        ctx = _context(api, device)
        return ctx.import_host_buffer(handle) if host else ctx.import_buffer(handle)
    finally:
        handle.close()


def _reduce_buffer(buf: Buffer) -> Tuple[Callable[..., Buffer], Tuple[Any, ...]]:
    handle = buf.export_handle()  # UnsupportedError for a buffer not created shareable
    ctx = buf.context()
    return _rebuild_buffer, (ctx.api(), ctx.id(), isinstance(buf, HostBuffer),
                             handle.to_bytes(), _wrap_fds(handle, owned=True))


def _event_owner(event: DeviceEvent) -> Tuple[str, int]:
    api = getattr(event, "_api", None)
    device = getattr(event, "_device", None)
    if api is None or device is None:
        raise Error("DeviceEvent: its backend and device are unknown (make it with "
                    "DeviceContext.create_shareable_event or import_event)")
    return str(api), int(device)


def _rebuild_event(api: str, device: int, data: bytes, fds: Tuple[Any, ...]) -> DeviceEvent:
    handle = _handle_of(data, fds)
    try:
        return _context(api, device).import_event(handle)
    finally:
        handle.close()


def _reduce_event(event: DeviceEvent) -> Tuple[Callable[..., DeviceEvent], Tuple[Any, ...]]:
    api, device = _event_owner(event)
    handle = event.export_handle()  # UnsupportedError for an event not created shareable
    return _rebuild_event, (api, device, handle.to_bytes(), _wrap_fds(handle, owned=True))


def _rebuild_handle(data: bytes, fds: Tuple[Any, ...]) -> ShareHandle:
    return _handle_of(data, fds)


def _reduce_handle(handle: ShareHandle) -> Tuple[Callable[..., ShareHandle], Tuple[Any, ...]]:
    # The caller keeps (and closes) its handle; the receiver gets its own fds.
    return _rebuild_handle, (handle.to_bytes(), _wrap_fds(handle, owned=False))


# ---- fork(): re-open inherited shareable objects in the child ----

Shareable = Union[Buffer, DeviceEvent]
_tracked: "weakref.WeakSet[Shareable]" = weakref.WeakSet()
_exported: List[Tuple[Shareable, str, int, ShareHandle]] = []


def _before_fork() -> None:
    for obj in list(_tracked):
        try:
            if isinstance(obj, Buffer):
                ctx = obj.context()
                api, device = ctx.api(), ctx.id()
            else:
                api, device = _event_owner(obj)
            _exported.append((obj, api, device, obj.export_handle()))
        except Error:
            pass  # taken or otherwise unusable: it stays invalid_state in the child


def _after_fork_in_parent() -> None:
    for _, _, _, handle in _exported:
        handle.close()
    _exported.clear()


def _after_fork_in_child() -> None:
    _contexts.clear()
    items = list(_exported)
    _exported.clear()
    for obj, api, device, handle in items:
        try:
            obj._reopen(_context(api, device), handle)
        except Error:
            pass  # left invalid_state, as any handle made before fork()
        finally:
            handle.close()


def _install() -> None:
    for cls in (Buffer, HostBuffer, DeviceBuffer):
        reduction.ForkingPickler.register(cls, _reduce_buffer)
    reduction.ForkingPickler.register(DeviceEvent, _reduce_event)
    reduction.ForkingPickler.register(ShareHandle, _reduce_handle)
    _set_share_tracker(_tracked.add)
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
