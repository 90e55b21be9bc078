# SPDX-License-Identifier: Apache-2.0
"""Timed events, execution_time and stream priorities from Python
(docs/python.md, "Timing and priorities"): what they return and refuse.
No timing thresholds: times are only checked to be finite, non-negative
numbers whose sign flips with the order of the events."""
import math

import pytest

import anydev

WORDS = 1 << 20


def test_events_keep_their_flags(ctx):
    assert not ctx.create_event().timing
    timed = ctx.create_event(timing=True)
    assert timed.timing and not timed.blocking_sync
    both = ctx.create_event(timing=True, blocking_sync=True)
    assert both.timing and both.blocking_sync


def test_elapsed_time_of_recorded_work(ctx):
    start = ctx.create_event(timing=True)
    end = ctx.create_event(timing=True)
    host = ctx.enqueue_create_host_buffer(WORDS, "uint32")
    ctx.stream().record_event(start)
    ctx.enqueue_memset(host, 7)
    ctx.stream().record_event(end)
    end.synchronize()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and math.isfinite(ms) and ms >= 0.0
    assert end.elapsed_time(start) == pytest.approx(-ms)
    assert host[WORDS - 1] == 7


def test_elapsed_time_refusals(ctx):
    plain = ctx.create_event()
    timed = ctx.create_event(timing=True)
    never = ctx.create_event(timing=True)
    ctx.stream().record_event(plain)
    ctx.stream().record_event(timed)
    ctx.synchronize()
    with pytest.raises(anydev.InvalidArgumentError, match="without ANYDEV_EVENT_TIMING"):
        plain.elapsed_time(timed)
    with pytest.raises(anydev.InvalidStateError, match="never recorded"):
        timed.elapsed_time(never)


def test_not_ready_is_its_own_error_class():
    assert issubclass(anydev.NotReadyError, anydev.Error)


def test_execution_time_calls_fn_per_iteration(ctx):
    host = ctx.enqueue_create_host_buffer(WORDS, "uint32")
    seen = []
    ns = ctx.execution_time(lambda c: (seen.append(c), ctx.enqueue_memset(host, 3)), 4)
    assert isinstance(ns, int) and ns >= 0
    assert len(seen) == 4 and all(c is ctx for c in seen)
    indices = []
    ns = ctx.execution_time_iter(lambda c, i: (indices.append(i), ctx.enqueue_memset(host, i)), 3)
    assert ns >= 0 and indices == [0, 1, 2]
    assert host[0] == 2, "execution_time waits for the end of the work"


def test_execution_time_passes_exceptions_and_refuses_zero(ctx):
    def boom(c):
        raise KeyError("from the timed function")
    with pytest.raises(KeyError):
        ctx.execution_time(boom, 2)
    with pytest.raises(anydev.InvalidArgumentError, match="iterations is 0"):
        ctx.execution_time(lambda c: None, 0)


def test_stream_priorities_clamp_into_the_range(ctx):
    least, greatest = ctx.stream_priority_range()
    assert least == 0 and greatest <= 0
    assert ctx.create_stream().priority == 0
    assert ctx.create_stream(priority=greatest).priority == greatest
    assert ctx.create_stream(greatest - 50).priority == greatest
    assert ctx.create_stream(50).priority == least
    with ctx.create_stream(greatest) as high:
        with ctx.with_stream(high) as on_high:
            host = on_high.enqueue_create_host_buffer(16, "uint32")
            on_high.enqueue_memset(host, 9)
    assert host[15] == 9
