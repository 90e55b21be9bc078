# SPDX-License-Identifier: Apache-2.0
"""Buffers and events shared between processes from Python (ctest
python.sharing; docs/python.md "Sharing between processes"): ShareHandle,
multiprocessing with the spawn and fork start methods in both directions
(Queue and Process argument), exact bytes, NumPy's zero-copy DLPack view of
the imported memory, an interprocess event ordering a producer's fills
before the consumer's copy, the precise errors of bad and closed handles,
and opencl's refusal. Children run sharing_children.py; every wait has a
timeout, so a hang fails rather than stalls."""
import multiprocessing
import os
import socket
from multiprocessing.reduction import ForkingPickler

import pytest

import anydev
import sharing_children as kids

numpy = pytest.importorskip("numpy", reason="NumPy is not installed (Debian: python3-numpy)")

pytestmark = pytest.mark.cpu_only(reason="sharing between processes is real on cpu only")

METHODS = ["spawn", "fork"]
TIMEOUT_S = 30


@pytest.fixture
def cpu():
    return anydev.DeviceContext(0, api="cpu")


def report(results, process):
    status, value = results.get(timeout=TIMEOUT_S)
    process.join(TIMEOUT_S)
    assert status == "ok", value
    assert process.exitcode == 0
    return value


def shared_pattern_buffer(ctx, n, salt):
    buf = ctx.create_shareable_host_buffer(n, dtype="uint32")
    buf.enqueue_copy_from(kids.pattern(n, salt))
    return buf


# ---- in one process ----

def test_handle_owns_its_fds_and_imports(cpu):
    buf = shared_pattern_buffer(cpu, 1024, 1)
    with buf.export_handle() as handle:
        assert len(handle.to_bytes()) == 256 and bytes(handle) == handle.to_bytes()
        fds = handle.fds
        assert len(fds) >= 1
        assert all("memfd:" in os.readlink(f"/proc/self/fd/{fd}") for fd in fds)
        inodes = {fd: os.fstat(fd).st_ino for fd in fds}
        imported = cpu.import_host_buffer(handle)
    assert handle.fds == ()
    for fd, inode in inodes.items():  # closed by the with-block (or the number reused since)
        try:
            assert os.fstat(fd).st_ino != inode, f"fd {fd} is still open"
        except OSError:
            pass
    assert (imported.dtype, len(imported)) == ("uint32", 1024)
    assert numpy.array_equal(numpy.from_dlpack(imported), kids.pattern(1024, 1))
    imported[5] = 77  # the same memory, mapped twice
    assert buf[5] == 77


def test_send_and_receive_over_a_socketpair(cpu):
    buf = shared_pattern_buffer(cpu, 64, 2)
    left, right = socket.socketpair()
    with left, right, buf.export_handle() as handle:
        handle.send(left)
        with anydev.ShareHandle.receive(right.fileno()) as received:
            assert received.to_bytes() == handle.to_bytes()
            assert set(received.fds).isdisjoint(handle.fds)
            assert numpy.array_equal(numpy.from_dlpack(cpu.import_host_buffer(received)),
                                     kids.pattern(64, 2))


def test_fetch_fds_for_a_handle_sent_as_bytes(cpu):
    buf = shared_pattern_buffer(cpu, 64, 3)
    with buf.export_handle() as handle:
        alone = anydev.ShareHandle.from_bytes(handle.to_bytes())
    assert alone.fds == ()
    try:
        alone.fetch_fds()
    except (anydev.UnsupportedError, anydev.InvalidStateError) as e:
        pytest.skip(f"pidfd_getfd is not available here: {e}")
    assert len(alone.fds) == 1
    assert numpy.array_equal(numpy.from_dlpack(cpu.import_host_buffer(alone)), kids.pattern(64, 3))
    alone.close()


def test_view_exports_as_parent_plus_offset(cpu):
    buf = shared_pattern_buffer(cpu, 1000, 4)
    view = ForkingPickler.loads(ForkingPickler.dumps(buf[100:300]))
    assert (len(view), view.dtype) == (200, "uint32")
    assert numpy.array_equal(numpy.from_dlpack(view), kids.pattern(1000, 4)[100:300])


def test_closed_handle_names_the_missing_fds(cpu):
    handle = shared_pattern_buffer(cpu, 16, 5).export_handle()
    handle.close()
    with pytest.raises(anydev.InvalidArgumentError,
                       match=r"anydev_buffer_import: the handle carries 0 file descriptor\(s\) "
                             r"but its exporter gave 1"):
        cpu.import_host_buffer(handle)


def test_bad_handles_give_the_precise_error(cpu):
    with pytest.raises(anydev.InvalidArgumentError,
                       match="ShareHandle.from_bytes: 10 bytes given; a handle is 256"):
        anydev.ShareHandle.from_bytes(b"x" * 10)
    with pytest.raises(anydev.InvalidArgumentError, match="the handle is damaged: its first 8 "
                                                          "bytes are not \"ANYDEVSH\""):
        cpu.import_host_buffer(anydev.ShareHandle.from_bytes(bytes(256)))
    buf = shared_pattern_buffer(cpu, 16, 6)
    with buf.export_handle() as handle:
        data = bytearray(handle.to_bytes())
        data[100] ^= 0xFF  # a forged byte fails the checksum
        with pytest.raises(anydev.InvalidArgumentError, match="the handle is damaged"):
            cpu.import_host_buffer(anydev.ShareHandle.from_bytes(bytes(data)))
        with pytest.raises(anydev.InvalidArgumentError,
                           match=r"DeviceContext.import_buffer: the handle is of host memory "
                                 r"\(use import_host_buffer\)"):
            cpu.import_buffer(handle)
        with pytest.raises(anydev.InvalidArgumentError,
                           match="anydev_event_import: the handle describes memory, not an event"):
            cpu.import_event(handle)
    with cpu.create_shareable_event().export_handle() as handle:
        with pytest.raises(anydev.InvalidArgumentError, match="the handle describes an event, "
                                                              "not memory"):
            cpu.import_host_buffer(handle)
    plain = cpu.enqueue_create_host_buffer(16)
    with pytest.raises(anydev.UnsupportedError, match="is not shareable: create it with "
                                                      "anydev_buffer_create_shareable"):
        plain.export_handle()
    with pytest.raises(anydev.UnsupportedError, match="is not shareable"):
        ForkingPickler.dumps(plain)  # multiprocessing says so too
    with pytest.raises(anydev.UnsupportedError, match="the event on cpu:0 is not shareable"):
        cpu.create_event().export_handle()


def test_a_closed_fd_number_is_named(cpu):
    buf = shared_pattern_buffer(cpu, 16, 7)
    handle = buf.export_handle()
    fd = handle.fds[0]
    stale = anydev.ShareHandle.from_bytes(handle.to_bytes(), [fd])
    handle.close()  # fd is closed; `stale` still names it
    with pytest.raises(anydev.InvalidArgumentError,
                       match=rf"handle->fds\[0\] = {fd} is not an open file descriptor"):
        cpu.import_host_buffer(stale)


def test_socket_errors(cpu):
    left, right = socket.socketpair()
    left.close()
    with right, pytest.raises(anydev.OutOfRangeError, match="the peer closed socket"):
        anydev.ShareHandle.receive(right)
    read_end, write_end = os.pipe()
    try:
        with shared_pattern_buffer(cpu, 16, 8).export_handle() as handle, \
                pytest.raises(anydev.InvalidArgumentError, match="is not a socket"):
            handle.send(write_end)
    finally:
        os.close(read_end)
        os.close(write_end)
    with pytest.raises(TypeError, match="expected a socket or an int file descriptor"):
        anydev.ShareHandle.receive("nope")


def test_opencl_declines_with_its_reason():
    if anydev.DeviceContext.number_of_devices("opencl") == 0:
        pytest.skip("anydev's opencl backend is unavailable: " +
                    next(b.reason for b in anydev.backends() if b.name == "opencl"))
    ocl = anydev.DeviceContext(0, api="opencl")
    reason = "OpenCL 3.0 has no interprocess sharing"
    for make in (lambda: ocl.create_shareable_host_buffer(4),
                 lambda: ocl.create_shareable_buffer(4), ocl.create_shareable_event):
        with pytest.raises(anydev.UnsupportedError, match=f"opencl:0: .*{reason}"):
            make()


# ---- two processes ----

@pytest.mark.parametrize("method", METHODS)
def test_queue_parent_to_child(cpu, method):
    mp = multiprocessing.get_context(method)
    buf = shared_pattern_buffer(cpu, 1 << 16, 10)
    queue, results = mp.Queue(), mp.Queue()
    child = mp.Process(target=kids.consumer_from_queue, args=(queue, results, 10), daemon=True)
    child.start()
    queue.put(buf)
    seen = report(results, child)
    assert seen["pid"] != os.getpid()
    assert (seen["type"], seen["dtype"], seen["size"]) == ("HostBuffer", "uint32", 1 << 16)
    assert seen["exact"], "the child saw other bytes"
    assert seen["same_address"], "NumPy's DLPack view in the child is not the buffer's memory"
    assert seen["written_seen_by_dlpack_view"]
    # The child's write is in our memory (shared, not copied).
    assert numpy.array_equal(numpy.from_dlpack(buf), kids.pattern(1 << 16, 11))


@pytest.mark.parametrize("method", METHODS)
def test_process_arguments_parent_to_child(cpu, method):
    # fork does not pickle arguments: anydev re-opens them in the child.
    mp = multiprocessing.get_context(method)
    buf = shared_pattern_buffer(cpu, 4096, 20)
    event = cpu.create_shareable_event()
    cpu.stream().record_event(event)
    results = mp.Queue()
    child = mp.Process(target=kids.consumer_of_arguments, args=(buf, event, results, 20),
                       daemon=True)
    child.start()
    status, complete = results.get(timeout=TIMEOUT_S)
    assert status == "ok" and complete is True, complete
    seen = report(results, child)
    assert seen["exact"] and seen["same_address"] and seen["size"] == 4096
    assert numpy.array_equal(numpy.from_dlpack(buf), kids.pattern(4096, 21))
    buf[0] = 5  # still usable here after the fork
    assert buf[0] == 5
    event.synchronize()  # the child's record of it is done


@pytest.mark.parametrize("kind", ["host", "device"])
@pytest.mark.parametrize("method", METHODS)
def test_child_to_parent(method, kind):
    mp = multiprocessing.get_context(method)
    queue, acks, results = mp.Queue(), mp.Queue(), mp.Queue()
    n = 5000
    child = mp.Process(target=kids.producer, args=(queue, acks, results, n, 30, kind), daemon=True)
    child.start()
    buf = queue.get(timeout=TIMEOUT_S)
    assert isinstance(buf, anydev.HostBuffer if kind == "host" else anydev.DeviceBuffer)
    assert (buf.dtype, len(buf)) == ("uint32", n)
    out = numpy.empty(n, dtype=numpy.uint32)
    buf.enqueue_copy_to(out)
    assert numpy.array_equal(out, kids.pattern(n, 30))
    buf.enqueue_copy_from(kids.pattern(n, 31))
    acks.put(True)
    assert report(results, child)["parent_write_seen"]
    # The exporter has exited: the memory stays valid here.
    buf.enqueue_copy_to(out)
    assert numpy.array_equal(out, kids.pattern(n, 31))


@pytest.mark.parametrize("method", METHODS)
def test_device_buffer_parent_to_child(cpu, method):
    mp = multiprocessing.get_context(method)
    buf = cpu.create_shareable_buffer(3000, dtype="uint32")
    buf.enqueue_copy_from(kids.pattern(3000, 40))
    queue, results = mp.Queue(), mp.Queue()
    child = mp.Process(target=kids.device_consumer, args=(queue, results, 40), daemon=True)
    child.start()
    queue.put(buf)
    seen = report(results, child)
    assert seen == {"type": "DeviceBuffer", "size": 3000, "exact": True}
    out = numpy.empty(3000, dtype=numpy.uint32)
    buf.enqueue_copy_to(out)
    assert numpy.array_equal(out, kids.pattern(3000, 41))


@pytest.mark.parametrize("method", METHODS)
def test_interprocess_event_orders_the_producers_fill(method):
    mp = multiprocessing.get_context(method)
    n, rounds = 8 << 20, 6  # 32 MiB filled six times: the copy would catch a fill midway
    queue, acks, results = mp.Queue(), mp.Queue(), mp.Queue()
    child = mp.Process(target=kids.event_producer, args=(queue, acks, results, n, rounds),
                       daemon=True)
    child.start()
    buf, event = queue.get(timeout=TIMEOUT_S)
    assert isinstance(event, anydev.DeviceEvent)
    ctx = buf.context()
    local = ctx.enqueue_create_host_buffer(n, dtype="uint32")
    stream = ctx.stream()
    stream.enqueue_wait_for(event)  # on the stream: the host does not wait here
    ctx.enqueue_copy(local, buf)
    ctx.synchronize()
    assert event.is_complete()
    copied = numpy.from_dlpack(local)
    wrong = numpy.flatnonzero(copied != rounds)
    assert wrong.size == 0, f"{wrong.size} elements copied before the last fill, e.g. " \
                            f"{copied[wrong[0]]} at {wrong[0]}"
    acks.put(True)
    assert report(results, child)["sent"]
