# SPDX-License-Identifier: Apache-2.0
"""Builds the `anydev` wheel with CMake (pyproject.toml names setuptools).

build_ext configures the source tree for the interpreter running it
(-DPython_EXECUTABLE=sys.executable), with tests, tools and examples off,
builds the library, its backend plugins and the extension, installs them
into a staging prefix laid out as the package:

    anydev/__init__.py ...              (build_py, from python/anydev)
    anydev/_anydev.<abi>.so             RUNPATH $ORIGIN/lib
    anydev/lib/libanydev.so.<SONAME>    the library (finds its plugins in lib/anydev/)
    anydev/lib/anydev/libanydev-backend-*.so

and copies those binaries into the wheel. Nothing outside the package is
needed at run time: no LD_LIBRARY_PATH, no ANYDEV_PLUGIN_PATH.

Environment: ANYDEV_CMAKE_ARGS (extra CMake arguments, space-separated),
ANYDEV_JOBS (parallel build jobs, default 2), CMAKE (the cmake to run),
ANYDEV_PIP_BUILD_BASE (setuptools' build folder, default build-python/ in
the source tree: the repository's build/ is CMake's).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BUILD_BASE = os.environ.get("ANYDEV_PIP_BUILD_BASE", "build-python")


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(\s*anydev\s+VERSION\s+([0-9.]+)", text)
    if not match:
        raise RuntimeError("setup.py: no `project(anydev VERSION x.y.z)` in CMakeLists.txt")
    return match.group(1)


class CMakeExtension(Extension):
    """The extension anydev._anydev, built by CMake rather than setuptools."""

    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Runs CMake for the extension and copies the package's binaries."""

    def build_extension(self, ext):
        cmake = os.environ.get("CMAKE", "cmake")
        build_dir = (Path(self.build_temp) / "cmake").resolve()
        stage = build_dir / "stage"
        args = [
            f"-DPython_EXECUTABLE={sys.executable}",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DANYDEV_BUILD_TESTS=OFF",
            "-DANYDEV_BUILD_TOOLS=OFF",
            "-DANYDEV_BUILD_EXAMPLES=OFF",
            "-DANYDEV_BUILD_BENCH=OFF",
            "-DANYDEV_BUILD_PYTHON=ON",
            # The package at the prefix's top, the library in anydev/lib/.
            "-DANYDEV_PYTHON_INSTALL_DIR=.",
            "-DCMAKE_INSTALL_LIBDIR=anydev/lib",
        ]
        try:
            import pybind11  # pip's pybind11 (build isolation); Debian's is found by CMake

            args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass
        args += shlex.split(os.environ.get("ANYDEV_CMAKE_ARGS", ""))
        subprocess.check_call([cmake, "-S", str(ROOT), "-B", str(build_dir)] + args)
        if not (build_dir / "python" / "CMakeFiles" / "anydev_python.dir").is_dir():
            raise RuntimeError(
                "setup.py: CMake did not configure the Python extension for "
                f"{sys.executable}: see the 'anydev: python package skipped' line above "
                "(it needs the interpreter's headers, pybind11 and dlpack/dlpack.h)")
        jobs = os.environ.get("ANYDEV_JOBS", "2")
        subprocess.check_call([cmake, "--build", str(build_dir), "--parallel", jobs])
        shutil.rmtree(stage, ignore_errors=True)
        subprocess.check_call([cmake, "--install", str(build_dir), "--prefix", str(stage)])
        self.copy_binaries(stage / "anydev", Path(self.get_ext_fullpath(ext.name)).parent)

    def copy_binaries(self, package, dest):
        """The extension, the library under its SONAME and the plugins."""
        extensions = sorted(package.glob("_anydev*.so"))
        if len(extensions) != 1:
            raise RuntimeError(f"setup.py: expected one _anydev*.so in {package}, found "
                               f"{[p.name for p in extensions]}")
        (dest / "lib" / "anydev").mkdir(parents=True, exist_ok=True)
        shutil.copy2(extensions[0], dest / extensions[0].name)
        lib = package / "lib"
        # libanydev.so -> libanydev.so.<SONAME> -> the real file: the wheel
        # holds one copy, under the SONAME the extension NEEDs (a wheel keeps
        # no symbolic links).
        sonames = [p for p in lib.glob("libanydev.so.*") if p.is_symlink()] or \
            [p for p in lib.glob("libanydev.so.*")]
        if not sonames:
            raise RuntimeError(f"setup.py: no libanydev.so.* in {lib}")
        for name in sonames:
            shutil.copy2(name.resolve(), dest / "lib" / name.name)
        for plugin in sorted((lib / "anydev").glob("libanydev-backend-*.so")):
            shutil.copy2(plugin, dest / "lib" / "anydev" / plugin.name)


def require_wheel_package():
    """setuptools before 70.1 (Debian 12 has 66) builds wheels only with the
    `wheel` package, which a fresh venv lacks; without it pip's
    --no-build-isolation build ends in "invalid command 'bdist_wheel'" (its
    metadata step, dist_info, already needs bdist_wheel). Say what to do
    instead, before any of the build runs."""
    if not {"bdist_wheel", "dist_info"} & set(sys.argv[1:]):
        return
    try:
        import wheel  # noqa: F401
    except ImportError:
        sys.exit(
            f"setup.py: cannot build a wheel for {sys.executable}: its setuptools needs the "
            "`wheel` package, which it does not have. Offline, make the venv with "
            "`python3 -m venv --system-site-packages` (Debian's python3-wheel is then seen); "
            "online, drop --no-build-isolation or `pip install wheel` first (docs/python.md)")


require_wheel_package()
(ROOT / BUILD_BASE).mkdir(parents=True, exist_ok=True)
setup(
    version=project_version(),
    packages=["anydev"],
    package_dir={"anydev": "python/anydev"},
    package_data={"anydev": ["_anydev.pyi", "py.typed"]},
    ext_modules=[CMakeExtension("anydev._anydev")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}},
    zip_safe=False,
)
