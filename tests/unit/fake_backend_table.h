// SPDX-License-Identifier: Apache-2.0
// Builds the backend table of the fake backends that the unit tests drive the
// core with (pools, event pool, stream-ordered release): the header fields,
// then groups of entries from the test's own functions, which the backend
// kit's thunks (kit_table.h) adapt to the table's signatures. The table is a
// value the test keeps for the life of its fake backend; building it touches
// no shared state. Header only.
#ifndef ANYDEV_TESTS_UNIT_FAKE_BACKEND_TABLE_H_
#define ANYDEV_TESTS_UNIT_FAKE_BACKEND_TABLE_H_

#include <anydev/backend.h>

#include "anydev/kit/table.h"

namespace anydev::test {

// A table named "fake" of this ABI, every entry null.
inline anydev_backend_table_t fake_table() {
  anydev_backend_table_t t{};
  t.struct_size = sizeof(t);
  t.abi_version = ANYDEV_BACKEND_ABI_VERSION;
  t.name = "fake";
  return t;
}

// host_alloc, device_alloc, memory_free.
template <auto HostAlloc, auto DeviceAlloc, auto MemoryFree>
void set_memory_entries(anydev_backend_table_t& t) {
  t.host_alloc = kit::entry<HostAlloc>;
  t.device_alloc = kit::entry<DeviceAlloc>;
  t.memory_free = kit::entry<MemoryFree>;
}

// event_create, event_destroy, event_record, event_query, event_synchronize.
template <auto Create, auto Destroy, auto Record, auto Query, auto Synchronize>
void set_event_entries(anydev_backend_table_t& t) {
  t.event_create = kit::entry<Create>;
  t.event_destroy = kit::entry<Destroy>;
  t.event_record = kit::entry<Record>;
  t.event_query = kit::entry<Query>;
  t.event_synchronize = kit::entry<Synchronize>;
}

}  // namespace anydev::test

#endif  // ANYDEV_TESTS_UNIT_FAKE_BACKEND_TABLE_H_
