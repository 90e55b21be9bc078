#!/usr/bin/env bash
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
#                             interleaved so that drift hits both sides alike.
#                             The table gives, per side, the median and the best
#                             repetition; the best is the robust figure on a
#                             shared machine, where other processes only ever
#                             slow a repetition down.
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
# run_name: opencl/<op>/<size>MiB/<side>/real_time
pattern = re.compile(r"^opencl/([a-z0-9_]+)/(\d+)MiB/(anydev|raw)")
samples, errors = {}, {}
for b in run["benchmarks"]:
    m = pattern.match(b.get("run_name", b["name"]))
    if not m:
        continue
    key = (m.group(1), int(m.group(2)))
    if b.get("error_occurred"):
        errors[key] = b.get("error_message", "error")
        continue
    if b.get("run_type", "iteration") != "iteration":
        continue
    samples.setdefault(key, {}).setdefault(m.group(3), []).append(b["bytes_per_second"])

ops = ["copy_h2d", "copy_d2h", "copy_d2d", "fill_1", "fill_4", "fill_8", "fill_16"]
keys = sorted(set(samples) | set(errors),
              key=lambda k: (ops.index(k[0]) if k[0] in ops else 99, k[1]))
gib = float(1 << 30)
reps = max((len(v) for s in samples.values() for v in s.values()), default=0)
print(f"OpenCL device: {ctx.get('anydev_device', '?')}  ")
print(f"Date: {ctx.get('date', '?')}, host: {ctx.get('host_name', '?')}, "
      f"{ctx.get('num_cpus', '?')} CPUs, load average "
      f"{', '.join('%.2f' % x for x in ctx.get('load_avg', []))}, {reps} repetitions per "
      f"benchmark, randomly interleaved  ")
print(f"GiB/s per side: median / best repetition; ratios anydev / raw (target >= {target})")
print()
print("| operation | size | raw GiB/s | anydev GiB/s | ratio (median) | ratio (best) |")
print("|---|---:|---:|---:|---:|---:|")
worst_best = worst_median = None
for key in keys:
    op, mib = key
    if key in errors:
        print(f"| {op} | {mib} MiB | error | error | {errors[key]} | |")
        worst_best = worst_median = 0.0
        continue
    s = samples[key]
    if "raw" not in s or "anydev" not in s:
        continue
    med = {side: statistics.median(v) for side, v in s.items()}
    best = {side: max(v) for side, v in s.items()}
    r_med = med["anydev"] / med["raw"]
    r_best = best["anydev"] / best["raw"]
    if mib >= 1:
        worst_med = r_med if worst_median is None else min(worst_median, r_med)
        worst_median = worst_med
        worst_best = r_best if worst_best is None else min(worst_best, r_best)
    print(f"| {op} | {mib} MiB | {med['raw'] / gib:.2f} / {best['raw'] / gib:.2f} "
          f"| {med['anydev'] / gib:.2f} / {best['anydev'] / gib:.2f} "
          f"| {r_med:.3f} | {r_best:.3f} |")
print()
if worst_best is None:
    print("No complete pair measured.")
else:
    verdict = "met" if worst_best >= target else "NOT met"
    print(f"Lowest ratio at >= 1 MiB: best {worst_best:.3f} (target {target}: {verdict}); "
          f"median {worst_median:.3f}")
PY
