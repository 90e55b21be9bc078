#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Counts the footprint of anydev's enqueue path from a valgrind lackey trace.

Usage: hot_path_footprint.py TRACE PROGRAM_OUTPUT LIBANYDEV [--functions]

TRACE is `valgrind --tool=lackey --trace-mem=yes --log-file=TRACE
anydev-hot-path`; PROGRAM_OUTPUT is what the program printed (the markers'
addresses and anydev_enqueue_fill's). For each section between
anydev_hot_path_begin(n) and anydev_hot_path_end(n) it prints the
instructions executed, the data accesses, and the distinct 64-byte cache
lines and 4 KiB pages of code and of data; with --functions, the code lines
and instructions per function of libanydev (others by library region).
"""
import bisect
import collections
import subprocess
import sys

SECTIONS = ["fill 64 B + synchronize", "copy 64 B host->device + synchronize"]


def read_addresses(path):
    out = {}
    for line in open(path):
        parts = line.split()
        if len(parts) == 2 and parts[1].startswith("0x"):
            out[parts[0]] = int(parts[1], 16)
    return out


def library_symbols(path):
    text = subprocess.run(["nm", "-C", "--defined-only", path], capture_output=True, text=True,
                          check=True).stdout
    symbols = []
    for line in text.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            symbols.append((int(parts[0], 16), parts[2]))
    symbols.sort()
    return symbols


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    trace, output, library = sys.argv[1:4]
    functions = "--functions" in sys.argv[4:]
    marks = read_addresses(output)
    symbols = library_symbols(library)
    starts = [a for a, _ in symbols]
    by_name = {n: a for a, n in symbols}
    base = marks["anydev_enqueue_fill"] - by_name["anydev_enqueue_fill"]
    library_end = symbols[-1][0] + 0x10000

    def where(address):
        offset = address - base
        if 0 <= offset < library_end:
            i = bisect.bisect_right(starts, offset) - 1
            name = symbols[i][1] if i >= 0 else "?"
            # The PLT follows .init and has no symbols of its own.
            return "libanydev: " + ("PLT stubs (calls into libc)" if name == "_init" else name)
        return "elsewhere (%#x region)" % (address >> 20 << 20)

    section = -1
    done = 0
    stats = None
    with open(trace) as f:
        for line in f:
            if len(line) < 4 or line[0] == "=":
                continue
            kind = line[:2].strip()
            try:
                address = int(line[3:].split(",")[0], 16)
            except ValueError:
                continue
            if kind == "I" and address == marks["begin"] and section < 0:
                section = done
                stats = {"i": 0, "d": 0, "il": set(), "ip": set(), "dl": set(), "dp": set(),
                         "fn_lines": collections.OrderedDict(), "fn_count": collections.Counter()}
                continue
            if section < 0:
                continue
            if kind == "I" and address == marks["end"]:
                report(SECTIONS[section] if section < len(SECTIONS) else str(section), stats,
                       functions)
                section = -1
                done += 1
                continue
            if kind == "I":
                stats["i"] += 1
                stats["il"].add(address >> 6)
                stats["ip"].add(address >> 12)
                if functions:
                    name = where(address)
                    stats["fn_lines"].setdefault(name, set()).add(address >> 6)
                    stats["fn_count"][name] += 1
            else:
                stats["d"] += 1
                stats["dl"].add(address >> 6)
                stats["dp"].add(address >> 12)
    if done == 0:
        sys.exit("hot_path_footprint: no marked section found in the trace")


def report(name, s, functions):
    print(f"{name}: {s['i']} instructions, {s['d']} data accesses; "
          f"code {len(s['il'])} lines / {len(s['ip'])} pages; "
          f"data {len(s['dl'])} lines / {len(s['dp'])} pages")
    if functions:
        for fn, lines in s["fn_lines"].items():
            print(f"  {len(lines):3d} lines {s['fn_count'][fn]:5d} instructions  {fn[:100]}")


if __name__ == "__main__":
    main()
