# SPDX-License-Identifier: Apache-2.0
"""The anydev package on the level_zero backend, through Debian's real Level
Zero loader and the emulated driver (ctest python.level_zero_emulator sets
ZE_ENABLE_ALT_DRIVERS and the validation layer): device and host buffers,
fills, copies through NumPy arrays, DLPack devices (kDLOneAPI for device
memory), streams and events."""
import pytest

import anydev

numpy = pytest.importorskip("numpy", reason="NumPy is not installed (Debian: python3-numpy)")

kDLOneAPI = 14


@pytest.fixture
def ctx():
    return anydev.DeviceContext(0, api="level_zero")


def test_the_emulated_device_is_level_zero(ctx):
    assert ctx.api() == "level_zero"
    infos = {b.name: b for b in anydev.backends()}
    assert infos["level_zero"].available


def test_fill_and_copy_round_trip_through_numpy(ctx):
    d = ctx.enqueue_create_buffer(1000, dtype="float32")
    d.enqueue_fill(2.5)
    out = numpy.zeros(1000, dtype=numpy.float32)
    d.enqueue_copy_to(out)
    ctx.synchronize()
    assert (out == 2.5).all()
    src = numpy.arange(1000, dtype=numpy.float32)
    d.enqueue_copy_from(src)
    d.enqueue_copy_to(out)
    ctx.synchronize()
    assert (out == src).all()


def test_wide_fills_keep_exact_bits(ctx):
    d = ctx.enqueue_create_buffer(64, dtype="complex128")  # 16-byte elements
    d.enqueue_fill(complex(1.25, -3.5))
    out = numpy.zeros(64, dtype=numpy.complex128)
    d.enqueue_copy_to(out)
    ctx.synchronize()
    assert (out == complex(1.25, -3.5)).all()


def test_device_memory_is_one_api_and_host_memory_is_cpu(ctx):
    d = ctx.enqueue_create_buffer(8, dtype="int32")
    h = ctx.enqueue_create_host_buffer(8, dtype="int32")
    assert d.__dlpack_device__() == (kDLOneAPI, 0)
    assert h.__dlpack_device__() == (anydev.kDLCPU, 0)
    h.enqueue_fill(7)
    assert numpy.from_dlpack(h).tolist() == [7] * 8


def test_two_streams_ordered_by_an_event(ctx):
    side = ctx.with_stream(ctx.create_stream())
    d = side.enqueue_create_buffer(1 << 16, dtype="uint8")
    d.enqueue_fill(3)
    event = side.create_event()
    side.stream().record_event(event)
    ctx.stream().enqueue_wait_for(event)
    out = numpy.zeros(1 << 16, dtype=numpy.uint8)
    d.enqueue_copy_to(out)  # on d's context: side's stream
    side.synchronize()
    assert (out == 3).all()
    event.synchronize()
    assert event.is_complete()
