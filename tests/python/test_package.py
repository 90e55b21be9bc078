# SPDX-License-Identifier: Apache-2.0
"""The package as Python users meet it: `python -m anydev`, type stubs and
py.typed, docstrings, reprs, shape/ndim/device, context managers (stream
scopes, host mappings), OutOfRangeError on element access, a bounded repr
of large device buffers. ANYDEV_EXPECT_PACKAGE_UNDER=<folder> (set by
scripts/check-pip) also asserts the package imported is the installed one."""
import inspect
import json
import os
import subprocess
import sys

import pytest

import anydev
from anydev import _anydev

PACKAGE_DIR = os.path.dirname(anydev.__file__)


def test_package_is_the_expected_one():
    expected = os.environ.get("ANYDEV_EXPECT_PACKAGE_UNDER")
    if not expected:
        pytest.skip("ANYDEV_EXPECT_PACKAGE_UNDER not set (only scripts/check-pip sets it)")
    assert os.path.realpath(anydev.__file__).startswith(os.path.realpath(expected) + os.sep), \
        f"anydev imported from {anydev.__file__}, not from under {expected}"


def test_python_dash_m_anydev_prints_the_system_report():
    env = dict(os.environ, ANYDEV_BACKEND="cpu")
    text = subprocess.run([sys.executable, "-m", "anydev"], env=env, check=True,
                          capture_output=True, text=True, timeout=120).stdout
    assert text.startswith(f"anydev {anydev.__version__}\n")
    assert "  cpu: available" in text and "    0: " in text
    report = json.loads(subprocess.run([sys.executable, "-m", "anydev", "--json"], env=env,
                                       check=True, capture_output=True, text=True,
                                       timeout=120).stdout)
    cpu = [b for b in report["backends"] if b["name"] == "cpu"][0]
    assert cpu["available"] and cpu["devices"][0]["memory_total"] > 0
    assert report["package"] == PACKAGE_DIR
    bad = subprocess.run([sys.executable, "-m", "anydev", "--bogus"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown arguments ['--bogus']" in bad.stderr


def _public_names(namespace):
    return {n for n in namespace if not n.startswith("_") or n == "__version__"}


def test_stubs_and_py_typed_ship_and_match_the_module():
    assert os.path.isfile(os.path.join(PACKAGE_DIR, "py.typed"))
    stub = os.path.join(PACKAGE_DIR, "_anydev.pyi")
    assert os.path.isfile(stub)
    namespace = {}
    exec(compile(open(stub).read(), stub, "exec"), namespace)  # the stub is valid Python
    typing_names = {"__builtins__", "__annotations__", "Any", "Callable", "List", "Optional",
                    "Tuple", "Union", "DType"}
    stub_names = _public_names(set(namespace) - typing_names) | set(namespace["__annotations__"])
    module_names = _public_names(dir(_anydev)) - {"__doc__", "__file__", "__loader__",
                                                   "__name__", "__package__", "__spec__"}
    assert stub_names == module_names
    # Every public method of every class in the stub exists in the module.
    for name in stub_names:
        if inspect.isclass(namespace.get(name)) and not issubclass(namespace[name], BaseException):
            for member in vars(namespace[name]):
                if not member.startswith("_") or member in ("__enter__", "__exit__",
                                                            "__dlpack__"):
                    assert hasattr(getattr(_anydev, name), member), f"{name}.{member}"


def _documented(value):
    """True when `value` (a function, method or property) has a docstring;
    pybind11 functions must have more than their generated signature line."""
    if isinstance(value, property):
        return bool((value.__doc__ or "").strip())
    doc = (getattr(value, "__doc__", None) or "").strip()
    if type(value).__name__ == "instancemethod" or inspect.isbuiltin(value):
        return len([line for line in doc.splitlines() if line.strip()]) >= 2
    return bool(doc)


def test_every_public_class_and_method_has_a_docstring():
    missing = []
    for name in dir(anydev):
        obj = getattr(anydev, name)
        if name.startswith("_") or not callable(obj):
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member, value in vars(obj).items():
                if member.startswith("_") and member not in ("__enter__", "__exit__",
                                                             "__getitem__", "__setitem__",
                                                             "__dlpack__", "__dlpack_device__"):
                    continue
                if callable(value) or isinstance(value, property):
                    if not _documented(value):
                        missing.append(f"{name}.{member}")
    assert not missing, f"no docstring: {missing}"


def test_buffers_have_shape_ndim_and_device(ctx):
    d = ctx.enqueue_create_buffer(12, dtype="int32")
    h = ctx.enqueue_create_host_buffer(0, dtype="float32")
    assert d.shape == (12,) and d.ndim == 1 and h.shape == (0,)
    assert repr(d.device) == "DeviceContext(0, api='cpu')" and d.device.api() == "cpu"
    assert d[2:5].shape == (3,)


def test_stream_and_event_reprs_name_their_device(ctx):
    assert repr(ctx.stream()) == "DeviceStream(api='cpu', device=0)"  # cpu: no native handle
    event = ctx.create_event()
    ctx.stream().record_event(event)
    event.synchronize()
    assert repr(event) == "DeviceEvent(api='cpu', device=0, complete=True)"


def test_element_access_out_of_range_raises_out_of_range_error(ctx):
    for buf in [ctx.enqueue_create_host_buffer(4, dtype="float32"),
                ctx.enqueue_create_buffer(4, dtype="float32")]:
        for index in [4, -5, 100]:
            with pytest.raises(anydev.OutOfRangeError) as info:
                buf[index]
            assert isinstance(info.value, IndexError)
            assert info.value.status == "out_of_range" and info.value.code == 2
            assert f"index {index} is out of range for a buffer of 4 elements" in str(info.value)
            with pytest.raises(anydev.OutOfRangeError):
                buf[index] = 1.0


def test_stream_scope_synchronizes_on_exit(ctx):
    s = ctx.create_stream()
    h = ctx.enqueue_create_host_buffer(1 << 16, dtype="float32")
    with ctx.with_stream(s) as scoped:
        assert isinstance(scoped, anydev.DeviceContext)
        scoped.enqueue_memset(h, 3.0)  # on stream s
    assert h[(1 << 16) - 1] == 3.0  # exit synchronized s
    with s as entered:
        assert entered is s
    with ctx as c:
        assert c is ctx
        c.enqueue_memset(h, 4.0)
    assert h[0] == 4.0


def test_host_mapping_copies_back_on_exit(ctx):
    d = ctx.enqueue_create_buffer(8, dtype="float32")
    d.enqueue_fill(1.0)
    with d.map_to_host() as h:
        assert isinstance(h, anydev.HostBuffer) and h[7] == 1.0
        h[3] = 9.0
    assert d[3] == 9.0 and d[2] == 1.0
    mapping = d.map_to_host()
    mapping.host[0] = 5.0
    mapping.unmap()
    assert d[0] == 5.0 and "unmapped" in repr(mapping)
    with pytest.raises(anydev.InvalidStateError, match="already unmapped"):
        mapping.unmap()


_BOUNDED_REPR = r"""
import resource, sys
import anydev
ctx = anydev.DeviceContext(0, api="cpu")
d = ctx.enqueue_create_buffer({count}, dtype="uint8")  # address space, never touched whole
d[0] = 1; d[{count} - 1] = 2
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (used + {headroom}, hard))
print(repr(d))
"""


def test_repr_of_a_large_device_buffer_copies_only_what_it_prints():
    if "asan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("AddressSanitizer reserves terabytes of address space: RLIMIT_AS unusable")
    # 1 GiB of device memory on the cpu backend, 256 MiB of address space to
    # spare: copying the whole buffer to the host for repr would not fit.
    code = _BOUNDED_REPR.format(count=1 << 30, headroom=256 << 20)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, ANYDEV_BACKEND="cpu"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "DeviceBuffer([1, 0, 0, ..., 0, 0, 2])"


def test_repr_of_large_buffers_matches_the_c_abi_text(ctx):
    d = ctx.enqueue_create_buffer(2000, dtype="int16")
    d.enqueue_fill(7)
    h = ctx.enqueue_create_host_buffer(2000, dtype="int16")
    h.enqueue_fill(7)
    ctx.synchronize()
    d[1999] = 5
    h[1999] = 5
    assert repr(d) == "DeviceBuffer([7, 7, 7, ..., 7, 7, 5])"
    assert repr(h) == "HostBuffer([7, 7, 7, ..., 7, 7, 5])"
    small = ctx.enqueue_create_buffer(3, dtype="int16")
    small.enqueue_fill(1)
    assert repr(small) == "DeviceBuffer([1, 1, 1])"
