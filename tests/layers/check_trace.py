#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a trace written by ANYDEV_TRACE (tests/layers/trace_workload.cpp).

Usage: check_trace.py TRACE.json MIN_STREAM_OPS

Fails (exit 1, naming what is wrong) unless the file is valid JSON in the
Chrome trace format, every stream operation names its backend, device,
stream and bytes with enqueue <= start <= end, the operations of one stream
do not overlap, each has a flow arrow from its enqueue call, and there are at
least MIN_STREAM_OPS of them.
"""
import json
import sys


def main():
    path, minimum = sys.argv[1], int(sys.argv[2])
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    ops = [e for e in events if e.get("ph") == "X" and e.get("pid") == 2]
    calls = [e for e in events if e.get("ph") == "X" and e.get("pid") == 1]
    flows = {(e["ph"], e["id"]) for e in events if e.get("cat") == "flow"}
    names = {e.get("tid") for e in events if e.get("ph") == "M" and e.get("pid") == 2}
    errors = []
    if len(ops) < minimum:
        errors.append(f"{len(ops)} stream operations, expected at least {minimum}")
    by_stream = {}
    for op in ops:
        a = op["args"]
        for key in ("backend", "device", "stream", "bytes", "enqueue_us", "start_us", "end_us"):
            if key not in a:
                errors.append(f"{op['name']}: no {key}")
        if not a["enqueue_us"] <= a["start_us"] <= a["end_us"]:
            errors.append(f"{op['name']}: enqueue {a['enqueue_us']} start {a['start_us']} "
                          f"end {a['end_us']} out of order")
        if a["backend"] != "cpu" or a["device"] != 0:
            errors.append(f"{op['name']}: backend {a['backend']} device {a['device']}")
        if op["tid"] not in names:
            errors.append(f"{op['name']}: stream {op['tid']} has no name")
        by_stream.setdefault(op["tid"], []).append(op)
    for stream, items in by_stream.items():
        items.sort(key=lambda e: e["ts"])
        for before, after in zip(items, items[1:]):
            if after["ts"] < before["ts"] + before["dur"] - 1e-3:
                errors.append(f"stream {stream}: {before['name']} and {after['name']} overlap")
    if len(by_stream) < 2:
        errors.append(f"{len(by_stream)} streams with operations, expected 2")
    copies = [op for op in ops if op["name"].startswith("copy") and op["args"]["bytes"] > 0]
    if not copies:
        errors.append("no copy with its byte count")
    starts = sum(1 for ph, _ in flows if ph == "s")
    if starts != len(ops) or sum(1 for ph, _ in flows if ph == "f") != len(ops):
        errors.append(f"{starts} flow arrows for {len(ops)} stream operations")
    if not any(c["name"] == "stream_synchronize" for c in calls):
        errors.append("no stream_synchronize call on a host thread")
    for message in errors[:20]:
        print(f"{path}: {message}", file=sys.stderr)
    if errors:
        return 1
    print(f"{path}: {len(ops)} stream operations on {len(by_stream)} streams, "
          f"{len(calls)} host calls: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
