#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs anydev-opencl-bench (anydev's OpenCL backend beside raw OpenCL calls
# on the same device, in one run) and prints the anydev/raw ratio table in
# markdown on stdout; Google Benchmark's own output goes to stderr.
#
# Usage: bench/run-opencl.sh [BUILD_DIR] [extra Google Benchmark flags]
#   BUILD_DIR defaults to build; configure it with
#   -DCMAKE_BUILD_TYPE=Release -DANYDEV_BUILD_BENCH=ON and build the target
#   anydev-opencl-bench.
# Environment:
#   ANYDEV_BENCH_REPETITIONS  repetitions per benchmark (default 10), randomly
#                             interleaved.
# The table gives, per operation and size: each side's bandwidth measured on
# its own (median of the repetitions) and their ratio, and the "paired" ratio:
# the two sides alternated operation by operation, median of the per-pair
# ratios (then the median over repetitions). On a shared machine, where other
# processes' load changes from one second to the next, the paired ratio is the
# figure to judge by; the verdict line uses it.
#   ANYDEV_BENCH_MIN_RATIO    the target ratio reported against (default 0.95)
#   ANYDEV_BENCH_OPENCL_DEVICE  anydev's OpenCL device index (default 0)
set -euo pipefail

build_dir=${1:-build}
[[ $# -gt 0 ]] && shift
bin="$build_dir/bin/anydev-opencl-bench"
if [[ ! -x $bin ]]; then
  echo "run-opencl.sh: no $bin; configure with -DCMAKE_BUILD_TYPE=Release" \
       "-DANYDEV_BUILD_BENCH=ON and build the target anydev-opencl-bench" >&2
  exit 1
fi

json=$(mktemp)
trap 'rm -f "$json"' EXIT
status=0
"$bin" --benchmark_repetitions="${ANYDEV_BENCH_REPETITIONS:-10}" \
       --benchmark_enable_random_interleaving=true \
       --benchmark_display_aggregates_only=true \
       --benchmark_out="$json" --benchmark_out_format=json "$@" >&2 || status=$?
if [[ $status -eq 77 ]]; then
  echo "run-opencl.sh: the opencl backend is unavailable (see above); nothing measured" >&2
  exit 77
elif [[ $status -ne 0 ]]; then
  exit "$status"
fi

python3 - "$json" "${ANYDEV_BENCH_MIN_RATIO:-0.95}" <<'PY'
import json, re, statistics, sys

path, target = sys.argv[1], float(sys.argv[2])
with open(path) as f:
    run = json.load(f)
ctx = run["context"]
# run_name: opencl/<op>/<size>MiB/<anydev|raw|paired>/real_time
pattern = re.compile(r"^opencl/([a-z0-9_]+)/(\d+)MiB/(anydev|raw|paired)")
samples, errors = {}, {}
for b in run["benchmarks"]:
    m = pattern.match(b.get("run_name", b["name"]))
    if not m:
        continue
    key, side = (m.group(1), int(m.group(2))), m.group(3)
    if b.get("error_occurred"):
        errors[key] = b.get("error_message", "error")
        continue
    if b.get("run_type", "iteration") != "iteration":
        continue
    value = b["ratio"] if side == "paired" else b["bytes_per_second"]
    samples.setdefault(key, {}).setdefault(side, []).append(value)

ops = ["copy_h2d", "copy_d2h", "copy_d2d", "fill_1", "fill_4", "fill_8", "fill_16"]
keys = sorted(set(samples) | set(errors),
              key=lambda k: (ops.index(k[0]) if k[0] in ops else 99, k[1]))
gib = float(1 << 30)
reps = max((len(v) for s in samples.values() for v in s.values()), default=0)
print(f"OpenCL device: {ctx.get('anydev_device', '?')}  ")
print(f"Date: {ctx.get('date', '?')}, host: {ctx.get('host_name', '?')}, "
      f"{ctx.get('num_cpus', '?')} CPUs, load average "
      f"{', '.join('%.2f' % x for x in ctx.get('load_avg', []))}, {reps} repetitions, "
      f"randomly interleaved  ")
print(f"Ratios are anydev / raw bandwidth (higher is better; target >= {target}).")
print()
print("| operation | size | raw GiB/s | anydev GiB/s | ratio (separate) | ratio (paired) |")
print("|---|---:|---:|---:|---:|---:|")
worst_paired = worst_separate = None
for key in keys:
    op, mib = key
    if key in errors:
        print(f"| {op} | {mib} MiB | error | error | {errors[key]} | |")
        worst_paired = worst_separate = 0.0
        continue
    s = samples[key]
    raw = statistics.median(s["raw"]) if "raw" in s else None
    any_ = statistics.median(s["anydev"]) if "anydev" in s else None
    separate = any_ / raw if raw and any_ else None
    paired = statistics.median(s["paired"]) if "paired" in s else None
    if mib >= 1 and separate is not None:
        worst_separate = separate if worst_separate is None else min(worst_separate, separate)
    if mib >= 1 and paired is not None:
        worst_paired = paired if worst_paired is None else min(worst_paired, paired)
    fmt = lambda x, scale=1.0, d=2: "-" if x is None else f"{x / scale:.{d}f}"
    print(f"| {op} | {mib} MiB | {fmt(raw, gib)} | {fmt(any_, gib)} | {fmt(separate, d=3)} "
          f"| {fmt(paired, d=3)} |")
print()
if worst_paired is None:
    print("No paired measurement.")
else:
    verdict = "met" if worst_paired >= target else "NOT met"
    print(f"Lowest paired ratio at >= 1 MiB: {worst_paired:.3f} (target {target}: {verdict}); "
          f"lowest ratio of separate runs: "
          f"{'-' if worst_separate is None else '%.3f' % worst_separate}")
PY
