# SPDX-License-Identifier: Apache-2.0
"""Stream capture: `with ctx.capture(graph):` records the copies and fills
enqueued on the context instead of running them; replays give the exact
bytes; synchronize and host-pointer copies during a capture, capturing
twice, ending without a capture and enqueueing from another thread are
InvalidStateError and change nothing."""
import struct
import threading

import pytest

import anydev


def _contents(buf):
    out = bytearray(buf.size_bytes())
    buf.enqueue_copy_to(out)  # synchronous
    return bytes(out)


def test_captured_work_runs_only_on_replay(ctx):
    src = ctx.enqueue_create_host_buffer(100, "uint32")
    mid = ctx.enqueue_create_buffer(100, "uint32")
    dst = ctx.enqueue_create_host_buffer(100, "uint32")
    ctx.enqueue_memset(dst, 7)
    ctx.synchronize()
    graph = anydev.DeviceGraph(ctx)
    with ctx.capture(graph):
        assert ctx.is_capturing
        ctx.enqueue_memset(dst, 0)
        ctx.enqueue_copy(mid, src)
        ctx.enqueue_copy(dst, mid)
    assert not ctx.is_capturing
    assert graph.node_count == 3
    assert _contents(dst) == struct.pack("<I", 7) * 100
    for seed in range(3):
        values = [(i * 2654435761 + seed) % 4294967296 for i in range(100)]
        for i, v in enumerate(values):
            src[i] = v
        graph.replay()
        ctx.synchronize()
        assert _contents(dst) == struct.pack("<100I", *values)


def test_work_on_the_capturing_stream_is_refused(ctx):
    buf = ctx.enqueue_create_buffer(16, "uint8")
    ctx.enqueue_memset(buf, 5)
    ctx.synchronize()
    graph = anydev.DeviceGraph(ctx)
    with ctx.capture(graph):
        with pytest.raises(anydev.InvalidStateError, match="anydev_context_synchronize.*capturing"):
            ctx.synchronize()
        with pytest.raises(anydev.InvalidStateError, match="host pointer cannot be captured"):
            buf.enqueue_copy_from(bytes(16))
        with pytest.raises(anydev.InvalidStateError, match="already capturing"):
            ctx.begin_capture(anydev.DeviceGraph(ctx))
        errors = []

        def other_thread():
            try:
                ctx.enqueue_memset(buf, 9)
            except anydev.InvalidStateError as e:
                errors.append(str(e))

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert len(errors) == 1 and "another thread" in errors[0]
        assert graph.node_count == 0
    with pytest.raises(anydev.InvalidStateError, match="not capturing"):
        ctx.end_capture()
    assert _contents(buf) == bytes([5]) * 16


def test_explicit_begin_and_end(ctx):
    buf = ctx.enqueue_create_buffer(8, "int16")
    graph = anydev.DeviceGraph(ctx)
    ctx.begin_capture(graph)
    ctx.enqueue_memset(buf, -2)
    ctx.end_capture()
    graph.replay()
    ctx.synchronize()
    assert _contents(buf) == struct.pack("<h", -2) * 8
    with pytest.raises(anydev.InvalidStateError, match="already instantiated"):
        ctx.begin_capture(graph)


def test_an_exception_in_the_block_ends_the_capture(ctx):
    graph = anydev.DeviceGraph(ctx)
    with pytest.raises(KeyError):
        with ctx.capture(graph):
            raise KeyError("inside")
    assert not ctx.is_capturing
