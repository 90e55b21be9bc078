# SPDX-License-Identifier: Apache-2.0
"""anydev's log messages in Python's ``logging`` (docs/embedding.md, "Logging").

``set_log_handler()`` routes every message anydev logs (at or above
``log_level()``) to the ``logging.Logger`` named "anydev", or to a logger,
``logging.Handler`` or callable of yours; ``set_log_handler(None)`` restores
stderr. Threads and the GIL: anydev's methods run without the GIL; a message
logged on the calling thread during one is handed over on that thread when the
call has the GIL back, before it returns. A message logged on one of anydev's
own threads (or inside a foreign call without the GIL) never waits for the
GIL there: it is queued and handed over by a daemon thread, "anydev-log", in
order; at most 10000 wait, beyond that they are counted and one warning says
how many were dropped. Handlers therefore run on the calling thread or on
"anydev-log", never on anydev's threads. An exception raised by a handler is
reported through ``sys.unraisablehook`` and dropped. Thread-safe.
"""

import atexit
import logging
import sys
import threading
from types import TracebackType
from typing import Callable, List, Optional, Tuple, Type, Union

from . import _anydev

#: What set_log_handler takes (None: back to stderr).
LogHandler = Union[logging.Logger, logging.Handler, Callable[[int, str], object], None]

#: The ``logging`` level number of anydev's "trace" (below DEBUG).
TRACE = 5

_NAMES = ("trace", "debug", "info", "warn", "error", "critical", "off")
_TO_LOGGING = (TRACE, logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR,
               logging.CRITICAL)

_lock = threading.Lock()
_emit_to: Optional[Callable[[int, str], object]] = None  # (logging_level, message)
_drain: Optional[threading.Thread] = None  # the "anydev-log" thread while a handler is installed
_inside = threading.local()  # .depth: > 0 while this thread runs a handler


def _target(handler: LogHandler) -> Callable[[int, str], object]:
    if isinstance(handler, logging.Logger):
        return handler.log
    if isinstance(handler, logging.Handler):
        target = handler

        def to_handler(level: int, message: str) -> None:
            record = logging.LogRecord("anydev", level, "anydev", 0, message, None, None)
            if level >= target.level:
                target.handle(record)
        return to_handler
    if callable(handler):
        return handler
    raise TypeError("anydev.set_log_handler: expected a logging.Logger, a logging.Handler, a "
                    "callable(level, message) or None, got %r" % (handler,))


def _emit(severity: int, message: str) -> None:
    target = _emit_to
    if target is None:
        return
    _inside.depth = getattr(_inside, "depth", 0) + 1
    try:
        target(_TO_LOGGING[severity], message)
    finally:
        _inside.depth -= 1


def _drain_records() -> None:
    while True:
        taken = _anydev._take_log_records()
        if taken is None:
            return
        records: List[Tuple[int, str]] = taken[0]
        dropped = taken[1]
        if dropped:
            records.append((3, "%d log messages dropped: more than 10000 were waiting for the "
                               "GIL" % dropped))
        for severity, message in records:
            try:
                _emit(severity, message)
            except Exception:  # like the direct path: reported, then dropped
                sys.unraisablehook(_Unraisable(sys.exc_info()))  # type: ignore[arg-type]


class _Unraisable:
    def __init__(self, info: Tuple[Optional[Type[BaseException]], Optional[BaseException],
                                   Optional[TracebackType]]) -> None:
        self.exc_type, self.exc_value, self.exc_traceback = info
        self.err_msg = "Exception ignored in anydev log handler"
        self.object = None


def _stop_drain() -> None:
    global _drain
    drain, _drain = _drain, None
    if drain is not None:
        _anydev._set_log_queue_closed(True)
        if drain is not threading.current_thread():
            drain.join()


def set_log_handler(handler: LogHandler = logging.getLogger("anydev")) -> None:
    """Route anydev's log messages to ``handler``: a ``logging.Logger`` (the
    default: the logger named "anydev"), a ``logging.Handler``, or a
    ``callable(level, message)`` taking a ``logging`` level number (TRACE = 5
    for anydev's trace) and the message. ``None`` restores stderr, after the
    messages already queued were handed over. Once it returns, the previous
    handler is neither running nor called again. Called from inside a handler
    it raises anydev.InvalidStateError (it would wait for itself)."""
    global _emit_to, _drain
    if getattr(_inside, "depth", 0) > 0:
        raise _anydev.InvalidStateError(
            "anydev.set_log_handler: called from inside a log handler (install handlers from "
            "outside one)")
    target = None if handler is None else _target(handler)
    with _lock:
        if target is None:
            _anydev._set_log_sink(None)  # no new messages
            _stop_drain()  # hands over the queued ones, then ends
            _emit_to = None
            return
        _emit_to = target
        if _drain is None:
            _anydev._set_log_queue_closed(False)
            _drain = threading.Thread(target=_drain_records, name="anydev-log", daemon=True)
            _drain.start()
        _anydev._set_log_sink(_emit)


def set_log_level(level: Union[str, int]) -> None:
    """Drop messages below ``level``: one of "trace", "debug", "info", "warn",
    "error", "critical", "off", or a ``logging`` level number (logging.DEBUG,
    ...). Starts at ANYDEV_LOG_LEVEL (default "warn"); this overrides it."""
    if isinstance(level, str):
        if level not in _NAMES:
            raise _anydev.InvalidArgumentError(
                "anydev.set_log_level: %r is not one of %s" % (level, ", ".join(_NAMES)))
        _anydev._set_log_level(_NAMES.index(level))
        return
    if isinstance(level, bool) or not isinstance(level, int):
        raise TypeError("anydev.set_log_level: expected a level name or a logging level number, "
                        "got %r" % (level,))
    for severity, threshold in enumerate(_TO_LOGGING):
        if level <= threshold:
            _anydev._set_log_level(severity)
            return
    _anydev._set_log_level(_NAMES.index("off"))


def log_level() -> str:
    """The current threshold's name: "trace" ... "off"."""
    return _NAMES[_anydev._log_level()]


def _at_exit() -> None:
    # Before the interpreter tears down: no handler may run after this.
    if _emit_to is not None or _drain is not None:
        set_log_handler(None)


atexit.register(_at_exit)
