# SPDX-License-Identifier: Apache-2.0
"""What the child processes of test_sharing.py run (a module of its own so
that a spawned child imports anydev and NumPy, not pytest). Each reports
through `results` and never raises past it: the parent checks the report."""
import os
import traceback

import numpy

import anydev


def pattern(n, salt):
    return (numpy.arange(n, dtype=numpy.uint32) * 2654435761 + salt).astype(numpy.uint32)


def _report(results, fn):
    try:
        results.put(("ok", fn()))
    except BaseException:  # the parent shows it
        results.put(("error", traceback.format_exc()))


def check_and_overwrite(buf, results, salt):
    """Checks buf holds pattern(salt), then writes pattern(salt + 1) through
    NumPy's DLPack view (no copy: its address is the buffer's)."""
    def run():
        view = numpy.from_dlpack(buf)
        seen = {"type": type(buf).__name__, "dtype": buf.dtype, "size": len(buf),
                "pid": os.getpid(), "same_address": view.ctypes.data == buf.unsafe_ptr(),
                "exact": bool(numpy.array_equal(view, pattern(len(buf), salt)))}
        numpy.asarray(buf)[:] = pattern(len(buf), salt + 1)
        seen["written_seen_by_dlpack_view"] = int(view[-1]) == int(pattern(len(buf), salt + 1)[-1])
        return seen
    _report(results, run)


def consumer_from_queue(queue, results, salt):
    check_and_overwrite(queue.get(timeout=30), results, salt)


def consumer_of_arguments(buf, event, results, salt):
    """A buffer and a recorded event passed as Process arguments: the event
    must be usable here (synchronize, then record it for the parent)."""
    def run():
        event.synchronize()
        complete = event.is_complete()
        buf.context().stream().record_event(event)
        return complete
    _report(results, run)
    check_and_overwrite(buf, results, salt)


def device_consumer(queue, results, salt):
    def run():
        buf = queue.get(timeout=30)
        out = numpy.empty(len(buf), dtype=numpy.uint32)
        buf.enqueue_copy_to(out)
        buf.enqueue_copy_from(pattern(len(buf), salt + 1))
        buf.context().synchronize()
        return {"type": type(buf).__name__, "size": len(buf),
                "exact": bool(numpy.array_equal(out, pattern(len(buf), salt)))}
    _report(results, run)


def producer(queue, acks, results, n, salt, kind):
    """Makes a shareable buffer of pattern(salt) and sends it; once the
    parent acknowledges, checks the parent's pattern(salt + 1)."""
    def run():
        ctx = anydev.DeviceContext(0, api="cpu")
        if kind == "host":
            buf = ctx.create_shareable_host_buffer(n, dtype="uint32")
        else:
            buf = ctx.create_shareable_buffer(n, dtype="uint32")
        buf.enqueue_copy_from(pattern(n, salt))
        queue.put(buf)
        acks.get(timeout=30)
        out = numpy.empty(n, dtype=numpy.uint32)
        buf.enqueue_copy_to(out)
        return {"parent_write_seen": bool(numpy.array_equal(out, pattern(n, salt + 1)))}
    _report(results, run)


def event_producer(queue, acks, results, n, rounds):
    """Fills a shareable buffer `rounds` times (the last with `rounds`) on
    its stream, records a shareable event after them and sends both without
    waiting: only the event orders the consumer's copy after the fills."""
    def run():
        ctx = anydev.DeviceContext(0, api="cpu")
        buf = ctx.create_shareable_host_buffer(n, dtype="uint32")
        event = ctx.create_shareable_event()
        ctx.synchronize()
        for value in range(1, rounds + 1):
            ctx.enqueue_memset(buf, value)
        ctx.stream().record_event(event)
        queue.put((buf, event))
        acks.get(timeout=30)
        ctx.synchronize()
        return {"sent": True}
    _report(results, run)
