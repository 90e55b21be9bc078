// SPDX-License-Identifier: Apache-2.0
// A data-loader worker process fills pinned batches that the trainer
// process consumes, with no copy between the processes and no host round
// trip on the data path (docs/sharing.md).
//
// The worker owns `slots` shareable pinned host buffers and one shareable
// event per slot ("filled"); the trainer owns one shareable event per slot
// ("consumed"). Their handles cross once, at the start, over a socketpair
// (SCM_RIGHTS carries the file descriptors). Then, for batch b in slot
// s = b % slots:
//
//   worker:  stream waits consumed[s]     (the trainer's copy of the slot's
//                                          previous batch has run)
//            slot[s] <- decoded batch b   (a copy on the worker's stream)
//            record filled[s]; tell the trainer "b"
//   trainer: stream waits filled[s]
//            device batch <- slot[s]      (stands for the training step's input)
//            record consumed[s]; tell the worker "b done"
//
// The socket carries only batch numbers, so that each side waits on the
// other's latest record; the bytes are ordered by the events alone. The
// trainer checks every batch against its closed form and exits non-zero on
// a mismatch. Usage: anydev-dataloader [batches] [elements per batch] [slots]
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"

namespace {

struct Shape {
  std::int64_t batches = 64;
  std::size_t elements = 1 << 16;
  std::size_t slots = 3;
};

// Element k of batch b.
std::int64_t value(std::int64_t batch, std::size_t k) {
  return batch * 1000003 + static_cast<std::int64_t>(k);
}

void send_number(int socket, std::int64_t number) {
  if (::send(socket, &number, sizeof number, MSG_NOSIGNAL) != sizeof number) {
    throw std::runtime_error("dataloader: the other process went away");
  }
}

std::int64_t receive_number(int socket) {
  std::int64_t number = 0;
  if (::recv(socket, &number, sizeof number, MSG_WAITALL) != sizeof number) {
    throw std::runtime_error("dataloader: the other process went away");
  }
  return number;
}

int worker(int socket, const Shape& shape) {
  anydev::DeviceContext ctx;
  std::vector<anydev::HostBuffer<std::int64_t>> slots;
  std::vector<anydev::HostBuffer<std::int64_t>> decoded;  // private, one per slot
  std::vector<anydev::DeviceEvent> filled;
  std::vector<anydev::DeviceEvent> consumed;
  for (std::size_t s = 0; s < shape.slots; ++s) {
    slots.push_back(ctx.create_shareable_host_buffer<std::int64_t>(shape.elements));
    decoded.push_back(ctx.enqueue_create_host_buffer<std::int64_t>(shape.elements));
    filled.push_back(ctx.create_shareable_event());
    slots.back().export_handle().send(socket);
    filled.back().export_handle().send(socket);
  }
  for (std::size_t s = 0; s < shape.slots; ++s) {
    consumed.push_back(ctx.import_event(anydev::ShareHandle::receive(socket)));
  }

  anydev::DeviceStream stream = ctx.stream();
  for (std::int64_t b = 0; b < shape.batches; ++b) {
    const std::size_t s = static_cast<std::size_t>(b) % shape.slots;
    if (b >= static_cast<std::int64_t>(shape.slots)) {
      // The trainer has recorded consumed[s] for batch b - slots.
      if (receive_number(socket) != b - static_cast<std::int64_t>(shape.slots)) return 1;
      stream.enqueue_wait_for(consumed[s]);
      filled[s].synchronize();  // the last copy out of decoded[s] has run
    }
    for (std::size_t k = 0; k < shape.elements; ++k) decoded[s][k] = value(b, k);
    ctx.enqueue_copy(slots[s], decoded[s]);
    stream.record_event(filled[s]);
    send_number(socket, b);
  }
  ctx.synchronize();
  // Wait until the trainer has read every batch before the memory may go.
  while (receive_number(socket) != shape.batches - 1) {
  }
  return 0;
}

int trainer(int socket, const Shape& shape) {
  anydev::DeviceContext ctx;
  std::vector<anydev::HostBuffer<std::int64_t>> slots;
  std::vector<anydev::DeviceEvent> filled;
  std::vector<anydev::DeviceEvent> consumed;
  for (std::size_t s = 0; s < shape.slots; ++s) {
    slots.push_back(ctx.import_host_buffer<std::int64_t>(anydev::ShareHandle::receive(socket)));
    filled.push_back(ctx.import_event(anydev::ShareHandle::receive(socket)));
  }
  for (std::size_t s = 0; s < shape.slots; ++s) {
    consumed.push_back(ctx.create_shareable_event());
    consumed.back().export_handle().send(socket);
  }

  anydev::DeviceStream stream = ctx.stream();
  anydev::DeviceBuffer<std::int64_t> batch = ctx.create_buffer_sync<std::int64_t>(shape.elements);
  anydev::HostBuffer<std::int64_t> seen =
      ctx.enqueue_create_host_buffer<std::int64_t>(shape.elements);
  for (std::int64_t b = 0; b < shape.batches; ++b) {
    const std::size_t s = static_cast<std::size_t>(b) % shape.slots;
    if (receive_number(socket) != b) return 1;
    stream.enqueue_wait_for(filled[s]);
    ctx.enqueue_copy(batch, slots[s]);
    stream.record_event(consumed[s]);
    send_number(socket, b);
    // The training step: here, a check of what arrived.
    ctx.enqueue_copy(seen, batch);
    ctx.synchronize();
    for (std::size_t k = 0; k < shape.elements; ++k) {
      if (seen[k] != value(b, k)) {
        std::fprintf(stderr, "dataloader: batch %lld element %zu is %lld, expected %lld\n",
                     static_cast<long long>(b), k, static_cast<long long>(seen[k]),
                     static_cast<long long>(value(b, k)));
        return 1;
      }
    }
  }
  std::printf("dataloader: %lld batches of %zu elements through %zu shared slots on %s: ok\n",
              static_cast<long long>(shape.batches), shape.elements, shape.slots,
              ctx.api().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Shape shape;
  if (argc > 1) shape.batches = std::atoll(argv[1]);
  if (argc > 2) shape.elements = std::strtoull(argv[2], nullptr, 10);
  if (argc > 3) shape.slots = std::strtoull(argv[3], nullptr, 10);
  if (shape.batches < 1 || shape.elements < 1 || shape.slots < 1) {
    std::fprintf(stderr, "usage: %s [batches >= 1] [elements >= 1] [slots >= 1]\n", argv[0]);
    return 2;
  }
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    std::perror("dataloader: socketpair");
    return 1;
  }
  // Fork before either side opens anydev: each process makes its own context.
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("dataloader: fork");
    return 1;
  }
  if (pid == 0) {
    ::close(sockets[0]);
    int status = 1;
    try {
      status = worker(sockets[1], shape);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "dataloader worker: %s\n", error.what());
    }
    std::fflush(nullptr);
    ::_exit(status);
  }
  ::close(sockets[1]);
  int status = 1;
  try {
    status = trainer(sockets[0], shape);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "dataloader trainer: %s\n", error.what());
  }
  ::close(sockets[0]);  // a worker still waiting on us sees the end and exits
  int worker_status = 0;
  ::waitpid(pid, &worker_status, 0);
  if (!WIFEXITED(worker_status) || WEXITSTATUS(worker_status) != 0) {
    std::fprintf(stderr, "dataloader: the worker failed\n");
    return 1;
  }
  return status;
}
