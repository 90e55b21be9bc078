# SPDX-License-Identifier: Apache-2.0
"""anydev.set_log_handler / set_log_level / log_level (python/anydev/_logging.py):
messages reach Python's logging with their level; a message logged on a thread
that holds the GIL is handed over at once on that thread, one logged without
the GIL (ctypes.CDLL releases it, as anydev's own threads never had it) is
queued and handed over by the "anydev-log" thread; None restores stderr; the
threshold takes names and logging numbers. See docs/embedding.md, "Logging".
Messages are produced on demand by anydev_context_create, which logs the
device it selects at info level."""
import ctypes
import logging
import subprocess
import sys
import threading

import pytest

import anydev


def _libanydev_path():
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "/libanydev.so" in path:
                return path
    pytest.skip("libanydev.so is not mapped (not a Linux /proc)")


class _Lib:
    """The libanydev the extension uses, called through ctypes: CDLL releases
    the GIL around each call, PyDLL keeps it."""

    def __init__(self, keep_gil):
        loader = ctypes.PyDLL if keep_gil else ctypes.CDLL
        self.lib = loader(_libanydev_path())
        self.lib.anydev_context_create.argtypes = [ctypes.c_char_p, ctypes.c_int,
                                                   ctypes.POINTER(ctypes.c_void_p)]
        self.lib.anydev_context_release.argtypes = [ctypes.c_void_p]

    def create_context(self):
        handle = ctypes.c_void_p()
        assert self.lib.anydev_context_create(b"cpu", 0, ctypes.byref(handle)) == 0
        assert self.lib.anydev_context_release(handle) == 0


@pytest.fixture(autouse=True)
def restore():
    yield
    anydev.set_log_handler(None)
    anydev.set_log_level("warn")


def test_default_handler_is_the_anydev_logger(caplog):
    anydev.set_log_level("info")
    anydev.set_log_handler()
    with caplog.at_level(logging.DEBUG, logger="anydev"):
        anydev.DeviceContext(0, api="cpu")
    records = [r for r in caplog.records if r.name == "anydev"]
    assert any("selected cpu:0" in r.getMessage() and r.levelno == logging.INFO
               for r in records), [r.getMessage() for r in records]


def test_message_on_a_thread_holding_the_gil_is_handed_over_at_once():
    seen = []
    anydev.set_log_level(logging.INFO)
    anydev.set_log_handler(lambda level, message: seen.append(
        (level, message, threading.current_thread().name)))
    _Lib(keep_gil=True).create_context()
    # No waiting: delivered before the call returned, on this thread.
    mine = [s for s in seen if "selected cpu:0" in s[1]]
    assert mine and mine[0][0] == logging.INFO
    assert mine[0][2] == threading.current_thread().name


def test_message_without_the_gil_goes_through_the_anydev_log_thread():
    seen = []
    done = threading.Event()

    def handler(level, message):
        seen.append((level, message, threading.current_thread().name))
        if "selected cpu:0" in message:
            done.set()

    anydev.set_log_level("info")
    anydev.set_log_handler(handler)
    _Lib(keep_gil=False).create_context()
    assert done.wait(60), "the queued message never reached the handler"
    # set_log_handler(None) hands over what is queued, then stops the thread.
    anydev.set_log_handler(None)
    assert any(s[2] == "anydev-log" for s in seen), seen
    assert "anydev-log" not in [t.name for t in threading.enumerate()]


def test_handler_may_be_a_logging_handler_with_its_level():
    class Keep(logging.Handler):
        def __init__(self):
            super().__init__(level=logging.WARNING)
            self.records = []

        def emit(self, record):
            self.records.append(record)

    keep = Keep()
    anydev.set_log_level("trace")
    anydev.set_log_handler(keep)
    anydev.DeviceContext(0, api="cpu")  # info messages: below the handler's level
    anydev.set_log_handler(None)
    assert keep.records == []


def test_none_restores_stderr_and_the_replaced_handler_is_not_called():
    seen = []
    anydev.set_log_level("info")
    anydev.set_log_handler(lambda level, message: seen.append(message))
    anydev.set_log_handler(None)
    anydev.DeviceContext(0, api="cpu")
    assert seen == []


def test_stderr_without_a_handler():
    code = ("import anydev; anydev.set_log_level('info'); "
            "anydev.DeviceContext(0, api='cpu')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "[anydev] [info] anydev_context_create: selected cpu:0" in result.stderr


def test_setting_the_handler_inside_a_handler_is_refused():
    errors = []

    def handler(level, message):
        try:
            anydev.set_log_handler(None)
        except anydev.InvalidStateError as error:
            errors.append(str(error))

    anydev.set_log_level("info")
    anydev.set_log_handler(handler)
    anydev.DeviceContext(0, api="cpu")
    assert errors and "inside a log handler" in errors[0]


def test_handler_exception_is_reported_as_unraisable(monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: reported.append(info.exc_value))

    def handler(level, message):
        raise RuntimeError("handler failed")

    anydev.set_log_level("info")
    anydev.set_log_handler(handler)
    anydev.DeviceContext(0, api="cpu")  # does not raise
    assert any(isinstance(e, RuntimeError) for e in reported)


def test_level_names_and_numbers():
    for name in ("trace", "debug", "info", "warn", "error", "critical", "off"):
        anydev.set_log_level(name)
        assert anydev.log_level() == name
    for number, name in ((anydev.TRACE, "trace"), (logging.DEBUG, "debug"),
                         (logging.INFO, "info"), (logging.WARNING, "warn"),
                         (logging.ERROR, "error"), (logging.CRITICAL, "critical"),
                         (logging.CRITICAL + 1, "off")):
        anydev.set_log_level(number)
        assert anydev.log_level() == name
    anydev.set_log_level("error")
    with pytest.raises(anydev.InvalidArgumentError, match="'loud' is not one of"):
        anydev.set_log_level("loud")
    with pytest.raises(TypeError):
        anydev.set_log_level(1.5)
    assert anydev.log_level() == "error"  # unchanged by the refused calls
    with pytest.raises(TypeError, match="set_log_handler"):
        anydev.set_log_handler(42)


def test_switching_handlers_while_threads_log_without_the_gil():
    lib = _Lib(keep_gil=False)
    anydev.set_log_level("info")
    stop = threading.Event()

    def logger():
        while not stop.is_set():
            lib.create_context()

    threads = [threading.Thread(target=logger) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for i in range(50):
            seen = []
            anydev.set_log_handler(lambda level, message, seen=seen: seen.append(message))
            if i % 5 == 4:
                anydev.set_log_handler(None)
    finally:
        stop.set()
        for t in threads:
            t.join()
    anydev.set_log_handler(None)
    assert "anydev-log" not in [t.name for t in threading.enumerate()]
