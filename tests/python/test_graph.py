# SPDX-License-Identifier: Apache-2.0
"""DeviceGraph: copies and fills recorded once and replayed; exact bytes
after each replay with the source changed between replays, dependencies,
errors for bad input, buffers kept alive by the graph, replays from two
threads."""
import ctypes
import struct
import threading

import pytest

import anydev


def _contents(buf):
    out = bytearray(buf.size_bytes())
    buf.enqueue_copy_to(out)  # synchronous
    return bytes(out)


def _packed(fmt, values):
    return b"".join(struct.pack("<" + fmt, *(v if isinstance(v, tuple) else (v,)))
                    for v in values)


def _values(n, seed):
    return [(i * 2654435761 + seed) % 4294967296 for i in range(n)]


def test_replay_rereads_the_source(ctx):
    src = ctx.enqueue_create_host_buffer(257, "uint32")
    dst = ctx.enqueue_create_buffer(257, "uint32")
    graph = anydev.DeviceGraph(ctx)
    graph.add_copy(dst, src)
    assert graph.node_count == 1
    for seed in range(4):
        values = _values(257, seed)
        for i, v in enumerate(values):
            src[i] = v
        graph.replay()
        ctx.synchronize()
        assert _contents(dst) == _packed("I", values)


def test_dependencies_fill_then_copy_then_join(ctx):
    x = ctx.enqueue_create_buffer(64, "int16")
    y = ctx.enqueue_create_buffer(64, "int16")
    z = ctx.enqueue_create_host_buffer(64, "int16")
    graph = anydev.DeviceGraph(ctx)
    one = graph.add_memset(x, -3)
    to_y = graph.add_copy(y, x, dependencies=[one])
    two = graph.add_memset(x, 9, dependencies=[to_y])
    join = graph.add_empty(dependencies=[to_y, two])
    graph.add_copy(z, x, dependencies=[join])
    for _ in range(3):
        z.enqueue_fill(0)
        graph.replay()
        ctx.synchronize()
        assert _contents(y) == _packed("h", [-3] * 64)
        assert _contents(z) == _packed("h", [9] * 64)


def test_sub_buffer_fill_pattern_widths(ctx):
    for dtype, fmt, value, packed in [("uint8", "B", 0xA5, 0xA5), ("uint16", "H", 0xABCD, 0xABCD),
                                      ("float32", "f", 1.5, 1.5), ("float64", "d", -2.25, -2.25),
                                      ("complex128", "dd", complex(1, -2), (1.0, -2.0))]:
        buf = ctx.enqueue_create_buffer(16, dtype)
        buf.enqueue_fill(0)
        graph = anydev.DeviceGraph(ctx)
        graph.add_memset(buf.create_sub_buffer(4, 8), value)
        graph.replay()
        ctx.synchronize()
        zero = (0, 0) if fmt == "dd" else 0
        expected = _packed(fmt, [zero] * 4 + [packed] * 8 + [zero] * 4)
        assert _contents(buf) == expected, dtype


def test_errors_name_the_operation_and_values(ctx):
    big = ctx.enqueue_create_buffer(64, "uint32")
    small = ctx.enqueue_create_buffer(16, "uint32")
    graph = anydev.DeviceGraph(ctx)
    with pytest.raises(anydev.OutOfRangeError, match="anydev_graph_add_copy"):
        graph.add_copy(big, small)
    with pytest.raises(anydev.InvalidArgumentError, match="overlap"):
        graph.add_copy(big.create_sub_buffer(8, 32), big.create_sub_buffer(0, 32))
    with pytest.raises(anydev.InvalidArgumentError, match="dtypes must match"):
        graph.add_copy(big, ctx.enqueue_create_buffer(64, "float32"))
    other = anydev.DeviceGraph(ctx)
    with pytest.raises(anydev.InvalidArgumentError, match="not a node of this graph"):
        graph.add_empty(dependencies=[other.add_empty()])
    assert graph.node_count == 0
    graph.add_memset(big, 1)
    graph.replay()
    with pytest.raises(anydev.InvalidStateError, match="already instantiated"):
        graph.add_empty()


def test_graph_keeps_its_buffers_alive(ctx):
    graph = anydev.DeviceGraph(ctx)
    result = ctx.enqueue_create_host_buffer(32, "uint32")
    src = ctx.enqueue_create_buffer(32, "uint32")
    src.enqueue_fill(77)
    graph.add_copy(result, src)
    address = result.unsafe_ptr()
    del src
    del result  # every handle gone: only the graph holds the memory
    graph.replay()
    ctx.synchronize()
    assert ctypes.string_at(address, 128) == _packed("I", [77] * 32)


def test_replays_from_two_threads_on_two_streams(ctx):
    src = ctx.enqueue_create_buffer(1024, "uint32")
    src.enqueue_copy_from(bytes(range(256)) * 16)
    dst = ctx.enqueue_create_buffer(1024, "uint32")
    graph = anydev.DeviceGraph(ctx)
    graph.add_copy(dst, src)
    ctx.synchronize()
    errors = []

    def run():
        try:
            mine = ctx.with_stream(ctx.create_stream())
            for _ in range(50):
                graph.replay(mine)
            mine.synchronize()
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ctx.synchronize()
    assert _contents(dst) == _contents(src) == bytes(range(256)) * 16
