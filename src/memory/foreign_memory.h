// SPDX-License-Identifier: Apache-2.0
// Memory the core does not own: a buffer over a producer's memory (a DLPack
// tensor of NumPy, PyTorch, ...). Its Allocation frees nothing; instead it
// runs the producer's release callback once the last anydev reference is
// gone and every operation anydev enqueued on the memory has finished (an
// event on the stream of its last use, waited for on the reclaimer thread,
// so the caller never blocks). The callback may therefore run on any thread.
// This is the foreign release strategy of allocation.h (ForeignRelease in
// foreign_memory.cpp); its event comes from the last stream's event pool.
// Thread-safe.
#ifndef ANYDEV_SRC_MEMORY_FOREIGN_MEMORY_H_
#define ANYDEV_SRC_MEMORY_FOREIGN_MEMORY_H_

#include <cstddef>
#include <functional>
#include <memory>

#include "memory/allocation.h"

namespace anydev::core {

// An allocation over `address` (`bytes` long; may be NULL when bytes is 0)
// that runs `release` instead of freeing. `kind` says how backends reach it:
// USER_HOST for plain host memory, HOST or DEVICE for memory of the
// backend's own kind (pointer-based backends only). `owner` is the stream of
// the context the buffer belongs to.
std::shared_ptr<Allocation> make_foreign_allocation(const Backend* backend, int device,
                                                    anydev_bk_memory_kind_t kind, void* address,
                                                    std::size_t bytes,
                                                    std::shared_ptr<Stream> owner,
                                                    std::function<void()> release);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_FOREIGN_MEMORY_H_
