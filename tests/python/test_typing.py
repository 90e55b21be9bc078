# SPDX-License-Identifier: Apache-2.0
"""The package as a type checker sees it: `mypy --strict` accepts a user
script that uses the package's exports (DeviceContext, set_log_handler,
from_dlpack, the error classes, ...), so the package re-exports them
explicitly (`X as X`, __all__) and its Python part is fully annotated; the
package itself passes `mypy --strict` too. mypy is Debian's (scripts/setup
installs it); without it the tests skip, saying so. The package's Python
files and stub are copied to a temporary folder (MYPYPATH), so that mypy
reads the files that were built or installed."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import anydev

PACKAGE_DIR = os.path.dirname(anydev.__file__)

USER_SCRIPT = """\
import logging
from typing import List, Tuple

import anydev
from anydev import DeviceContext, HostBuffer


def on_log(level: int, message: str) -> None:
    print(level, message)


def main() -> None:
    anydev.set_log_handler(logging.getLogger("mine"))
    anydev.set_log_handler(on_log)
    anydev.set_log_level("info")
    anydev.set_log_level(anydev.TRACE)
    print(anydev.log_level(), anydev.__version__, anydev.kDLCPU)
    ctx: DeviceContext = anydev.DeviceContext(0, api="cpu")
    h: HostBuffer = ctx.enqueue_create_host_buffer(4, dtype="float32")
    h.enqueue_fill(1.0)
    ctx.synchronize()
    view: anydev.Buffer = anydev.from_dlpack(h)
    shaped: anydev.ShapedView = h.shaped((2, 2))
    print(len(view), shaped.shape)
    d: anydev.DeviceBuffer = ctx.enqueue_create_buffer(4)
    with d.map_to_host() as m:
        m[0] = 2.0
    with ctx.create_stream() as s:
        event: anydev.DeviceEvent = ctx.create_event()
        s.record_event(event)
    shared: HostBuffer = ctx.create_shareable_host_buffer(4, dtype="uint8")
    with shared.export_handle() as handle:
        raw: bytes = handle.to_bytes()
        fds: Tuple[int, ...] = handle.fds
        opened: HostBuffer = ctx.import_host_buffer(handle)
    shared_event: anydev.DeviceEvent = ctx.create_shareable_event()
    again: anydev.DeviceEvent = ctx.import_event(shared_event.export_handle())
    alone: anydev.ShareHandle = anydev.ShareHandle.from_bytes(raw)
    print(len(opened), fds, again.is_complete(), alone.fds)
    names: List[str] = [b.name for b in anydev.backends() if isinstance(b, anydev.BackendInfo)]
    print(names, ctx.memory_info().free)
    try:
        anydev.DeviceContext(0, api="nope")
    except anydev.BackendUnavailableError as e:
        print(e.status, e.code)
    except (anydev.InvalidArgumentError, anydev.OutOfRangeError, anydev.OutOfMemoryError,
            anydev.DeviceError, anydev.UnsupportedError, anydev.InvalidStateError,
            anydev.InternalError) as e:
        print(e.status)
    except anydev.Error as e:
        print(e.code)
    anydev.set_log_handler(None)
"""


@pytest.fixture
def mypy_setup(tmp_path):
    """(command prefix, folder with a copy of the package's Python files)."""
    if shutil.which("mypy") is None:
        pytest.skip("mypy is not installed (Debian: mypy; scripts/setup installs it)")
    copy = tmp_path / "package"
    (copy / "anydev").mkdir(parents=True)
    for name in os.listdir(PACKAGE_DIR):
        if name.endswith((".py", ".pyi")) or name == "py.typed":
            shutil.copy(os.path.join(PACKAGE_DIR, name), copy / "anydev" / name)
    command = ["mypy", "--strict", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"),
               "--python-executable", sys.executable]
    return command, copy


def _mypy(command, folder, *args):
    env = dict(os.environ, MYPYPATH=str(folder))
    done = subprocess.run(command + list(args), env=env, capture_output=True, text=True,
                          timeout=300, cwd=folder.parent)
    assert done.returncode == 0, f"mypy --strict {' '.join(args)}:\n{done.stdout}{done.stderr}"


def test_mypy_strict_accepts_a_user_script_using_the_exports(mypy_setup, tmp_path):
    command, folder = mypy_setup
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(USER_SCRIPT))
    _mypy(command, folder, str(script))


def test_mypy_strict_accepts_the_package(mypy_setup):
    command, folder = mypy_setup
    _mypy(command, folder, "-p", "anydev")


def test_all_lists_every_public_name():
    # __all__ is spelled out for type checkers: it must not fall behind.
    public = {n for n in dir(anydev) if not n.startswith("_")}
    typing_names = {n for n in public if getattr(getattr(anydev, n), "__module__", "") == "typing"}
    assert sorted(anydev.__all__) == sorted(public - typing_names)
