# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the anydev Python tests (run by ctest as python.*).

The `ctx` fixture is a context on the backend named by ANYDEV_PYTHON_BACKEND
(unset: cpu); ctest sets ANYDEV_BACKEND=cpu and PYTHONPATH to the built
package, and runs the backend-generic files again on the cuda, hip and
level_zero emulators (entries python.<backend>_emulator*, registered from
tests/emulators/*/ through tests/python/CMakeLists.txt). A backend that is unknown or unavailable fails every
test that uses `ctx`, naming it and the reason: never a silent fallback.
Tests marked `cpu_only` (they check what only the cpu backend does) are
skipped, with their reason, when another backend is chosen. When every test
passed, the summary ends with "anydev python backend <name>: all passed",
which the emulator entries require.
"""
import gc
import os
import time

import pytest

import anydev

BACKEND = os.environ.get("ANYDEV_PYTHON_BACKEND", "cpu")
IS_CPU = BACKEND == "cpu"
# The DLPack device types (dlpack.h) of each backend's (device, host) memory.
DLPACK_TYPES = {"cpu": (1, 1), "opencl": (4, 1), "cuda": (2, 3), "hip": (10, 11),
                "level_zero": (14, 1)}
DEVICE_DLPACK, HOST_DLPACK = DLPACK_TYPES.get(BACKEND, (None, None))


def skip_unless_host_memory_is_kdlcpu():
    """PyTorch 1.13's CPU build imports only kDLCPU tensors: cuda's and hip's
    pinned host buffers (kDLCUDAHost, kDLROCMHost) are not for it."""
    if HOST_DLPACK != 1:
        pytest.skip(f"PyTorch imports only kDLCPU host memory; {BACKEND}'s host buffers export "
                    f"as DLPack device type {HOST_DLPACK}")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cpu_only(reason): checks what only the cpu backend does; skipped on others")
    config.addinivalue_line(
        "markers", "kdlcpu_host: hands host buffers to PyTorch; skipped where they are not kDLCPU")


def pytest_collection_modifyitems(config, items):
    if IS_CPU:
        return
    for item in items:
        if item.get_closest_marker("kdlcpu_host") is not None and HOST_DLPACK != 1:
            item.add_marker(pytest.mark.skip(
                reason=f"PyTorch imports only kDLCPU host memory; {BACKEND}'s host buffers "
                       f"export as DLPack device type {HOST_DLPACK}"))
        marker = item.get_closest_marker("cpu_only")
        if marker is not None:
            why = marker.kwargs.get("reason") or (marker.args[0] if marker.args else "cpu only")
            item.add_marker(pytest.mark.skip(
                reason=f"cpu backend only ({why}); ANYDEV_PYTHON_BACKEND={BACKEND}"))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if exitstatus == 0:
        terminalreporter.write_line(f"anydev python backend {BACKEND}: all passed")


def backend_reason(name):
    """'' when `name` is an available backend, else why not."""
    for info in anydev.backends():
        if info.name == name:
            return "" if info.available else info.reason
    return "not a backend anydev knows"


@pytest.fixture
def ctx():
    why = backend_reason(BACKEND)
    if why:
        pytest.fail(f"ANYDEV_PYTHON_BACKEND={BACKEND}: the backend is unavailable: {why}")
    return anydev.DeviceContext(0, api=BACKEND)


def wait_until(condition, what, limit_s=60.0):
    """Polls `condition` (releases finish on anydev's reclaimer thread). The
    limit only turns a hang into a failure; it is not a performance bound."""
    deadline = time.monotonic() + limit_s
    while not condition():
        gc.collect()
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)
