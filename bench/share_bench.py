#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Export + import latency of a buffer sent between processes through a
multiprocessing.Queue: anydev (a shareable host buffer of the cpu backend)
beside torch.multiprocessing (a CPU tensor in shared memory), same start
method, same run (docs/performance.md, "Sharing between processes (Python)").

One round: the producer makes a new buffer of `size` bytes and fills it
(not timed), then times q.put(buffer) until the consumer's acknowledgement
arrives; the consumer takes it off the queue (unpickling imports it: the
fd travels over the resource sharer's SCM_RIGHTS for both libraries) and
acknowledges. With --touch the consumer also reads one byte per 4 KiB page
before acknowledging (the first use of the memory). A new buffer each round,
because torch caches storages it already received and anydev would not.

    PYTHONPATH=build/python python3 bench/share_bench.py [--method spawn|fork] [--touch] [--sizes 4K,1M,64M]
"""
import argparse
import multiprocessing
import statistics
import time

SIZES = [(4 << 10, "4 KiB", 200), (1 << 20, "1 MiB", 100), (64 << 20, "64 MiB", 20)]
WARMUP = 3


def _make(lib, size, value):
    if lib == "anydev":
        import anydev
        ctx = anydev.DeviceContext(0, api="cpu")
        buf = ctx.create_shareable_host_buffer(size, dtype="uint8")
        buf.enqueue_fill(value)
        ctx.synchronize()
        return buf
    import torch
    return torch.full((size,), value, dtype=torch.uint8).share_memory_()


def producer(lib, size, rounds, queue, acks, results):
    if lib == "torch":
        import torch.multiprocessing  # noqa: F401  (registers torch's reducers)
    else:
        import anydev  # noqa: F401  (registers anydev's reducers)
    times = []
    for i in range(rounds + WARMUP):
        obj = _make(lib, size, i & 0x7F)
        start = time.perf_counter()
        queue.put(obj)
        value = acks.get(timeout=60)
        times.append(time.perf_counter() - start)
        assert value == (i & 0x7F), f"the consumer saw {value}, not {i & 0x7F}"
        del obj
    results.put(times[WARMUP:])


def consumer(lib, rounds, touch, queue, acks):
    import numpy
    if lib == "torch":
        import torch.multiprocessing  # noqa: F401
    else:
        import anydev  # noqa: F401
    for _ in range(rounds + WARMUP):
        obj = queue.get(timeout=60)
        array = numpy.from_dlpack(obj) if lib == "anydev" else obj.numpy()
        value = int(array[::4096].max()) if touch else int(array[0])
        acks.put(value)
        del array, obj


def measure(mp, lib, size, rounds, touch):
    queue, acks, results = mp.Queue(), mp.Queue(), mp.Queue()
    procs = [mp.Process(target=producer, args=(lib, size, rounds, queue, acks, results)),
             mp.Process(target=consumer, args=(lib, rounds, touch, queue, acks))]
    for p in procs:
        p.start()
    times = results.get(timeout=600)
    for p in procs:
        p.join(60)
        assert p.exitcode == 0, f"{lib} {p.name} exited with {p.exitcode}"
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", default="spawn", choices=["spawn", "fork", "forkserver"])
    parser.add_argument("--touch", action="store_true",
                        help="the consumer reads one byte per page before acknowledging")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the rounds")
    parser.add_argument("--sizes", default="4K,1M,64M", help="which of 4K,1M,64M to measure")
    args = parser.parse_args()
    mp = multiprocessing.get_context(args.method)
    print(f"start method {args.method}; consumer {'touches every page' if args.touch else 'imports only'}")
    print("| size | anydev median (p90) | torch median (p90) | anydev / torch |")
    print("|---|---|---|---|")
    wanted = args.sizes.upper().split(",")
    for size, name, rounds in SIZES:
        if name.replace(" ", "")[:-2].upper() not in wanted:
            continue
        rounds = max(5, int(rounds * args.scale))
        got = {lib: measure(mp, lib, size, rounds, args.touch) for lib in ("anydev", "torch")}
        text = {}
        for lib, times in got.items():
            p90 = sorted(times)[int(len(times) * 0.9) - 1]
            text[lib] = f"{statistics.median(times) * 1e3:.3f} ms ({p90 * 1e3:.3f})"
        ratio = statistics.median(got["anydev"]) / statistics.median(got["torch"])
        print(f"| {name} | {text['anydev']} | {text['torch']} | {ratio:.2f} |", flush=True)


if __name__ == "__main__":
    main()
