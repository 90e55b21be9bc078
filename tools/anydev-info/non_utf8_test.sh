#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ctest tools.anydev-info.non_utf8 (tools/CMakeLists.txt): a plugin folder
# whose name is not UTF-8 (Latin-1 "caf\xe9") still gives valid JSON from
# anydev-info --json (python3 -m json.tool parses it), where the byte shows
# as the characters \xe9; a well-formed UTF-8 name is kept as it is.
#   non_utf8_test.sh path/to/anydev-info
set -euo pipefail
info="$1"
out="$(mktemp)"
trap 'rm -f -- "${out}"' EXIT

ANYDEV_BACKEND=cpu ANYDEV_PLUGIN_PATH=$'/tmp/caf\xe9:/tmp/caf\xc3\xa9' "${info}" --json >"${out}"
if ! python3 -m json.tool "${out}" >/dev/null; then
  echo "anydev-info --json with a non-UTF-8 plugin folder is not valid JSON:" >&2
  cat -v "${out}" >&2
  exit 1
fi
python3 - "${out}" <<'PY'
import json, sys
with open(sys.argv[1], encoding="utf-8") as f:
    report = json.load(f)
paths = [folder["path"] for folder in report["plugin_folders"]]
for want in ("/tmp/caf\\xe9", "/tmp/caf\u00e9"):
    if want not in paths:
        sys.exit(f"no plugin folder {want!r} in {paths!r}")
print(f"plugin folders as reported: {paths!r}")
PY
