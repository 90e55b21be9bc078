// SPDX-License-Identifier: Apache-2.0
// Calls into a backend's table with its instance: bk(t).copy(stream, ...) is
// t->copy(t->instance, stream, ...). One member per entry of the one entry
// list (ANYDEV_BACKEND_ENTRIES, include/anydev/backend_entries.h), inlined:
// no cost over the direct call. An optional entry must be checked for NULL
// first (t->native_handle != nullptr), as before.
//
// BackendCalls holds only the table pointer (borrowed; tables live for the
// process) and is as thread-safe as the entries it calls.
#ifndef ANYDEV_SRC_BACKEND_CALLS_H_
#define ANYDEV_SRC_BACKEND_CALLS_H_

#include <utility>

#include "anydev/backend.h"

namespace anydev::core {

class BackendCalls {
 public:
  explicit BackendCalls(const anydev_backend_table_t* table) : table_(table) {}

#define ANYDEV_BACKEND_CALL_(unused, need, name, params)                \
  template <class... Args>                                              \
  anydev_status_t name(Args&&... args) const {                          \
    return table_->name(table_->instance, std::forward<Args>(args)...); \
  }
  ANYDEV_BACKEND_ENTRIES(ANYDEV_BACKEND_CALL_, ~)
#undef ANYDEV_BACKEND_CALL_

 private:
  const anydev_backend_table_t* table_;
};

// The calls of `table`'s entries, each with the table's instance.
inline BackendCalls bk(const anydev_backend_table_t* table) { return BackendCalls(table); }

}  // namespace anydev::core

#endif  // ANYDEV_SRC_BACKEND_CALLS_H_
