# SPDX-License-Identifier: Apache-2.0
"""scripts/check-include-cycles catches what it is for: an include cycle
between two components, and a folder of src/ that includes a folder above it
(support < layers < runtime < memory < api); a tree that keeps both rules
passes (run by ctest as scripts.include_cycles_rules)."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "check-include-cycles")


def tree(files):
    folder = tempfile.mkdtemp(prefix="include-cycles-")
    for rel, text in files.items():
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return folder


def run(folder):
    done = subprocess.run([sys.executable, SCRIPT, folder], capture_output=True, text=True,
                          check=False)
    return done.returncode, done.stdout + done.stderr


def expect(name, files, rc, *needles):
    code, out = run(tree(files))
    if code != rc or any(n not in out for n in needles):
        print(f"FAIL {name}: exit {code} (want {rc}), output:\n{out}")
        return 1
    print(f"ok   {name}")
    return 0


failures = 0
failures += expect("downward includes pass", {
    "support/status.h": "",
    "runtime/registry.h": '#include "support/status.h"\n',
    "api/api_x.cpp": '#include "runtime/registry.h"\n#include "support/status.h"\n',
}, 0)
failures += expect("an arrow up is reported with its line", {
    "support/status.h": "",
    "memory/pool.h": "",
    "runtime/registry.cpp": '#include "support/status.h"\n#include "memory/pool.h"\n',
}, 1, 'registry.cpp:2: #include "memory/pool.h": runtime/ may not include memory/')
failures += expect("a cycle is reported with the lines that close it", {
    "a.h": '#include "b.h"\n',
    "b.cpp": '#include "a.h"\n',
    "b.h": "",
}, 1, "include cycle among: a, b", 'b.cpp:1: #include "a.h"  (b -> a)')
failures += expect("a folder that is not a room is checked for cycles only", {
    "cpu_stream.h": '#include "cpu_task.h"\n',
    "cpu_task.h": "",
}, 0)
sys.exit(1 if failures else 0)
