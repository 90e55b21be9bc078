# SPDX-License-Identifier: Apache-2.0
"""Transfers between two processes from Python (ctest python.comm;
docs/python.md "Transfers between processes", docs/distributed.md): the
test and a child (comm_peer.py, started with subprocess, no MPI) exchange
their communicators' addresses over pipes, then check exact
bytes of send/recv (1 B, odd sizes, 8 MiB; whole buffers and views at an
odd offset, the bytes around them untouched), put and get at odd offsets
(into an exposed buffer and into memory UCX allocated, expose_new),
expose_new's buffer and region and its refused sizes,
close() waiting for a transfer without holding the GIL, and the errors:
bad addresses, an unmatched receive with a short timeout, out-of-range
puts, closed objects, UCX missing. Every read from a child has
a deadline and every child still alive at the end of its test is killed."""
import os
import selectors
import subprocess
import sys
import threading

import pytest

import anydev

numpy = pytest.importorskip("numpy", reason="NumPy is not installed (Debian: python3-numpy)")
from comm_peer import REGION_BYTES, pattern  # noqa: E402  (needs NumPy)

pytestmark = pytest.mark.cpu_only(reason="the peer process runs on the cpu backend")

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT_S = 30  # any one wait for a child


def _ucx_missing():
    """Why communicators cannot be made here, else None."""
    try:
        anydev.Communicator(anydev.DeviceContext(0, api="cpu")).close()
    except anydev.BackendUnavailableError as error:
        return str(error)
    return None


UCX_MISSING = _ucx_missing()
needs_ucx = pytest.mark.skipif(UCX_MISSING is not None, reason=f"no UCX transport: {UCX_MISSING}")


class Peer:
    """A comm_peer.py child: lines in on its stdin, out on a pipe of their
    own (UCX logs to stdout), each read bounded by TIMEOUT_S."""

    def __init__(self, scenario):
        replies, child_end = os.pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "comm_peer.py"), scenario, str(child_end)],
                stdin=subprocess.PIPE, pass_fds=(child_end,), text=True, cwd=HERE)
        finally:
            os.close(child_end)
        self.replies = os.fdopen(replies, "r")
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.replies, selectors.EVENT_READ)

    def say(self, *words):
        self.process.stdin.write(" ".join(str(w) for w in words) + "\n")
        self.process.stdin.flush()

    def read(self, word):
        """The arguments of the child's next line, which must start with `word`."""
        if not self.selector.select(TIMEOUT_S):
            raise AssertionError(f"comm_peer.py said nothing for {TIMEOUT_S} s (expected '{word}')")
        parts = self.replies.readline().split()
        assert parts and parts[0] == word, f"comm_peer.py said {parts!r}, expected '{word}'"
        return parts[1:]

    def finish(self):
        """Lets the child close its communicator and exit; asserts it did."""
        self.say("bye")
        self.read("closed")
        assert self.process.wait(TIMEOUT_S) == 0

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.selector.close()
        self.process.stdin.close()
        self.replies.close()


@pytest.fixture
def cpu():
    return anydev.DeviceContext(0, api="cpu")


@pytest.fixture
def connect(cpu):
    """connect(scenario, timeout_ms=0) -> (communicator, peer index, Peer);
    the children are killed and the communicators closed after the test."""
    made = []

    def start(scenario, timeout_ms=0):
        comm = cpu.create_communicator(timeout_ms)
        child = Peer(scenario)
        made.append((comm, child))
        address = bytes.fromhex(child.read("address")[0])
        child.say("address", comm.address.hex())
        return comm, comm.connect(address), child

    yield start
    for comm, child in made:
        child.kill()
        comm.close()


def expect_exact(child, what):
    assert child.read("exact") == what.split() + ["0"]


# ---- send and receive ----

SIZES = [1, 3, 4097, 1_000_003, 8 << 20]
LAYOUTS = ["whole buffers", "views at odd offsets"]


@needs_ucx
@pytest.mark.parametrize("layout", LAYOUTS)
def test_send_and_receive_exact_bytes_both_ways(cpu, connect, layout):
    comm, peer, child = connect("echo")
    for tag, n in enumerate(SIZES):
        child.say("echo", n, tag)
        if layout == "whole buffers":
            src = cpu.enqueue_create_host_buffer(n, dtype="uint8")
            dst = cpu.enqueue_create_buffer(n, dtype="uint8")
            src_view, dst_view, before = src, dst, 0
        else:  # the sent view at offset 5, the received one at 7, guarded by 0xEE
            src = cpu.enqueue_create_host_buffer(n + 10, dtype="uint8")
            dst = cpu.enqueue_create_buffer(n + 14, dtype="uint8")
            src.enqueue_fill(0x11)
            dst.enqueue_fill(0xEE)
            src_view, dst_view, before = src.create_sub_buffer(5, n), dst.create_sub_buffer(7, n), 7
        src_view.enqueue_copy_from(pattern(n, tag))
        comm.enqueue_recv(dst_view, peer, tag + 1000)
        comm.enqueue_send(src_view, peer, tag)
        got = numpy.empty(len(dst), dtype=numpy.uint8)
        dst.enqueue_copy_to(got)  # stream-ordered after the receive
        cpu.synchronize()
        expect_exact(child, f"received {n}")
        assert numpy.array_equal(got[before:before + n], pattern(n, tag)), f"{n} bytes"
        assert (got[:before] == 0xEE).all() and (got[before + n:] == 0xEE).all()
    child.say("echo")
    child.finish()


# ---- put and get ----

@needs_ucx
@pytest.mark.parametrize("scenario", ["region", "allocated"])
def test_put_and_get_at_odd_offsets(cpu, connect, scenario):
    """Into a buffer the child exposed, or memory UCX allocated for it
    (expose_new)."""
    comm, peer, child = connect(scenario)
    with comm.import_region(peer, bytes.fromhex(child.read("key")[0])) as remote:
        got = cpu.enqueue_create_host_buffer(1000, dtype="uint8")
        comm.enqueue_get(got, remote, 13)
        cpu.synchronize()
        assert numpy.array_equal(numpy.from_dlpack(got), pattern(REGION_BYTES, 5)[13:1013])

        put = cpu.enqueue_create_buffer(777, dtype="uint8")
        put.enqueue_copy_from(pattern(777, 9))
        comm.enqueue_put(put, remote, 4099)
        cpu.synchronize()  # the bytes are in the child's memory now
        whole = cpu.enqueue_create_host_buffer(REGION_BYTES, dtype="uint8")
        comm.enqueue_get(whole, remote)
        cpu.synchronize()
        expected = pattern(REGION_BYTES, 5)
        expected[4099:4099 + 777] = pattern(777, 9)
        assert numpy.array_equal(numpy.from_dlpack(whole), expected)

        with pytest.raises(anydev.OutOfRangeError, match="anydev_comm_enqueue_put"):
            comm.enqueue_put(put, remote, REGION_BYTES - 776)
        with pytest.raises(anydev.OutOfRangeError, match="anydev_comm_enqueue_get"):
            comm.enqueue_get(whole, remote, 1)
        cpu.synchronize()  # nothing was enqueued
    note = cpu.enqueue_create_host_buffer(3, dtype="uint32")
    note.enqueue_copy_from(numpy.array([4099, 777, 9], dtype=numpy.uint32))
    comm.enqueue_send(note, peer, 1)  # the peer learns of the put by a message
    cpu.synchronize()
    expect_exact(child, "region")
    with pytest.raises(anydev.InvalidStateError, match="RemoteRegion.enqueue_put: .* closed"):
        comm.enqueue_put(put, remote, 0)
    child.finish()


@needs_ucx
def test_expose_new_is_a_host_buffer_and_a_region(cpu):
    with cpu.create_communicator() as comm:
        buf, region = comm.expose_new(1001, "float32")
        assert isinstance(buf, anydev.HostBuffer) and isinstance(region, anydev.ExposedRegion)
        assert len(buf) == 1001 and buf.dtype == "float32" and len(region.key) > 0
        buf.enqueue_fill(2.5)
        view = memoryview(buf)  # the buffer protocol, as any host buffer
        cpu.synchronize()
        assert (numpy.frombuffer(view, dtype=numpy.float32) == 2.5).all()
        view.release()
        region.close()  # the memory stays while the buffer lives
        copy = cpu.enqueue_create_host_buffer(1001, dtype="float32")
        buf.enqueue_copy_to(copy)
        cpu.synchronize()
        assert (numpy.from_dlpack(copy) == 2.5).all()
    buf.enqueue_fill(1.0)  # and while the communicator is closed
    cpu.synchronize()
    assert (numpy.from_dlpack(buf) == 1.0).all()


@needs_ucx
def test_expose_new_refuses_bad_sizes_allocating_nothing(cpu):
    with cpu.create_communicator() as comm:
        with pytest.raises(anydev.InvalidArgumentError, match="anydev_comm_expose_new: .*count is 0"):
            comm.expose_new(0)
        # Twice the machine's memory is refused before UCX allocates any.
        too_many = 2 * os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGESIZE")
        with pytest.raises(anydev.OutOfMemoryError, match=f"anydev_comm_expose_new: {too_many} bytes"):
            comm.expose_new(too_many, "uint8")
        with pytest.raises(TypeError):
            comm.expose_new(-1)
    with pytest.raises(anydev.InvalidStateError, match="Communicator.expose_new: .* closed"):
        comm.expose_new(1)


@needs_ucx
def test_a_key_that_is_not_one_is_refused(connect):
    comm, peer, child = connect("idle")
    with pytest.raises(anydev.InvalidArgumentError, match="anydev_comm_import"):
        comm.import_region(peer, b"not a key at all")
    with pytest.raises(TypeError, match="must be bytes-like"):
        comm.import_region(peer, "a str")
    child.finish()


# ---- errors ----

@needs_ucx
def test_bad_addresses_are_invalid_argument(cpu, connect):
    comm, peer, child = connect("idle")
    address = comm.address
    cases = {
        "garbage": b"\x01\x02garbage" * 8,
        "empty": b"",
        "truncated": address[: len(address) // 2],
        "its own": address,
    }
    for name, bad in cases.items():
        with pytest.raises(anydev.InvalidArgumentError, match="anydev_comm_connect"):
            comm.connect(bad)
            pytest.fail(f"the {name} address was accepted")
    with pytest.raises(TypeError, match="must be bytes-like"):
        comm.connect(42)
    assert comm.peer_count == 1  # nothing was connected
    child.finish()


@needs_ucx
def test_an_address_already_connected_is_refused(connect):
    comm, peer, child = connect("idle")
    other = Peer("idle")
    try:
        address = bytes.fromhex(other.read("address")[0])
        assert comm.connect(bytearray(address)) == peer + 1  # any bytes-like object
        with pytest.raises(anydev.InvalidArgumentError, match="anydev_comm_connect"):
            comm.connect(memoryview(address))
        assert comm.peer_count == 2
    finally:
        other.kill()
    child.finish()


@needs_ucx
def test_an_unmatched_receive_fails_its_synchronize(cpu, connect):
    comm, peer, child = connect("idle", timeout_ms=300)
    buf = cpu.enqueue_create_host_buffer(16, dtype="uint8")
    comm.enqueue_recv(buf, peer, 999)
    with pytest.raises(anydev.DeviceError, match="tag 999 from peer 0"):
        cpu.synchronize()
    cpu.synchronize()  # the error is returned once
    with pytest.raises(anydev.OutOfRangeError, match="anydev_comm_enqueue_send"):
        comm.enqueue_send(buf, 5, 0)  # no peer 5
    child.finish()


@needs_ucx
def test_close_waits_for_transfers_without_holding_the_gil(cpu, connect):
    """close() waits for a receive whose message another Python thread asks
    the child for meanwhile: that thread runs only if close() let go of the
    GIL; else the receive times out (and synchronize raises)."""
    comm, peer, child = connect("send", timeout_ms=TIMEOUT_S * 1000)
    buf = cpu.enqueue_create_host_buffer(16, dtype="uint8")
    comm.enqueue_recv(buf, peer, 7)
    closing = threading.Event()

    def ask_for_the_message():
        closing.wait(TIMEOUT_S)
        child.say("send", 16, 7)

    helper = threading.Thread(target=ask_for_the_message)
    helper.start()
    closing.set()
    comm.close()
    helper.join(TIMEOUT_S)
    cpu.synchronize()
    assert numpy.array_equal(numpy.from_dlpack(buf), pattern(16, 7))
    child.say("send")
    child.finish()


@needs_ucx
def test_closed_objects_raise_invalid_state(cpu):
    buf = cpu.enqueue_create_host_buffer(64, dtype="uint8")
    with cpu.create_communicator() as comm:
        assert not comm.closed and comm.peer_count == 0
        assert "host" in comm.memory_types.split(",")
        assert repr(comm) == f"Communicator(peers=0, memory_types='{comm.memory_types}')"
        region = comm.expose(buf)
        assert isinstance(region.key, bytes) and len(region.key) > 0
    assert comm.closed and repr(comm) == "Communicator(closed)"
    for call in (lambda: comm.address, lambda: comm.connect(b"x"), lambda: comm.peer_count,
                 lambda: comm.enqueue_send(buf, 0, 1), lambda: comm.expose(buf)):
        with pytest.raises(anydev.InvalidStateError,
                           match=r"Communicator\..*: the Communicator is closed"):
            call()
    comm.close()  # again: nothing
    region.close()  # the last reference to the communicator
    with pytest.raises(anydev.InvalidStateError, match="ExposedRegion.key"):
        region.key


def test_without_ucx_the_communicator_is_backend_unavailable():
    """UCX's library missing at run time (or anydev built without the
    transport): BackendUnavailableError with the C message."""
    script = ("import anydev\n"
              "try:\n"
              "    anydev.DeviceContext(0, api='cpu').create_communicator()\n"
              "except anydev.BackendUnavailableError as e:\n"
              "    print('unavailable:', e)\n")
    env = dict(os.environ, ANYDEV_UCX_LIBRARY="/nonexistent/libucp.so.0")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=TIMEOUT_S)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("unavailable: anydev_comm_create"), out.stdout
    if UCX_MISSING is None:
        assert "/nonexistent/libucp.so.0" in out.stdout
