// SPDX-License-Identifier: Apache-2.0
// Host memory the caller owns, registered with a backend
// (anydev_context_register_host_memory, docs/registered-memory.md).
//
// The registered release strategy (make_registered_allocation): after the
// last use of the memory in this process (ordered as plain memory,
// allocation.h) the backend's host_unregister undoes the registration, the
// range leaves the registration table, and the caller's callback runs. The
// memory itself is never freed.
//
// The registration table: the page-rounded ranges registered through
// anydev, per backend (any device: the drivers register pages for the whole
// process), from the moment registration begins until host_unregister has
// returned. Drivers refuse a page registered twice, so a range sharing a
// page with a live registration is refused before the driver sees it. A
// registration whose last handle is gone but whose unregistration still
// waits for stream work is waited for, so that registering the same memory
// again after releasing it never fails by timing. Thread-safe (one mutex
// and condition variable, held across fork() by pthread_atfork).
#ifndef ANYDEV_SRC_MEMORY_REGISTERED_MEMORY_H_
#define ANYDEV_SRC_MEMORY_REGISTERED_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "memory/allocation.h"

namespace anydev::core {

// Claims the pages of [pointer, pointer + bytes) for a registration on
// `backend`. Waits while an overlapping registration is being undone; false,
// with *conflict naming the registered range, when an overlapping one is
// live. A claim is given back with unclaim_registration (a failed
// registration) or by the allocation's release.
bool claim_registration(const Backend* backend, std::uintptr_t pointer, std::size_t bytes,
                        std::string* conflict);
void unclaim_registration(const Backend* backend, std::uintptr_t pointer) noexcept;

// An allocation of registered memory (see above) whose handle is what
// host_register returned; `on_unregistered` (may be empty) runs after
// host_unregister. `owner` is the stream of the context it was registered
// on.
std::shared_ptr<Allocation> make_registered_allocation(const Backend* backend, int device,
                                                       void* handle, void* pointer,
                                                       std::size_t bytes,
                                                       std::shared_ptr<Stream> owner,
                                                       std::function<void()> on_unregistered);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_MEMORY_REGISTERED_MEMORY_H_
