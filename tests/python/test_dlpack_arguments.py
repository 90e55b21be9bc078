# SPDX-License-Identifier: Apache-2.0
"""Argument errors of __dlpack__ and anydev.from_dlpack, as docs/python.md
("DLPack arguments") lists them: a value of the wrong type is a TypeError, a
well-typed value the protocol cannot honour a BufferError, a shape that
cannot describe the buffer an InvalidArgumentError (a ValueError); each
message names the argument and its value. Never pybind11's bare "Unable to
cast Python instance to C++ type". Values that are merely large but valid
(max_version=(2**70, 0)) are accepted."""
import pytest

import anydev

numpy = pytest.importorskip("numpy", reason="NumPy is not installed (Debian: python3-numpy)")

# (id, __dlpack__ keyword arguments, exception, text the message contains)
DLPACK_ERRORS = [
    ("max_version_one_int", {"max_version": (1,)}, TypeError, "max_version"),
    ("max_version_str", {"max_version": "1.0"}, TypeError, "max_version"),
    ("max_version_float", {"max_version": (1.0, 0)}, TypeError, "max_version"),
    ("stream_str", {"stream": "1"}, TypeError, "stream"),
    ("stream_above_a_pointer", {"stream": 2**70}, BufferError, "stream 1180591620717411303424"),
    ("stream_2_pow_64", {"stream": 2**64}, BufferError, "stream 18446744073709551616"),
    ("stream_far_below_minus_one", {"stream": -2**70}, BufferError,
     "stream -1180591620717411303424"),
    ("stream_zero", {"stream": 0}, BufferError, "stream 0"),
    ("dl_device_triple", {"dl_device": (1, 0, 3)}, TypeError, "dl_device"),
    ("dl_device_str", {"dl_device": "cpu"}, TypeError, "dl_device"),
    ("dl_device_float", {"dl_device": (1.0, 0)}, TypeError, "dl_device"),
    ("dl_device_huge_type", {"dl_device": (2**70, 0)}, BufferError,
     "dl_device (1180591620717411303424, 0) differs"),
    ("dl_device_huge_id", {"dl_device": (1, 2**70)}, BufferError, "differs"),
    ("copy_str", {"copy": "yes"}, TypeError, "copy"),
    ("copy_int", {"copy": 1}, TypeError, "copy"),
    ("copy_true", {"copy": True}, BufferError, "copy=True"),
    ("shape_huge_extent", {"shape": (2**64, 1)}, ValueError, "shape"),
    ("shape_extent_above_int64", {"shape": (2**63, 1)}, ValueError, "shape"),
    ("shape_str_extent", {"shape": ("a", 4)}, TypeError, "shape"),
    ("shape_float_extent", {"shape": (2.0, 4)}, TypeError, "shape"),
    ("shape_int", {"shape": 8}, TypeError, "shape"),
    ("shape_too_many_elements", {"shape": (3, 4)}, ValueError, "shape"),
]


@pytest.mark.parametrize("kwargs, error, text",
                         [row[1:] for row in DLPACK_ERRORS], ids=[row[0] for row in DLPACK_ERRORS])
def test_dlpack_argument_errors_name_the_argument(ctx, kwargs, error, text):
    h = ctx.enqueue_create_host_buffer(8, dtype="float32")
    with pytest.raises(error) as raised:
        h.__dlpack__(**kwargs)
    message = str(raised.value)
    assert "Unable to cast" not in message
    assert text in message, message
    assert "dlpack" in message, message


@pytest.mark.parametrize("kwargs, versioned", [
    ({"max_version": (2**70, 0)}, True),
    ({"max_version": (1, 2**70)}, True),
    ({"max_version": (-2**70, 0)}, False),
    ({"max_version": (0, 2**70)}, False),
    ({"copy": False}, False),
    ({"dl_device": None, "copy": None, "stream": None}, False),
    ({"stream": -1}, False),
    ({"shape": [2, 4]}, False),
], ids=["max_version_huge_major", "max_version_huge_minor", "max_version_huge_negative_major",
        "max_version_zero_huge_minor", "copy_false", "all_none", "stream_minus_one", "shape_list"])
def test_dlpack_valid_large_or_unusual_arguments_are_accepted(ctx, kwargs, versioned):
    h = ctx.enqueue_create_host_buffer(8, dtype="float32")
    capsule = h.__dlpack__(**kwargs)
    name = "dltensor_versioned" if versioned else "dltensor"
    assert f'"{name}"' in repr(capsule), repr(capsule)


def test_dlpack_argument_errors_of_a_shaped_view(ctx):
    h = ctx.enqueue_create_host_buffer(8, dtype="float32")
    with pytest.raises(ValueError, match="shape"):
        h.shaped((2**64, 1)).__dlpack__()


class _Producer:
    """A DLPack producer whose __dlpack_device__ gives `device`."""

    def __init__(self, device):
        self.device = device
        self.array = numpy.zeros(4, dtype=numpy.float32)

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


FROM_DLPACK_ERRORS = [
    ("ctx_str", lambda: anydev.from_dlpack(numpy.zeros(4, numpy.float32), ctx="cpu"),
     TypeError, "ctx"),
    ("ctx_int", lambda: anydev.from_dlpack(numpy.zeros(4, numpy.float32), ctx=0),
     TypeError, "ctx"),
    ("device_triple", lambda: anydev.from_dlpack(_Producer((1, 0, 3))), TypeError,
     "__dlpack_device__"),
    ("device_str", lambda: anydev.from_dlpack(_Producer("cpu")), TypeError, "__dlpack_device__"),
    ("device_huge_type", lambda: anydev.from_dlpack(_Producer((2**70, 0))), anydev.UnsupportedError,
     "1180591620717411303424"),
    ("device_huge_id", lambda: anydev.from_dlpack(_Producer((2, 2**70))), anydev.OutOfRangeError,
     "1180591620717411303424"),
]


@pytest.mark.parametrize("call, error, text", [row[1:] for row in FROM_DLPACK_ERRORS],
                         ids=[row[0] for row in FROM_DLPACK_ERRORS])
def test_from_dlpack_argument_errors_name_the_argument(call, error, text):
    with pytest.raises(error) as raised:
        call()
    message = str(raised.value)
    assert "Unable to cast" not in message
    assert text in message and "from_dlpack" in message, message
