# SPDX-License-Identifier: Apache-2.0
"""The GIL and anydev's locks: every binding call that can take a core lock or
block runs without the GIL, so a Python thread waiting in anydev never stops
the Python thread that anydev waits for (a log handler running while anydev
holds a lock). Each scenario runs in a fresh interpreter (the first context
creation is the one that loads the plugins under the registry's lock), bounded
by a timeout and by faulthandler, so a deadlock fails with the threads'
stacks instead of hanging. See docs/python.md, "Threads and the GIL"."""
import os
import subprocess
import sys
import textwrap

import pytest

LIMIT_S = 120  # only turns a hang into a failure; each scenario takes < 2 s


def _run(script):
    child = textwrap.dedent("""\
        import faulthandler, sys, threading, time
        faulthandler.dump_traceback_later(%d, exit=True)
        import anydev
        """ % (LIMIT_S - 20)) + textwrap.dedent(script)
    env = dict(os.environ, ANYDEV_BACKEND="cpu", PYTHONFAULTHANDLER="1")
    try:
        done = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True,
                              text=True, timeout=LIMIT_S)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"deadlock: the scenario did not finish in {LIMIT_S} s\n{e.stderr}")
    assert done.returncode == 0 and done.stdout.endswith("ok\n"), \
        f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"


def test_slow_handler_and_a_second_thread_creating_contexts_do_not_deadlock():
    # Thread a creates the first context; its 50 ms handler sleeps (the GIL
    # is free meanwhile). Thread b starts creating contexts as soon as the
    # handler first runs, while a's creation may still hold the registry's
    # lock: b must wait for that lock without the GIL.
    _run("""
        first = threading.Event()

        def handler(level, message):
            first.set()
            time.sleep(0.05)

        anydev.set_log_level("trace")
        anydev.set_log_handler(handler)

        def a():
            for _ in range(5):
                anydev.DeviceContext(0, api="cpu")

        def b():
            first.wait(30)
            for _ in range(5):
                anydev.DeviceContext(0, api="cpu")

        threads = [threading.Thread(target=a), threading.Thread(target=b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        anydev.set_log_handler(None)
        print("ok")
        """)


def test_thread_waiting_for_a_lock_in_context_creation_leaves_the_gil_free():
    # Thread a calls the C ABI through ctypes.PyDLL, which keeps the GIL, so
    # its handler runs inside the call (under the registry's lock, where the
    # core logs there) and waits for the main thread. Thread b creates a
    # context meanwhile and may wait for that lock: it must not hold the GIL
    # while it waits, or the main thread (and so a) could never run again.
    _run("""
        import ctypes

        def libanydev():
            with open("/proc/self/maps") as maps:
                for line in maps:
                    if "/libanydev.so" in line.split()[-1]:
                        return line.split()[-1]
            sys.exit("libanydev.so is not mapped")

        lib = ctypes.PyDLL(libanydev())
        lib.anydev_context_create.argtypes = [ctypes.c_char_p, ctypes.c_int,
                                              ctypes.POINTER(ctypes.c_void_p)]
        lib.anydev_context_release.argtypes = [ctypes.c_void_p]
        in_handler, may_return = threading.Event(), threading.Event()

        def handler(level, message):
            if threading.current_thread().name == "a" and not in_handler.is_set():
                in_handler.set()
                may_return.wait(30)

        anydev.set_log_level("trace")
        anydev.set_log_handler(handler)

        def a():
            handle = ctypes.c_void_p()
            assert lib.anydev_context_create(b"cpu", 0, ctypes.byref(handle)) == 0
            assert lib.anydev_context_release(handle) == 0

        def b():
            in_handler.wait(30)
            anydev.DeviceContext(0, api="cpu")

        threads = [threading.Thread(target=a, name="a"), threading.Thread(target=b, name="b")]
        for t in threads:
            t.start()
        assert in_handler.wait(30), "a's handler never ran"
        time.sleep(0.2)  # b is now inside DeviceContext(), maybe waiting for the lock
        may_return.set()  # runs only if b left the GIL free
        for t in threads:
            t.join()
        anydev.set_log_handler(None)
        print("ok")
        """)
