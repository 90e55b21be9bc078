// SPDX-License-Identifier: Apache-2.0
// A log callback that calls back into anydev for every message: the
// registry, the log threshold, and a cpu context with a stream and a buffer
// (every core lock a call can take). Messages at or above the threshold the
// process started with are still written to stderr as anydev writes them,
// so tests that read stderr keep working. Thread-safe.
//
// Linked into test programs: with ANYDEV_TEST_REENTRANT_LOG=1 it is installed
// before the first test at threshold trace (so that every message the
// program's tests produce re-enters), and removed after the last test; a
// deadlock shows as the ctest entry's timeout.
#ifndef ANYDEV_TESTS_SUPPORT_REENTRANT_LOG_H_
#define ANYDEV_TESTS_SUPPORT_REENTRANT_LOG_H_

#include <cstdint>

#include "anydev/anydev.h"

namespace anydev::test {

// The callback; user_data is unused.
void reentering_log_callback(anydev_log_severity_t severity, const char* message, void* user_data);

// How many messages it has handled so far.
std::uint64_t reentered_messages();

}  // namespace anydev::test

#endif  // ANYDEV_TESTS_SUPPORT_REENTRANT_LOG_H_
