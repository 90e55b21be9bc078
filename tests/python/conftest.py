# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the anydev Python tests (run by ctest as python.*).

Every test uses the cpu backend unless it says otherwise; ctest sets
ANYDEV_BACKEND=cpu and PYTHONPATH to the built package.
"""
import gc
import time

import pytest

import anydev


@pytest.fixture
def ctx():
    return anydev.DeviceContext(0, api="cpu")


def wait_until(condition, what, limit_s=60.0):
    """Polls `condition` (releases finish on anydev's reclaimer thread). The
    limit only turns a hang into a failure; it is not a performance bound."""
    deadline = time.monotonic() + limit_s
    while not condition():
        gc.collect()
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)
