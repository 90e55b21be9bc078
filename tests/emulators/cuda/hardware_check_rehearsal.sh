#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs scripts/hardware-check against the CUDA emulator on a folder laid out
# like build-hw/ whose files are links into the build tree, then lists what
# the check left in $OUT (the device tool brings back at most 8 files).
#   hardware_check_rehearsal.sh WORK SCRIPT ANYDEV_INFO CONFORMANCE PLUGIN LIBANYDEV SONAME SHARE_TESTS
set -euo pipefail
work="$1" script="$2" info="$3" conformance="$4" plugin="$5" libanydev="$6" soname="$7" share="$8"
rm -rf "${work}"
mkdir -p "${work}/hw/bin" "${work}/hw/lib/anydev"
ln -s "${info}" "${conformance}" "${share}" "${work}/hw/bin/"
ln -s "${plugin}" "${work}/hw/lib/anydev/"
ln -s "${libanydev}" "${work}/hw/lib/libanydev.so"
ln -s "${libanydev}" "${work}/hw/lib/${soname}"
ANYDEV_HW_DIR="${work}/hw" OUT="${work}/out" "${script}"
echo "files in OUT: $(find "${work}/out" -mindepth 1 -printf '%f ' | tr ' ' '\n' | sort | paste -sd ' ' -)"
tar -tzf "${work}/out/logs.tar.gz" | sed 's/^/archived: /'
