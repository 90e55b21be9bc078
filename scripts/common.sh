# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared by the scripts in this folder (sourced, not run). Sets ANYDEV_ROOT,
# the preset and build folder that setup and test share, and small helpers.
#
#   ANYDEV_PRESET  configure/build preset of CMakePresets.json (default: release;
#                  CI uses ci = release + warnings as errors, same folder build/)
#   ANYDEV_JOBS    parallel build jobs (default: 2)
#   ANYDEV_CMAKE_ARGS  extra arguments for the configure step (word-split)

ANYDEV_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ANYDEV_PRESET="${ANYDEV_PRESET:-release}"
ANYDEV_JOBS="${ANYDEV_JOBS:-2}"

# The folder a preset builds into (binaryDir in CMakePresets.json).
anydev_build_dir() {
  case "$1" in
    release | ci) echo "${ANYDEV_ROOT}/build" ;;
    debug | asan | tsan) echo "${ANYDEV_ROOT}/build-$1" ;;
    *) anydev_die "unknown preset '$1' (known: release ci debug asan tsan)" ;;
  esac
}

anydev_log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }

anydev_die() {
  printf '[%s] error: %s\n' "$(basename "$0")" "$*" >&2
  exit 1
}

anydev_need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 ||
      anydev_die "'$tool' is not installed; run scripts/setup (or install it yourself)"
  done
}

anydev_configure() {
  local preset="$1"
  local -a extra=()
  if [[ -n "${ANYDEV_CMAKE_ARGS:-}" ]]; then
    read -r -a extra <<<"${ANYDEV_CMAKE_ARGS}"
  fi
  anydev_log "configuring preset '${preset}' into $(anydev_build_dir "${preset}")"
  (cd "${ANYDEV_ROOT}" && cmake --preset "${preset}" "${extra[@]}")
}

anydev_build() {
  local preset="$1"
  anydev_log "building preset '${preset}' with ${ANYDEV_JOBS} jobs"
  (cd "${ANYDEV_ROOT}" && cmake --build --preset "${preset}" --parallel "${ANYDEV_JOBS}")
}
