# SPDX-License-Identifier: Apache-2.0
"""scripts/setup's anydev.pth (install_python_path): there is one per
interpreter, so setting up a second clone repoints `import anydev`; that is
said in a WARNING line naming the old and the new folder, and not when the
.pth already names this build. The function is taken out of scripts/setup
and run with ANYDEV_SETUP_SITE_DIR set to a temporary folder, so the real
site-packages is never touched. See docs/python.md, "Other ways to get the
package"."""
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SETUP = os.path.join(ROOT, "scripts", "setup")


def _install_python_path(build_dir, site):
    text = open(SETUP).read()
    function = re.search(r"^install_python_path\(\) \{\n.*?^\}\n", text, re.M | re.S)
    assert function, "scripts/setup has no install_python_path function"
    # Without the override the function would write the real site-packages.
    assert "ANYDEV_SETUP_SITE_DIR" in function.group(0), \
        "install_python_path does not take ANYDEV_SETUP_SITE_DIR: not run"
    script = ('anydev_log() { printf "[setup] %s\\n" "$*" >&2; }\n' + function.group(0) +
              'install_python_path "$1"\n')
    env = dict(os.environ, ANYDEV_SETUP_SITE_DIR=str(site))
    return subprocess.run(["bash", "-c", script, "setup", str(build_dir)], env=env,
                          capture_output=True, text=True, timeout=120)


def _fake_build(folder):
    package = folder / "python" / "anydev"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    return folder


@pytest.fixture
def builds(tmp_path):
    if not os.access("/usr/bin/python3", os.X_OK):
        pytest.skip("install_python_path is for /usr/bin/python3, which is absent")
    return _fake_build(tmp_path / "clone1"), _fake_build(tmp_path / "clone2"), tmp_path / "site"


def test_second_clone_repointing_anydev_pth_warns_naming_both_folders(builds):
    first, second, site = builds
    done = _install_python_path(first, site)
    assert (site / "anydev.pth").read_text() == f"{first}/python\n", done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    done = _install_python_path(second, site)
    assert (site / "anydev.pth").read_text() == f"{second}/python\n", done.stderr
    warnings = [line for line in done.stderr.splitlines() if "WARNING" in line]
    assert len(warnings) == 1, done.stderr
    assert f"{first}/python" in warnings[0] and f"{second}/python" in warnings[0], warnings[0]


def test_setting_up_the_same_clone_again_does_not_warn(builds):
    first, _, site = builds
    _install_python_path(first, site)
    done = _install_python_path(first, site)
    assert (site / "anydev.pth").read_text() == f"{first}/python\n", done.stderr
    assert "WARNING" not in done.stderr, done.stderr
