# SPDX-License-Identifier: Apache-2.0
"""An all-gather between the ranks of an MPI job, built on anydev's
point-to-point transfers over UCX (docs/distributed.md, "Python and
mpi4py"); the Python twin of allgather.cpp. mpi4py only starts the
processes' MPI and carries the communicators' addresses (comm.allgather);
the data moves through Communicator.enqueue_send / enqueue_recv.

    mpirun -np 4 --oversubscribe python3 examples/distributed/allgather.py [MiB per rank]

Each rank fills its block (default 64 MiB) with a pattern of its rank, sends
it to every other rank and receives theirs into views (sub-buffers) of one
result buffer, then checks every byte and prints one line. The exit status
is 0 when every rank got exact bytes, 77 when UCX is unavailable (ctest's
skip code), else 1. ANYDEV_BACKEND picks the backend."""
import sys

import numpy
from mpi4py import MPI

import anydev


def pattern(rank, n):
    """Rank `rank`'s block: the bytes of allgather.cpp's pattern(),
    (i * 13 + (i >> 12) + rank * 71) & 0xff, built from 4 KiB tiles in uint8
    arithmetic (which wraps) so that no array wider than the block is made."""
    tiles = -(-n // 4096)
    low = (numpy.arange(4096, dtype=numpy.uint32) * 13 & 0xFF).astype(numpy.uint8)
    high = (numpy.arange(tiles, dtype=numpy.uint32) & 0xFF).astype(numpy.uint8)
    out = numpy.tile(low, tiles)
    out += numpy.repeat(high, 4096)
    out += numpy.uint8(rank * 71 & 0xFF)
    return out[:n]


def all_gather(ctx, comm, world, block):
    """Returns the number of wrong bytes in this rank's result."""
    rank, size = world.Get_rank(), world.Get_size()
    addresses = world.allgather(comm.address)
    peer_of = {r: comm.connect(addresses[r]) for r in range(size) if r != rank}

    result = ctx.enqueue_create_buffer(block * size, dtype="uint8")
    mine = result.create_sub_buffer(block * rank, block)
    mine.enqueue_copy_from(pattern(rank, block))
    # Every receive and send in flight at once; tag = the sender's rank.
    for r, peer in peer_of.items():
        comm.enqueue_recv(result.create_sub_buffer(block * r, block), peer, r)
    for peer in peer_of.values():
        comm.enqueue_send(mine, peer, rank)
    got = numpy.empty(block * size, dtype=numpy.uint8)
    result.enqueue_copy_to(got)  # after the receives: sees their bytes
    ctx.synchronize()
    return sum(int(numpy.count_nonzero(got[r * block:(r + 1) * block] != pattern(r, block)))
               for r in range(size))


def main():
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    code, comm = 1, None
    try:
        ctx = anydev.DeviceContext()  # ANYDEV_BACKEND, else the default order
        comm = ctx.create_communicator()
        wrong = all_gather(ctx, comm, world, mib << 20)
        print(f"rank {rank}/{size} ({ctx.api()}): all-gather of {mib} MiB per rank: "
              f"{'exact' if wrong == 0 else 'WRONG'} ({wrong} wrong bytes)", flush=True)
        code = 0 if wrong == 0 else 1
    except anydev.Error as error:
        print(f"rank {rank}: {error}", file=sys.stderr, flush=True)
        code = 77 if isinstance(error, anydev.BackendUnavailableError) else 1
    # Also a barrier: nobody closes its connections before everyone has its bytes.
    worst = world.allreduce(code, op=MPI.MAX)
    if comm is not None:
        comm.close()
    return worst


if __name__ == "__main__":
    sys.exit(main())
