// Memory handed to the caller by anydev_buffer_take_ptr, waiting for
// anydev_context_free. Keyed by (backend, device, address); holds the
// Allocation so that its stream-ordered release happens at free time.
// Thread-safe.
#ifndef ANYDEV_SRC_TAKEN_MEMORY_H_
#define ANYDEV_SRC_TAKEN_MEMORY_H_

#include <memory>

#include "allocation.h"

namespace anydev::core {

void remember_taken(void* address, std::shared_ptr<Allocation> allocation);
// The allocation taken at `address` on that backend and device, removed from
// the table; null when there is none.
std::shared_ptr<Allocation> forget_taken(const Backend* backend, int device, void* address);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_TAKEN_MEMORY_H_
