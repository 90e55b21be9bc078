# SPDX-License-Identifier: Apache-2.0
"""`python -m anydev`: the system report (like anydev-info): the version,
where the package and its library are, every known backend with its state
and devices. `--json` prints it as JSON."""

import json
import sys
from typing import List, Optional

from . import _anydev
from ._report import system_report, text_report


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args in (["-h"], ["--help"]):
        print("usage: python -m anydev [--json]\n\nPrints anydev's system report: version, "
              "package location, backends and their devices.")
        return 0
    if args not in ([], ["--json"]):
        print(f"python -m anydev: unknown arguments {args}; usage: python -m anydev [--json]",
              file=sys.stderr)
        return 2
    try:
        report = system_report()
    except _anydev.Error as e:  # a report, not a traceback: say what failed
        print(f"python -m anydev: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if args == ["--json"]:
        print(json.dumps(report, indent=2))
    else:
        print(text_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
