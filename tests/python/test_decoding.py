# SPDX-License-Identifier: Apache-2.0
"""Text from the library that is not UTF-8 (a plugin folder named b"caf\\xe9"
in ANYDEV_PLUGIN_PATH, a driver's device name) reaches Python with each
invalid byte written as \\xHH, like the control characters the library
already escapes: errors stay anydev errors with their message, backends()
and log messages carry the text, and `python -m anydev` reports it. Each
case runs in a fresh interpreter, because the plugin folders are read once
per process. See docs/python.md, "Text from the library"."""
import json
import os
import subprocess
import sys

import pytest

ESCAPED = "caf\\xe9"  # how the folder's name reads in Python


@pytest.fixture
def latin1_plugin_folder(tmp_path):
    """A plugin folder named b"caf\\xe9" (Latin-1, not UTF-8) holding a
    plugin file that is not a shared library: backend "broken" is found
    there and cannot be opened, so its reason names the folder."""
    folder = os.path.join(os.fsencode(tmp_path), b"caf\xe9")
    os.mkdir(folder)
    with open(os.path.join(folder, b"libanydev-backend-broken.so"), "wb") as plugin:
        plugin.write(b"not a shared library\n")
    env = {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}
    env[b"ANYDEV_PLUGIN_PATH"] = folder
    env[b"ANYDEV_BACKEND"] = b"cpu"
    return env


def _python(env, *args, timeout=120):
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, timeout=timeout)


def test_unavailable_backend_in_a_latin1_folder_raises_backend_unavailable(
        latin1_plugin_folder):
    done = _python(latin1_plugin_folder, "-c", """if True:
        import anydev
        try:
            anydev.DeviceContext(0, api="broken")
        except anydev.BackendUnavailableError as e:
            print("raised", type(e).__name__, e.status)
            print(str(e))
        else:
            print("no error")
        """)
    out = done.stdout.decode("ascii", "backslashreplace")
    err = done.stderr.decode("ascii", "backslashreplace")
    assert done.returncode == 0, f"exit {done.returncode}\n{out}\n{err}"
    assert out.startswith("raised BackendUnavailableError backend_unavailable\n"), out + err
    assert ESCAPED in out, f"the message does not name the folder as {ESCAPED}:\n{out}"


def test_backends_and_log_messages_carry_latin1_paths_escaped(latin1_plugin_folder):
    done = _python(latin1_plugin_folder, "-c", """if True:
        import anydev
        seen = []
        anydev.set_log_level("debug")
        anydev.set_log_handler(lambda level, message: seen.append(message))
        broken = [b for b in anydev.backends() if b.name == "broken"][0]
        print("reason:", broken.reason)
        print("library:", broken.library)
        print("repr:", repr(broken))
        anydev.set_log_handler(None)  # hands over what is queued
        print("logged:", " / ".join(m for m in seen if "caf" in m))
        """)
    out = done.stdout.decode("ascii", "backslashreplace")
    err = done.stderr.decode("ascii", "backslashreplace")
    assert done.returncode == 0, f"exit {done.returncode}\n{out}\n{err}"
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert ESCAPED in lines["reason"] and ESCAPED in lines["library"], out
    assert ESCAPED in lines["repr"], out
    assert ESCAPED in lines["logged"], f"no log message names the folder:\n{out}\n{err}"


@pytest.mark.parametrize("args", [[], ["--json"]], ids=["text", "json"])
def test_system_report_with_a_latin1_plugin_folder_has_no_traceback(latin1_plugin_folder, args):
    done = _python(latin1_plugin_folder, "-m", "anydev", *args)
    out = done.stdout.decode("ascii", "backslashreplace")
    err = done.stderr.decode("ascii", "backslashreplace")
    assert done.returncode == 0 and "Traceback" not in err, f"exit {done.returncode}\n{out}\n{err}"
    if args:
        report = json.loads(out)
        broken = [b for b in report["backends"] if b["name"] == "broken"][0]
        assert not broken["available"] and ESCAPED in broken["reason"], broken
    else:
        assert "  broken: unavailable: " in out and ESCAPED in out, out
