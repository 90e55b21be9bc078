# SPDX-License-Identifier: Apache-2.0
"""The Python package on the hip backend, through the HIP emulator (ctest
python.hip_emulator sets ANYDEV_HIP_LIBRARY): buffers, fills of every
pattern width, copies both ways, DLPack device types (kDLROCM for device
memory, kDLROCMHost for pinned host memory) and NumPy reading pinned memory
without a copy. Skipped, saying why, when hip is unavailable."""
import pytest

import anydev

numpy = pytest.importorskip("numpy", reason="NumPy is not installed (Debian: python3-numpy)")

K_DL_ROCM = 10  # dlpack.h's kDLROCM
K_DL_ROCM_HOST = 11  # kDLROCMHost


@pytest.fixture
def hip():
    if anydev.DeviceContext.number_of_devices("hip") == 0:
        pytest.skip("anydev's hip backend is unavailable: " +
                    next(b.reason for b in anydev.backends() if b.name == "hip"))
    return anydev.DeviceContext(0, api="hip")


@pytest.mark.parametrize("dtype,value", [("uint8", 0xA5), ("int16", -2), ("float32", 1.5),
                                         ("float64", -0.25), ("complex128", 1 - 2j)])
def test_device_fill_and_copies_round_trip(hip, dtype, value):
    d = hip.enqueue_create_buffer(1000, dtype=dtype)
    d.enqueue_fill(value)
    h = hip.enqueue_create_host_buffer(1000, dtype=dtype)
    d.enqueue_copy_to(h)
    hip.synchronize()
    assert (numpy.asarray(h) == value).all()
    h.enqueue_fill(0)
    d.enqueue_copy_from(h)
    d[10:20].enqueue_fill(value)
    d.enqueue_copy_to(h)
    hip.synchronize()
    a = numpy.asarray(h)
    assert (a[10:20] == value).all() and (a[:10] == 0).all() and (a[20:] == 0).all()


def test_dlpack_device_types_are_rocm(hip):
    d = hip.enqueue_create_buffer(16, dtype="float32")
    h = hip.enqueue_create_host_buffer(16, dtype="float32")
    assert d.__dlpack_device__() == (K_DL_ROCM, 0)
    assert h.__dlpack_device__() == (K_DL_ROCM_HOST, 0)
    h.enqueue_fill(3.0)
    a = numpy.from_dlpack(h)  # pinned host memory: NumPy reads it in place
    assert a.ctypes.data == h.unsafe_ptr() and (a == 3.0).all()
