// SPDX-License-Identifier: Apache-2.0
// Memory handed to the caller by anydev_buffer_take_ptr, waiting for
// anydev_context_free. One record per taken allocation, keyed by (backend,
// device, start address of the allocation); holds the Allocation so that its
// stream-ordered release happens at free time. A record is never replaced:
// take_ptr hands over whole allocations only (never a view), so two live
// records cannot share a key, and remember_taken refuses one that would.
// Thread-safe (one mutex around the table).
#ifndef ANYDEV_SRC_API_TAKEN_MEMORY_H_
#define ANYDEV_SRC_API_TAKEN_MEMORY_H_

#include <memory>
#include <string>

#include "memory/allocation.h"

namespace anydev::core {

// Records `allocation` (whose start address is allocation->address, not
// null) as the caller's. False, changing nothing, when a record with that
// key already exists.
bool remember_taken(std::shared_ptr<Allocation> allocation);

// The allocation taken at `address` on that backend and device, removed from
// the table; null when there is none.
std::shared_ptr<Allocation> forget_taken(const Backend* backend, int device, void* address);

// Why `address` has no record on that backend and device, for an error
// message: it lies inside an allocation taken at another address, it was
// taken on another backend or device, or nothing is known about it.
std::string explain_not_taken(const Backend* backend, int device, void* address);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_API_TAKEN_MEMORY_H_
