#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/check-comments finds each kind of narrating comment in each
language it reads, and nothing in code or string literals (run by ctest as
scripts.check_comments_catches).

Every planted line that must be reported carries the word BAD; the test
writes the files to a temporary folder, runs the checker over it and expects
exit status 1 with exactly those lines reported.
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKER = os.path.join(ROOT, "scripts", "check-comments")

FILES = {
    "bad.cpp": """// SPDX-License-Identifier: Apache-2.0
#include <cstdio>  // a trailing comment is read too
#define LIMIT 4096
// BAD: the fix of issue 19 made this faster
// BAD: see Issue #12 for the numbers
// BAD: fixed in #12, see #13
int f();  // BAD: since (#42), not before
/* BAD: with the pairing before 1e874ff */
/* a block comment whose second line
   BAD: names 0bd65d4c, a commit */
// BAD: measured on the 2-core AMD EPYC VM
// BAD: the Intel Xeon VM of December 2026
// BAD: a 16-core machine gave 1.2x
// BAD: rerun in March 2027
const char* s = "issue 19, 1e874ff, AMD EPYC, December 2026";  // the data, not history
const char* r = R"x(// issue 20 in a raw string, 0bd65d4)x";
const char c = '#';
const unsigned long long kMask = 0xdeadbeef12ull;  // 0xdeadbeef12 is a literal
const int kMillion = 1'000'000;  // digit separators are not char literals
int abc1234def_ok = 3;  // deadbeef and 4096 and fp16 and sha256 are no hashes
// The name field reads "cpu: AMD EPYC 7B13" or "NVIDIA H200".
// Device #0 is taken, #1 free.
// An NVIDIA H200 holds 141 GB.
""",
    "bad.py": '''# SPDX-License-Identifier: Apache-2.0
"""A module docstring.

BAD: as issue 20 found, on an Intel Xeon VM
"""
VALUE = "issue 19 and 1e874ff in a string"  # a string is data
# BAD: fixed in 6e7814a


def f():
    """BAD: a function docstring naming issue 7."""
    return "(#12)"  # the string is no comment
''',
    "run-thing": """#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
args=(a b)
echo "${#args[@]} # issue 19 in a string" '# issue 20 in single quotes'
# BAD: on the 2-core VM this took 40 minutes
count=$#  # BAD: issue 3
python3 - <<'PY'
# BAD: a comment of the here-document naming issue 5
print("issue 6 # not a comment")
PY
echo done  # the end
""",
    "CMakeLists.txt": """# SPDX-License-Identifier: Apache-2.0
# BAD: the tool's options (issue 18 item 6)
message(STATUS "issue 19 # in a quoted argument")
#[[ BAD: a bracket comment naming 819068c
    BAD: and the AMD EPYC VM on its second line ]]
set(X [[issue 20 in a bracket argument]])
""",
    "ignored.txt": "# issue 19 in a file the checker does not read\n",
}


def main():
    with tempfile.TemporaryDirectory() as folder:
        expected = set()
        for name, text in FILES.items():
            path = os.path.join(folder, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            if name == "ignored.txt":
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if "BAD" in line:
                    expected.add(f"{path}:{number}")
        run = subprocess.run([sys.executable, CHECKER, folder], capture_output=True, text=True)
        reported = {":".join(line.split(":")[:2]) for line in run.stdout.splitlines()}
        failures = []
        if run.returncode != 1:
            failures.append(f"exit status {run.returncode}, expected 1")
        for hit in sorted(expected - reported):
            failures.append(f"not reported: {hit}")
        for hit in sorted(reported - expected):
            failures.append(f"reported but fine: {hit}")
        if failures:
            print("\n".join(failures))
            print("--- stdout\n" + run.stdout + "--- stderr\n" + run.stderr)
            return 1
        # A folder with nothing to report passes.
        for name in FILES:
            os.unlink(os.path.join(folder, name))
        with open(os.path.join(folder, "good.h"), "w", encoding="utf-8") as f:
            f.write("// SPDX-License-Identifier: Apache-2.0\n// Why, not when.\nint g();\n")
        clean = subprocess.run([sys.executable, CHECKER, folder], capture_output=True, text=True)
        if clean.returncode != 0:
            print(f"a clean folder: exit status {clean.returncode}\n{clean.stdout}{clean.stderr}")
            return 1
    print(f"check-comments reported the {len(expected)} planted lines and nothing else")
    return 0


if __name__ == "__main__":
    sys.exit(main())
