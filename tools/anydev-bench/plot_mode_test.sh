#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ctest tools.anydev-bench.plot_mode (tools/CMakeLists.txt): --plot writes a
# new file with the permissions the umask gives (022: 0644), and a file it
# replaces keeps its mode (0640 stays 0640).
#   plot_mode_test.sh path/to/anydev-bench scratch/folder
set -euo pipefail
bench="$1"
out="$2"
rm -rf -- "${out}"
mkdir -p -- "${out}"

plot() {
  "${bench}" --backend cpu --sizes 4K --ops fill_1 --min-time 0.001 --plot "$1" >/dev/null
}

umask 022
plot "${out}/new.svg"
mode="$(stat -c %a "${out}/new.svg")"
[[ "${mode}" == 644 ]] || { echo "a new plot under umask 022 has mode ${mode}, expected 644" >&2; exit 1; }

echo old >"${out}/existing.svg"
chmod 0640 "${out}/existing.svg"
plot "${out}/existing.svg"
mode="$(stat -c %a "${out}/existing.svg")"
[[ "${mode}" == 640 ]] || { echo "a replaced plot of mode 640 has mode ${mode} now" >&2; exit 1; }
grep -q '</svg>' "${out}/existing.svg" || { echo "the replaced plot is not the new SVG" >&2; exit 1; }

umask 077
plot "${out}/private.svg"
mode="$(stat -c %a "${out}/private.svg")"
[[ "${mode}" == 600 ]] || { echo "a new plot under umask 077 has mode ${mode}, expected 600" >&2; exit 1; }
echo "plot modes: new 644 (umask 022), replaced 640 kept, new 600 (umask 077)"
