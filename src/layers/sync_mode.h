// SPDX-License-Identifier: Apache-2.0
// Synchronous mode (ANYDEV_SYNC=1): every entry that enqueues work waits for
// its stream before returning, so an asynchronous failure is returned by the
// call that caused it instead of by a later synchronize. Wrapped entries:
// device_alloc, copy, fill, event_record (waits for the recorded stream) and
// stream_wait_event (waits for the waiting stream). memory_free_async is left
// alone: a free is not the user's work, and waiting after it could only
// surface (and so consume) an error that belongs to the stream's next
// synchronize.
// Stateless apart from the wrapped tables (layer_table.h); thread-safe.
#ifndef ANYDEV_SRC_LAYERS_SYNC_MODE_H_
#define ANYDEV_SRC_LAYERS_SYNC_MODE_H_

#include "anydev/backend.h"

namespace anydev::core::layers {

// A table wrapping `inner` (layer_table.h). Called under the registry lock.
const anydev_backend_table_t* wrap_sync_mode(const anydev_backend_table_t* inner);

}  // namespace anydev::core::layers

#endif  // ANYDEV_SRC_LAYERS_SYNC_MODE_H_
