// SPDX-License-Identifier: Apache-2.0
// anydev C++20 API: header-only RAII types over the C ABI in anydev/anydev.h.
//
// The names follow Mojo's gpu.host module (DeviceContext, HostBuffer,
// DeviceBuffer, DeviceStream, DeviceEvent) so that its documentation carries
// over. Every failing C call becomes `throw anydev::Error(status, message)`
// where the message is the C ABI's, naming the operation and the values.
//
// Ownership: every class here holds one reference to a C handle. Copying an
// object retains the handle (both copies share the same object); moving
// transfers the reference and leaves the source empty; the destructor releases
// it. Releasing a buffer never blocks: its memory is freed after the work
// already enqueued that uses it.
//
// Thread safety: each call is thread-safe as the C ABI says (any call from any
// thread; calls on one stream from several threads are serialized in some
// order). Copies of one handle may be used from several threads at once; a
// single C++ object must not be assigned to while another thread uses it.
//
// This header is the one a program includes; it gathers the topic headers,
// each of which includes only what it needs and may be included alone:
//   status.hpp   Status, Error
//   float16.hpp  float16, bfloat16
//   dtype.hpp    DType, dtype_of<T>, the Element concept, complex64/128
//   memory.hpp   MemoryKind, MemoryInfo, PoolStats, HostMemoryLocks, pool_enabled()
//   stream.hpp   DeviceStream, DeviceEvent
//   context.hpp  DeviceContext, BackendInfo
//   buffer.hpp   HostBuffer, DeviceBuffer, HostMapping, DeviceContext's buffer
//                members (create, enqueue_copy, enqueue_memset), printing
//   graph.hpp    DeviceGraph, GraphNode: copies and fills recorded once, replayed
//   dlpack.hpp   DLPack exchange (not included here; include it when needed)
// detail/ holds their internals. All of them need C++20; from C++17 or from C,
// use the C ABI (anydev/anydev.h).
#include "anydev/detail/require_cxx20.hpp"  // first, before the guard

#ifndef ANYDEV_ANYDEV_HPP_
#define ANYDEV_ANYDEV_HPP_

#include "anydev/anydev.h"
#include "anydev/buffer.hpp"
#include "anydev/context.hpp"
#include "anydev/dtype.hpp"
#include "anydev/float16.hpp"
#include "anydev/graph.hpp"
#include "anydev/logging.hpp"
#include "anydev/memory.hpp"
#include "anydev/share.hpp"
#include "anydev/status.hpp"
#include "anydev/stream.hpp"

#endif  // ANYDEV_ANYDEV_HPP_
