# SPDX-License-Identifier: Apache-2.0
"""The second process of test_comm.py: a communicator on the cpu backend
driven by lines on stdin, answering on the pipe whose write end is REPLY_FD
(one line each, flushed; stdout is left to UCX's log).

    python comm_peer.py SCENARIO REPLY_FD

It prints "address HEX", reads "address HEX" (the test's) and connects, runs
SCENARIO, then waits for "bye" and exits. Every check it makes is reported as
a line ("exact ..." or "WRONG ..."); the test asserts on them. The test kills
it if it is still running at the test's limit."""
import os
import sys

import numpy

import anydev


def pattern(n, seed):
    """n bytes that differ with the position and the seed."""
    i = numpy.arange(n, dtype=numpy.uint64)
    return ((i * 13 + (i >> 12) + seed * 71) & 0xFF).astype(numpy.uint8)


REPLIES = None  # the reply pipe, opened by main()


def say(*words):
    print(*words, file=REPLIES, flush=True)


def read(word):
    """The arguments of the next line, which must start with `word`."""
    parts = sys.stdin.readline().split()
    if not parts or parts[0] != word:
        raise SystemExit(f"comm_peer: expected '{word}', got {parts!r}")
    return parts[1:]


def verdict(got, expected, what):
    wrong = int(numpy.count_nonzero(got != expected))
    say("exact" if wrong == 0 else "WRONG", what, wrong)


def requests(word):
    """(N, TAG) for each line "word N TAG", until a bare "word"."""
    while True:
        args = read(word)
        if not args:
            return
        yield int(args[0]), int(args[1])


def echo(ctx, comm, parent):
    """For each "echo N TAG": receives N bytes with TAG, checks them against
    pattern(N, TAG), and sends them back with TAG + 1000."""
    for n, tag in requests("echo"):
        buf = ctx.enqueue_create_host_buffer(n, dtype="uint8")
        comm.enqueue_recv(buf, parent, tag)
        ctx.synchronize()
        verdict(numpy.from_dlpack(buf), pattern(n, tag), f"received {n}")
        comm.enqueue_send(buf, parent, tag + 1000)
        ctx.synchronize()


def send(ctx, comm, parent):
    """For each "send N TAG": sends pattern(N, TAG) with TAG."""
    for n, tag in requests("send"):
        buf = ctx.enqueue_create_host_buffer(n, dtype="uint8")
        buf.enqueue_copy_from(pattern(n, tag))
        comm.enqueue_send(buf, parent, tag)
        ctx.synchronize()


def region(ctx, comm, parent):
    """Exposes REGION_BYTES of pattern(REGION_BYTES, 5), says its key, and
    receives (tag 1) the test's note of what it put: three uint32, OFFSET,
    N and SEED; then checks that pattern(N, SEED) is there. The receive is
    in flight meanwhile, as a peer waiting for such a note would have it."""
    buf = ctx.enqueue_create_host_buffer(REGION_BYTES, dtype="uint8")
    buf.enqueue_copy_from(pattern(REGION_BYTES, 5))
    ctx.synchronize()
    note = ctx.enqueue_create_host_buffer(3, dtype="uint32")
    with comm.expose(buf) as exposed:
        comm.enqueue_recv(note, parent, 1)
        say("key", exposed.key.hex())
        ctx.synchronize()
        offset, n, seed = (int(v) for v in numpy.from_dlpack(note))
        expected = pattern(REGION_BYTES, 5)
        expected[offset:offset + n] = pattern(n, seed)
        verdict(numpy.from_dlpack(buf), expected, "region")


def allocated(ctx, comm, parent):
    """As region, into REGION_BYTES that UCX allocated (expose_new), filled
    and read through the buffer protocol."""
    buf, exposed = comm.expose_new(REGION_BYTES, "uint8")
    memoryview(buf)[:] = pattern(REGION_BYTES, 5).tobytes()
    note = ctx.enqueue_create_host_buffer(3, dtype="uint32")
    with exposed:
        comm.enqueue_recv(note, parent, 1)
        say("key", exposed.key.hex())
        ctx.synchronize()
        offset, n, seed = (int(v) for v in numpy.from_dlpack(note))
        expected = pattern(REGION_BYTES, 5)
        expected[offset:offset + n] = pattern(n, seed)
        verdict(numpy.frombuffer(memoryview(buf), dtype=numpy.uint8), expected, "region")


def idle(ctx, comm, parent):
    """Connected, sends and receives nothing."""


REGION_BYTES = 1 << 16
SCENARIOS = {"echo": echo, "send": send, "region": region, "allocated": allocated, "idle": idle}


def main():
    global REPLIES
    scenario = SCENARIOS[sys.argv[1]]
    REPLIES = os.fdopen(int(sys.argv[2]), "w")
    ctx = anydev.DeviceContext(0, api="cpu")
    with ctx.create_communicator() as comm:
        say("address", comm.address.hex())
        parent = comm.connect(bytes.fromhex(read("address")[0]))
        scenario(ctx, comm, parent)
        read("bye")
    say("closed")


if __name__ == "__main__":
    main()
