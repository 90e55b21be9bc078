# SPDX-License-Identifier: Apache-2.0
"""scripts/bench_report.py keeps one row per machine in the Machines table
(the row of the machine it runs on replaced, the others kept in order) and
writes the Scale section and its plot from anydev-scale-bench's JSON, or says
that it was not measured (run by ctest as scripts.bench_report_machines)."""
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

## Machines

| CPU | cores | caches (CPU 0) | transparent huge pages | glibc | run | worst copy ratio | worst fill ratio |
|---|---:|---|---|---|---|---:|---:|
| AMD EPYC | 2 | L3 32768K | `always [madvise] never` | 2.36 | old | 0.981 | 0.925 |
| Intel(R) Xeon(R) Platinum | 2 | L3 266240K | `always [madvise] never` | 2.36 | old | 0.610 | 0.810 |

## Notes

text
"""


def fail(message):
    sys.exit(message)


with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "performance.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(PAGE)
    rows = bench_report.machine_rows(path)
    if len(rows) != 2 or "AMD EPYC" not in rows[0] or "Intel" not in rows[1]:
        fail(f"rows read: {rows!r}")
    new_amd = "| AMD EPYC | 2 | L3 32768K | `always [madvise] never` | 2.36 | new | 1.010 | 0.990 |"
    merged = bench_report.merge_machine_rows(rows, new_amd)
    if merged != [new_amd, rows[1]]:
        fail(f"replacing this machine's row: {merged!r}")
    new_other = "| Some ARM | 4 | L2 1024K | `never` | 2.39 | new | 0.97 | 0.96 |"
    merged = bench_report.merge_machine_rows(rows, new_other)
    if merged != rows + [new_other]:
        fail(f"adding a machine: {merged!r}")
    if "Machines" not in bench_report.GENERATED_SECTIONS or \
            "Scale" not in bench_report.GENERATED_SECTIONS:
        fail("the Machines and Scale sections must be generated, not kept as hand-written")

    svg = os.path.join(folder, "performance-scale.svg")
    none = bench_report.scale_section(None, svg)
    if "Not measured" not in "\n".join(none) or os.path.exists(svg):
        fail(f"without scale.json: {none!r}")
    scale = {
        "quick": True,
        "enqueue": [{"threads": t, "stream": k, "ops_per_second": r}
                    for t, k, r in [(1, "own", 4e6), (2, "own", 6e6), (1, "shared", 4e6),
                                    (2, "shared", 2e6)]],
        "buffers": [{"live": n, "create_ns": c, "sub_buffer_ns": 50.0, "release_ns": 60.0,
                     "malloc_free_ns": 20.0, "first_create_ns": c, "heap_bytes_per_handle": 200.0,
                     "rss_bytes_per_handle": 150.0} for n, c in [(1000, 100.0), (10000, 150.0)]],
        "streams": {"live": 1000, "create_ns": 1.0, "use_ns": 2.0, "destroy_ns": 3.0,
                    "one_live_create_ns": 1.0, "one_live_use_ns": 2.0,
                    "one_live_destroy_ns": 3.0},
        "pool": {"release_threshold": 33554432, "ops": 10, "live_most": 32, "seconds": 0.1,
                 "median_ratio": 1.2, "max_ratio": 3.0, "large_live_samples": 0,
                 "large_live_median_ratio": 0.0, "large_live_max_ratio": 0.0, "hits": 1,
                 "misses": 2, "cached_before_release": 5, "cached_after_release": 0,
                 "in_use_after_release": 0, "series": [[5, 1.2]]},
    }
    text = "\n".join(bench_report.scale_section(scale, svg))
    for expected in ["## Scale",
                     "lowest ratio 0.50 (own streams 1.50, one shared stream 0.50), **missed**",
                     "largest spread 1.50×, **met**",
                     "200 bytes (heap), **met**", "median 1.20, **met**",
                     "returns every byte: **met**", "(performance-scale.svg)"]:
        if expected not in text:
            fail(f"{expected!r} not in the Scale section:\n{text}")
    # Paired ratios (anydev-scale-bench since the per-pass pairing): the
    # target is judged on the per-pass medians, not on the best rates.
    scale["enqueue"] = [{"threads": t, "stream": k, "ops_per_second": r, "cpu_ns_per_op": 90.0,
                         "paired_ratio": p, "paired_lowest": p - 0.05, "paired_highest": p + 0.05,
                         "passes": 9}
                        for t, k, r, p in [(1, "own", 10e6, 1.0), (2, "own", 19e6, 1.9),
                                           (1, "shared", 10e6, 1.0), (2, "shared", 11e6, 0.97)]]
    scale["line_transfer_ns"] = 64.0
    text = "\n".join(bench_report.scale_section(scale, svg))
    for expected in ["best of 9 passes", "| 2 | 19.00 | 1.90 [1.85-1.95] | 11.00 | 0.97 [0.92-1.02]",
                     "lowest ratio 0.97 (own streams 1.90, one shared stream 0.97), **missed**",
                     "in 64 ns on this machine", "4-byte copy takes 100 ns"]:
        if expected not in text:
            fail(f"{expected!r} not in the Scale section (paired):\n{text}")
    with open(svg, encoding="utf-8") as f:
        plot = f.read()
    if not plot.startswith("<svg") or "baseline malloc+free" not in plot:
        fail("the plot was not written")
    # Another backend's run (scale-<backend>.json): its own live-buffer
    # table and verdicts, the range it reached said when short of 10^6.
    other = {"backend": "opencl", "device": "PoCL", "quick": False,
             "buffers": [{"live": n, "create_ns": c, "sub_buffer_ns": 50.0, "release_ns": 60.0,
                          "malloc_free_ns": 20.0, "first_create_ns": c,
                          "heap_bytes_per_handle": 700.0, "rss_bytes_per_handle": 600.0}
                         for n, c in [(1000, 100.0), (100000, 300.0)]]}
    text = "\n".join(bench_report.scale_section(scale, svg, [other]))
    for expected in ["**Live buffers on opencl** (PoCL;", "| 100,000 | 300 | 50 | 60 | 20 |",
                     "(measured up to 100,000 live): largest spread 3.00×, **missed**",
                     "700 bytes (heap), **missed** (the driver's share included)"]:
        if expected not in text:
            fail(f"{expected!r} not in the Scale section (other backend):\n{text}")
print("ok: one Machines row per machine; the Scale section, its plot, other backends' tables")
