# SPDX-License-Identifier: Apache-2.0
"""scripts/bench_report.py keeps the sections of docs/performance.md that it
does not generate, and judges the issue's sizes apart from the others (run by
ctest as scripts.bench_report_keeps_sections)."""
import importlib.util
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location(
    "bench_report", os.path.join(ROOT, "scripts", "bench_report.py"))
bench_report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_report)

PAGE = """# Performance

## Method

generated text

## Churn, limits and the pool at scale

| what | before | after |
|---|---|---|
| kept row | 1 | 2 |

## cpu backend: fills (GB/s)

generated table

## Driver calls per operation (cuda, counted on the emulator)

kept table

## Notes

generated notes
"""

with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "performance.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(PAGE)
    kept = bench_report.measured_elsewhere(path, bench_report.GENERATED_SECTIONS)
    expected = [
        "## Churn, limits and the pool at scale\n\n| what | before | after |\n|---|---|---|\n"
        "| kept row | 1 | 2 |",
        "## Driver calls per operation (cuda, counted on the emulator)\n\nkept table",
    ]
    if kept != expected:
        sys.exit(f"kept sections: {kept!r}\nexpected: {expected!r}")
    missing = bench_report.measured_elsewhere(os.path.join(folder, "none.md"),
                                              bench_report.GENERATED_SECTIONS)
    if missing != []:
        sys.exit(f"a page that does not exist kept {missing!r}")

RATIOS = [(0.93, "copy_d2d 4MiB"), (1.02, "copy_h2d 1MiB"), (0.97, "copy_h2h 1024MiB"),
          (0.90, "fill_16 64MiB")]
checks = [
    (bench_report.lowest(RATIOS), (0.90, "fill_16 64MiB")),
    (bench_report.lowest(RATIOS, bench_report.ISSUE_SIZES), (0.97, "copy_h2h 1024MiB")),
    (bench_report.lowest(RATIOS, ("256MiB",)), None),
    (bench_report.lowest([]), None),
]
for got, expected in checks:
    if got != expected:
        sys.exit(f"lowest: {got!r}, expected {expected!r}")
print("ok: both hand-written sections kept, generated ones not; the issue's sizes judged apart")
