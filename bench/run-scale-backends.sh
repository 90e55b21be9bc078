#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the live-buffer part of anydev-scale-bench (10^3 .. 10^6 live 64-byte
# device buffers) on every pooled backend other than cpu that this build can
# reach: opencl (the installed ICD, PoCL here) and the cuda, hip and
# level_zero emulators of tests/emulators, selected by environment as the
# conformance runs select them. Writes OUT_DIR/scale-<backend>.json, which
# scripts/bench_report.py turns into a table each in the Scale section of
# docs/performance.md. The emulators are test fixtures: their figures hold
# the emulator's own costs (see the Notes there), not a vendor driver's.
#
# Usage: bench/run-scale-backends.sh [BUILD_DIR] [OUT_DIR]
#   BUILD_DIR defaults to build (configured with -DANYDEV_BUILD_BENCH=ON,
#   targets anydev-scale-bench, the backend plugins and the emulators built);
#   OUT_DIR defaults to BUILD_DIR/bench-results.
# Environment:
#   ANYDEV_SCALE_MAX_LIVE  the largest live count (default 1000000)
set -euo pipefail

build_dir=${1:-build}
out_dir=${2:-$build_dir/bench-results}
bin="$build_dir/bin/anydev-scale-bench"
if [[ ! -x $bin ]]; then
  echo "run-scale-backends.sh: no $bin; configure with -DANYDEV_BUILD_BENCH=ON and build" \
       "the target anydev-scale-bench" >&2
  exit 1
fi
mkdir -p "$out_dir"
emulators="$build_dir/tests/emulators"
max_live=${ANYDEV_SCALE_MAX_LIVE:-1000000}

# run BACKEND FILE-THAT-MUST-EXIST VARIABLE=VALUE...
run() {
  local backend=$1 needs=$2
  shift 2
  if [[ ! -e $needs ]]; then
    echo "run-scale-backends.sh: $backend skipped: no $needs" >&2
    return
  fi
  echo "run-scale-backends.sh: $backend" >&2
  env "$@" ANYDEV_BACKEND="$backend" "$bin" --only=buffers --max-live="$max_live" \
    >"$out_dir/scale-$backend.json"
}

run opencl "$build_dir/lib/anydev/libanydev-backend-opencl.so"
run cuda "$emulators/cuda/libcuda.so.1" ANYDEV_CUDA_LIBRARY="$emulators/cuda/libcuda.so.1"
run hip "$emulators/hip/libamdhip64.so.5" ANYDEV_HIP_LIBRARY="$emulators/hip/libamdhip64.so.5"
run level_zero "$emulators/level_zero/libze_anydev_emulator.so" \
  ZE_ENABLE_ALT_DRIVERS="$emulators/level_zero/libze_anydev_emulator.so"
echo "run-scale-backends.sh: results in $out_dir" >&2
