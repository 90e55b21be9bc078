// SPDX-License-Identifier: Apache-2.0
// An all-gather between the ranks of an MPI job, built on anydev's
// point-to-point transfers over UCX (docs/distributed.md). MPI only starts
// the processes and carries the communicators' addresses (MPI_Allgather);
// the data moves through anydev_comm_enqueue_send/recv.
//
//   mpirun -np 4 --oversubscribe build/bin/anydev-allgather [MiB per rank]
//
// Each rank fills its block (default 64 MiB) with a pattern of its rank,
// sends it to every other rank and receives theirs into views (sub-buffers)
// of one result buffer, then checks every byte. ANYDEV_BACKEND picks the
// backend (device buffers on GPUs are staged where UCX cannot reach them).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"
#include "anydev/comm.hpp"

namespace {

std::uint8_t pattern(int rank, std::size_t i) {
  return static_cast<std::uint8_t>((i * 13u + (i >> 12) + static_cast<unsigned>(rank) * 71u) &
                                   0xff);
}

// Every rank's address, exchanged with MPI_Allgather (addresses of one UCX
// build and configuration have one length; checked).
std::vector<std::vector<std::uint8_t>> exchange_addresses(const std::vector<std::uint8_t>& mine,
                                                          int size) {
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size));
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::vector<std::uint8_t> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(),
                 MPI_BYTE, MPI_COMM_WORLD);
  std::vector<std::vector<std::uint8_t>> out(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    out[r].assign(all.begin() + offsets[r], all.begin() + offsets[r] + lengths[r]);
  }
  return out;
}

int run(int rank, int size, std::size_t block) {
  anydev::DeviceContext ctx;  // ANYDEV_BACKEND, else the default order
  anydev::Communicator comm(ctx);
  const auto addresses = exchange_addresses(comm.address(), size);
  std::vector<int> peer_of(static_cast<std::size_t>(size), -1);  // rank -> peer index
  for (int r = 0; r < size; ++r) {
    if (r != rank) peer_of[r] = comm.connect(addresses[r]);
  }

  auto result = ctx.enqueue_create_buffer<std::uint8_t>(block * static_cast<std::size_t>(size));
  auto mine = result.create_sub_buffer<std::uint8_t>(block * static_cast<std::size_t>(rank), block);
  {
    std::vector<std::uint8_t> bytes(block);
    for (std::size_t i = 0; i < block; ++i) bytes[i] = pattern(rank, i);
    mine.enqueue_copy_from(bytes.data());
    ctx.synchronize();
  }
  // Every receive and send in flight at once; tag = the sender's rank.
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    auto slot = result.create_sub_buffer<std::uint8_t>(block * static_cast<std::size_t>(r), block);
    comm.enqueue_recv(slot, peer_of[r], static_cast<std::uint32_t>(r));
  }
  for (int r = 0; r < size; ++r) {
    if (r != rank) comm.enqueue_send(mine, peer_of[r], static_cast<std::uint32_t>(rank));
  }
  std::vector<std::uint8_t> got(result.size());
  result.enqueue_copy_to(got.data());  // after the receives: sees their bytes
  ctx.synchronize();

  std::size_t wrong = 0;
  for (int r = 0; r < size; ++r) {
    for (std::size_t i = 0; i < block; ++i) {
      if (got[static_cast<std::size_t>(r) * block + i] != pattern(r, i)) ++wrong;
    }
  }
  std::printf("rank %d/%d (%s): all-gather of %zu MiB per rank: %s (%zu wrong bytes)\n", rank, size,
              ctx.api().c_str(), block >> 20, wrong == 0 ? "exact" : "WRONG", wrong);
  // Nobody leaves (closing its connections) before everyone has its bytes.
  MPI_Barrier(MPI_COMM_WORLD);
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 64;
  int code = 1;
  try {
    code = run(rank, size, mib << 20);
  } catch (const anydev::Error& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    // UCX missing: 77 (ctest's skip code); any other error fails.
    code = e.status() == anydev::Status::backend_unavailable ? 77 : 1;
  }
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
