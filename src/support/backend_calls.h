// SPDX-License-Identifier: Apache-2.0
// Calls into a backend's table with its instance: bk(t).copy(stream, ...) is
// t->copy(t->instance, stream, ...). One member per entry of the one entry
// list (ANYDEV_BACKEND_ENTRIES, include/anydev/backend_entries.h), inlined.
// An optional entry must be checked for NULL first (t->native_handle !=
// nullptr).
//
// What a backend returns is checked before the core sees it, out of line
// and only when the entry did not succeed (backend_entry_failed, status.h;
// the success path adds one load, of error_stamp(), before the call):
// ANYDEV_BK_DECLINED from a required entry, or a status anydev does not
// define, becomes ANYDEV_ERROR_INTERNAL with a message naming the backend,
// the entry and the value (it must never reach the application); a failure
// for which the backend set no message gets one naming the backend, the
// entry and the status, so that the last error never shows an earlier
// failure's text. An optional entry's DECLINED passes unchanged (the core
// falls back). A layer's table (src/layers/) is checked the same way by its
// caller, and a layer calling its inner table through bk() checks that call
// too: a message set there counts as set.
//
// BackendCalls holds only the table pointer (borrowed; tables live for the
// process) and is as thread-safe as the entries it calls.
#ifndef ANYDEV_SRC_SUPPORT_BACKEND_CALLS_H_
#define ANYDEV_SRC_SUPPORT_BACKEND_CALLS_H_

#include <cstdint>
#include <utility>

#include "anydev/backend.h"
#include "support/status.h"

namespace anydev::core {

#define ANYDEV_BACKEND_CALL_IS_REQUIRED_REQUIRED true
#define ANYDEV_BACKEND_CALL_IS_REQUIRED_OPTIONAL false

class BackendCalls {
 public:
  explicit BackendCalls(const anydev_backend_table_t* table) : table_(table) {}

#define ANYDEV_BACKEND_CALL_(unused, need, name, params)                                        \
  template <class... Args>                                                                      \
  anydev_status_t name(Args&&... args) const {                                                  \
    const std::uint64_t stamp = error_stamp();                                                  \
    const anydev_status_t status = table_->name(table_->instance, std::forward<Args>(args)...); \
    if (status == ANYDEV_SUCCESS) [[likely]]                                                    \
      return status;                                                                            \
    return backend_entry_failed(table_, #name, ANYDEV_BACKEND_CALL_IS_REQUIRED_##need, status,  \
                                stamp);                                                         \
  }
  ANYDEV_BACKEND_ENTRIES(ANYDEV_BACKEND_CALL_, ~)
#undef ANYDEV_BACKEND_CALL_

 private:
  const anydev_backend_table_t* table_;
};

#undef ANYDEV_BACKEND_CALL_IS_REQUIRED_REQUIRED
#undef ANYDEV_BACKEND_CALL_IS_REQUIRED_OPTIONAL

// The calls of `table`'s entries, each with the table's instance.
inline BackendCalls bk(const anydev_backend_table_t* table) { return BackendCalls(table); }

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_BACKEND_CALLS_H_
