# SPDX-License-Identifier: Apache-2.0
"""The system report of `python -m anydev`, as data (system_report) and as
text (text_report). Reads only: creates one context per device to name it
and read its memory; a device that fails says so in its entry."""

import os
import sys
from typing import Any, Dict

from . import _anydev


def _device_entry(api: str, index: int) -> Dict[str, Any]:
    entry: Dict[str, Any] = {"index": index}
    try:
        ctx = _anydev.DeviceContext(index, api=api)
        entry["name"] = ctx.name()
        info = ctx.memory_info()
        entry["memory_total"] = info.total
        entry["memory_free"] = info.free
    except _anydev.Error as e:  # reported, not raised: the report goes on
        entry["error"] = str(e)
    return entry


def system_report() -> Dict[str, Any]:
    """A dict: anydev's version, the package's folder, the Python running it,
    and every known backend (name, available, reason, library, devices)."""
    backends = []
    for b in _anydev.backends():
        backends.append({
            "name": b.name,
            "available": b.available,
            "reason": b.reason,
            "library": b.library,
            "devices": [_device_entry(b.name, i) for i in range(b.device_count)]
            if b.available else [],
        })
    return {
        "version": _anydev.__version__,
        "package": os.path.dirname(os.path.abspath(__file__)),
        "python": sys.version.split()[0],
        "backends": backends,
    }


def text_report(report: Dict[str, Any]) -> str:
    """The report as lines of text, one backend and its devices at a time."""
    lines = [
        f"anydev {report['version']}",
        f"package: {report['package']} (Python {report['python']})",
        "backends:",
    ]
    for b in report["backends"]:
        state = "available" if b["available"] else f"unavailable: {b['reason']}"
        library = f" [{b['library']}]" if b["library"] else ""
        lines.append(f"  {b['name']}: {state}{library}")
        for d in b["devices"]:
            if "error" in d:
                lines.append(f"    {d['index']}: error: {d['error']}")
            else:
                mib = 1024 * 1024
                lines.append(f"    {d['index']}: {d['name']} ({d['memory_free'] // mib} MiB free "
                             f"of {d['memory_total'] // mib} MiB)")
    return "\n".join(lines)
